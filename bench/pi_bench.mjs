#!/usr/bin/env node
/**
 * pi_bench.mjs FILE [--leaf ID] [--runs N] [--appends N] [--keep-recent-tokens N]
 *
 * Times pi 0.84.2 itself on one session file: the baseline that bench/session_bench.py
 * reports pi-lsp's ratio against. Run it with the Node 22 that tests/reference/install.sh
 * installs:
 *
 *   tests/reference/node_modules/.bin/node bench/pi_bench.mjs SESSION.jsonl
 *
 * Prints ONE line of JSON (milliseconds, rounded to 0.1 ms), with:
 *   importMs             loading pi's session-manager and compaction modules (cold)
 *   openMs               SessionManager.open on a temporary copy: parse, migrate, index (first, cold run)
 *   contextMs            buildSessionContext(entries, leaf) (first run)
 *   prepareCompactionMs  prepareCompaction(getBranch(leaf), settings) with pi's chars/4 estimate (first run)
 *   peakRssMb            process.resourceUsage().maxRSS after that single pass (the figure to
 *                        compare: nothing else has been allocated yet)
 *   openMsMedian, contextMsMedian, prepareCompactionMsMedian
 *                        medians over --runs further warm runs (default 5); a step is repeated
 *                        only while it is cheap (less than 3 s spent on its repeats so far)
 *   appendsPerSecond     N appendMessage calls (--appends, default 10000) on a fresh persisted
 *                        session in a temp dir (pi appends one line per entry with
 *                        appendFileSync, no fsync), cycling the same user/assistant/toolResult
 *                        messages as bench/measure_ours.py
 *   peakRssBytes, maxRssKb
 *                        the largest process.memoryUsage().rss seen between steps, and the OS's
 *                        maxRSS at the end of the whole run
 * FILE is never modified (pi's migration/repair writes land in the temporary copy).
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PI_PACKAGE_DIR =
	process.env.PI_REFERENCE_PI_DIR ??
	fileURLToPath(new URL("../tests/reference/node_modules/@earendil-works/pi-coding-agent/", import.meta.url));

const REPEAT_BUDGET_MS = 3000;

let peakRssBytes = process.memoryUsage().rss;
function sampleRss() {
	peakRssBytes = Math.max(peakRssBytes, process.memoryUsage().rss);
}

function fail(message) {
	process.stderr.write(`pi_bench: ${message}\n`);
	process.exit(1);
}

function parseArgs(argv) {
	const options = { runs: 5, appends: 10000, keepRecentTokens: undefined, leaf: undefined, file: undefined };
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
		else if (arg === "--runs") options.runs = integer();
		else if (arg === "--appends") options.appends = integer();
		else if (arg === "--keep-recent-tokens") options.keepRecentTokens = integer();
		else if (arg.startsWith("--")) fail(`unknown option ${arg}`);
		else if (options.file === undefined) options.file = arg;
		else fail(`unexpected argument ${arg}`);
	}
	if (!options.file) fail("usage: pi_bench.mjs FILE [--leaf ID] [--runs N] [--appends N] [--keep-recent-tokens N]");
	if (!existsSync(options.file)) fail(`no such file: ${options.file}`);
	return options;
}

function round(ms) {
	return Math.round(ms * 10) / 10;
}

function median(values) {
	if (values.length === 0) return null;
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return round(sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2);
}

function timed(fn) {
	const start = performance.now();
	const result = fn();
	return { ms: performance.now() - start, result };
}

/** Up to `runs` more timings of fn, stopping once REPEAT_BUDGET_MS has been spent. */
function warmTimings(runs, fn) {
	const times = [];
	let spent = 0;
	for (let i = 0; i < runs && spent < REPEAT_BUDGET_MS; i++) {
		const ms = fn();
		times.push(ms);
		spent += ms;
		sampleRss();
	}
	return times;
}

// The same three messages bench/measure_ours.py appends, so appendsPerSecond compares like with like.
const APPEND_CYCLE = [
	{ role: "user", content: [{ type: "text", text: "Please fix the failing test in tests/test_app.py" }], timestamp: 1 },
	{
		role: "assistant",
		content: [
			{ type: "text", text: "Reading the test." },
			{ type: "toolCall", id: "call_1", name: "read", arguments: { path: "tests/test_app.py" } },
		],
		api: "openai-completions",
		provider: "openai",
		model: "gpt-4o",
		usage: {
			input: 1200,
			output: 85,
			cacheRead: 0,
			cacheWrite: 0,
			totalTokens: 1285,
			cost: { input: 0.0036, output: 0.0013, cacheRead: 0, cacheWrite: 0, total: 0.0049 },
		},
		stopReason: "toolUse",
		timestamp: 2,
	},
	{
		role: "toolResult",
		toolCallId: "call_1",
		toolName: "read",
		content: [{ type: "text", text: "def test_add():\n    assert add(1, 2) == 3\n".repeat(5) }],
		isError: false,
		timestamp: 3,
	},
];

async function main() {
	const options = parseArgs(process.argv.slice(2));
	const scratch = mkdtempSync(join(tmpdir(), "pi-bench-"));
	try {
		const importStart = performance.now();
		const [{ SessionManager, buildSessionContext }, { prepareCompaction, DEFAULT_COMPACTION_SETTINGS }] =
			await Promise.all([
				import(pathToFileURL(join(PI_PACKAGE_DIR, "dist/core/session-manager.js")).href),
				import(pathToFileURL(join(PI_PACKAGE_DIR, "dist/core/compaction/index.js")).href),
			]);
		const importMs = performance.now() - importStart;
		sampleRss();

		// A fresh copy for every open, so a migration rewrite never touches FILE or a later run;
		// only SessionManager.open itself is timed.
		let copyIndex = 0;
		const openOnce = () => {
			const copy = join(scratch, `${copyIndex++}-${basename(options.file)}`);
			copyFileSync(options.file, copy);
			const opened = timed(() => SessionManager.open(copy, scratch));
			rmSync(copy, { force: true });
			return opened;
		};

		// One cold pass: open, context, compaction plan.
		const open = openOnce();
		const manager = open.result;
		sampleRss();
		const entries = manager.getEntries();
		if (options.leaf !== undefined && !manager.getEntry(options.leaf)) fail(`no entry with id '${options.leaf}'`);
		const leafId = options.leaf ?? manager.getLeafId();
		const context = timed(() => buildSessionContext(entries, leafId));
		sampleRss();
		const branch = leafId ? manager.getBranch(leafId) : [];
		const settings = {
			...DEFAULT_COMPACTION_SETTINGS,
			...(options.keepRecentTokens !== undefined ? { keepRecentTokens: options.keepRecentTokens } : {}),
		};
		const compaction = timed(() => prepareCompaction(branch, settings));
		sampleRss();
		const peakRssMbAfterOnePass = process.resourceUsage().maxRSS / 1024;

		// Warm repeats, where cheap.
		const openWarm = warmTimings(options.runs, () => openOnce().ms);
		const contextWarm = warmTimings(options.runs, () => timed(() => buildSessionContext(entries, leafId)).ms);
		const compactionWarm = warmTimings(options.runs, () => timed(() => prepareCompaction(branch, settings)).ms);

		// Appends to a fresh persisted session.
		let appendsPerSecond = null;
		if (options.appends > 0) {
			const target = SessionManager.create("/bench/cwd", join(scratch, "appends"));
			const appended = timed(() => {
				for (let i = 0; i < options.appends; i++) target.appendMessage(APPEND_CYCLE[i % APPEND_CYCLE.length]);
			});
			sampleRss();
			if (!existsSync(target.getSessionFile())) fail("pi did not write the appended session");
			appendsPerSecond = Math.round(options.appends / (appended.ms / 1000));
		}

		const result = {
			pi: "0.84.2",
			node: process.version,
			entries: entries.length,
			leafId,
			branchLength: branch.length,
			contextMessages: context.result.messages.length,
			compactionPlanned: compaction.result !== undefined,
			importMs: round(importMs),
			openMs: round(open.ms),
			contextMs: round(context.ms),
			prepareCompactionMs: round(compaction.ms),
			peakRssMb: round(peakRssMbAfterOnePass),
			openMsMedian: median(openWarm),
			contextMsMedian: median(contextWarm),
			prepareCompactionMsMedian: median(compactionWarm),
			warmRuns: { open: openWarm.length, context: contextWarm.length, prepareCompaction: compactionWarm.length },
			appends: options.appends,
			appendsPerSecond,
			peakRssBytes,
			maxRssKb: process.resourceUsage().maxRSS,
		};
		process.stdout.write(`${JSON.stringify(result)}\n`);
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}

await main();
