#!/usr/bin/env node
/**
 * pi_bench.mjs FILE [--leaf ID] [--runs N] [--append N] [--keep-recent-tokens N]
 *
 * Times pi 0.84.2 itself on one session file, as the baseline that pi-lsp's benchmarks report
 * a ratio against. Run it with the Node 22 that tests/reference/install.sh installs:
 *
 *   tests/reference/node_modules/.bin/node bench/pi_bench.mjs SESSION.jsonl
 *
 * Measures (milliseconds; each timed step is repeated --runs times after one warm-up run, and
 * the median and minimum are reported):
 *   - import:            loading pi's session-manager and compaction modules (once, cold)
 *   - open:              SessionManager.open on a temporary copy (parse, migrate, index)
 *   - buildContext:      buildSessionContext(entries, leaf)
 *   - prepareCompaction: prepareCompaction(getBranch(leaf), settings)
 *   - append:            N appendMessage calls on a fresh persisted session in a temp dir
 *                        (pi appends one line per entry with appendFileSync), reported as
 *                        entries/second; the messages are the file's own, cycled
 * and the peak resident set size: the largest process.memoryUsage().rss seen between steps and
 * process.resourceUsage().maxRSS (kilobytes, as the OS reports it).
 * FILE is never modified. Prints one JSON object on stdout.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PI_PACKAGE_DIR =
	process.env.PI_REFERENCE_PI_DIR ??
	fileURLToPath(new URL("../tests/reference/node_modules/@earendil-works/pi-coding-agent/", import.meta.url));

let peakRss = process.memoryUsage().rss;
function sampleRss() {
	peakRss = Math.max(peakRss, process.memoryUsage().rss);
}

function fail(message) {
	process.stderr.write(`pi_bench: ${message}\n`);
	process.exit(1);
}

function parseArgs(argv) {
	const options = { runs: 7, append: 2000, keepRecentTokens: undefined, leaf: undefined, file: undefined };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const value = () => {
			const next = argv[++i];
			if (next === undefined) fail(`${arg} needs a value`);
			return next;
		};
		const integer = () => {
			const text = value();
			if (!/^\d+$/.test(text)) fail(`${arg} must be a non-negative integer, got '${text}'`);
			return Number(text);
		};
		if (arg === "--leaf") options.leaf = value();
		else if (arg === "--runs") options.runs = Math.max(1, integer());
		else if (arg === "--append") options.append = integer();
		else if (arg === "--keep-recent-tokens") options.keepRecentTokens = integer();
		else if (arg.startsWith("--")) fail(`unknown option ${arg}`);
		else if (options.file === undefined) options.file = arg;
		else fail(`unexpected argument ${arg}`);
	}
	if (!options.file) fail("usage: pi_bench.mjs FILE [--leaf ID] [--runs N] [--append N] [--keep-recent-tokens N]");
	if (!existsSync(options.file)) fail(`no such file: ${options.file}`);
	return options;
}

function median(values) {
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function round(ms) {
	return Math.round(ms * 1000) / 1000;
}

/** Run fn once to warm up, then `runs` timed times; returns {medianMs, minMs, runsMs, result}. */
function timeRepeated(runs, fn) {
	let result = fn();
	sampleRss();
	const times = [];
	for (let i = 0; i < runs; i++) {
		const start = performance.now();
		result = fn();
		times.push(performance.now() - start);
		sampleRss();
	}
	return { medianMs: round(median(times)), minMs: round(Math.min(...times)), runsMs: times.map(round), result };
}

async function main() {
	const options = parseArgs(process.argv.slice(2));
	const scratch = mkdtempSync(join(tmpdir(), "pi-bench-"));
	try {
		const importStart = performance.now();
		const { SessionManager, buildSessionContext } = await import(
			pathToFileURL(join(PI_PACKAGE_DIR, "dist/core/session-manager.js")).href
		);
		const { prepareCompaction, DEFAULT_COMPACTION_SETTINGS } = await import(
			pathToFileURL(join(PI_PACKAGE_DIR, "dist/core/compaction/index.js")).href
		);
		const importMs = performance.now() - importStart;
		sampleRss();

		// open: a fresh copy each run (so a migration rewrite never touches FILE or a later run);
		// only SessionManager.open itself is timed.
		let copyIndex = 0;
		const openOnce = () => {
			const copy = join(scratch, `${copyIndex++}-${basename(options.file)}`);
			copyFileSync(options.file, copy);
			const start = performance.now();
			const opened = SessionManager.open(copy, scratch);
			const elapsed = performance.now() - start;
			rmSync(copy, { force: true });
			sampleRss();
			return { opened, elapsed };
		};
		let manager = openOnce().opened; // warm-up
		const openTimes = [];
		for (let i = 0; i < options.runs; i++) {
			const { opened, elapsed } = openOnce();
			openTimes.push(elapsed);
			manager = opened;
		}
		const entries = manager.getEntries();
		const leafId = options.leaf ?? manager.getLeafId();
		if (options.leaf !== undefined && !manager.getEntry(options.leaf)) fail(`no entry with id '${options.leaf}'`);

		const buildContext = timeRepeated(options.runs, () => buildSessionContext(entries, leafId));
		const branch = leafId ? manager.getBranch(leafId) : [];
		const settings = {
			...DEFAULT_COMPACTION_SETTINGS,
			...(options.keepRecentTokens !== undefined ? { keepRecentTokens: options.keepRecentTokens } : {}),
		};
		const compaction = timeRepeated(options.runs, () => prepareCompaction(branch, settings));

		// append: the file's own messages, cycled, into a fresh persisted session.
		const messages = entries.filter((e) => e.type === "message").map((e) => e.message);
		let append = null;
		if (options.append > 0 && messages.length > 0) {
			const appendDir = join(scratch, "append");
			const target = SessionManager.create("/bench/cwd", appendDir);
			// pi writes nothing before the first assistant message: start with one so every append hits the disk.
			const firstAssistant = messages.find((m) => m.role === "assistant");
			if (firstAssistant) target.appendMessage(firstAssistant);
			const start = performance.now();
			for (let i = 0; i < options.append; i++) target.appendMessage(messages[i % messages.length]);
			const elapsed = performance.now() - start;
			sampleRss();
			append = {
				entries: options.append,
				ms: round(elapsed),
				entriesPerSecond: Math.round(options.append / (elapsed / 1000)),
				persisted: existsSync(target.getSessionFile()),
			};
		}

		const result = {
			pi: "0.84.2",
			node: process.version,
			file: options.file,
			entries: entries.length,
			leafId,
			branchLength: branch.length,
			contextMessages: buildContext.result.messages.length,
			compactionPlanned: compaction.result !== undefined,
			runs: options.runs,
			importMs: round(importMs),
			openMs: { median: round(median(openTimes)), min: round(Math.min(...openTimes)), runs: openTimes.map(round) },
			buildContextMs: { median: buildContext.medianMs, min: buildContext.minMs, runs: buildContext.runsMs },
			prepareCompactionMs: { median: compaction.medianMs, min: compaction.minMs, runs: compaction.runsMs },
			append,
			peakRssBytes: peakRss,
			maxRssKb: process.resourceUsage().maxRSS,
		};
		process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}

await main();
