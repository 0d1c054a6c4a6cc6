/**
 * corpus_support.mjs — what the session-corpus generators share: seeded randomness, the fake
 * clock and seeded ids that make pi's SessionManager reproducible, text and content generators,
 * and SessionWriter, a thin layer over pi's SessionManager.
 *
 * Import this module BEFORE importing pi (with `await import(...)`): it replaces `Date` and
 * node:crypto's `randomUUID` when it is evaluated, and pi must see the replacements.
 */
import { readdirSync, renameSync, rmSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

export const DEFAULT_SEED = 20260502;
export const SESSION_CWD = "/home/user/projects/demo-app";
export const KEEP_RECENT_TOKENS_QUERIES = [null, 2000, 500];
export const BRANCH_TOKEN_BUDGET_QUERIES = [null, 3000, 0]; // 0 = no limit in prepareBranchEntries

/** pi's modules used by SessionWriter, set by `loadPi`. */
export const piModules = {};

/** Import pi's SessionManager (and friends) from the package at `piPackageDir`. */
export async function loadPi(piPackageDir) {
	const importPiModule = (relativePath) => import(pathToFileURL(join(piPackageDir, relativePath)).href);
	Object.assign(piModules, await importPiModule("dist/core/session-manager.js"));
	Object.assign(piModules, await importPiModule("dist/core/compaction/index.js"));
	return piModules;
}

// ---------------------------------------------------------------------------------------------
// Seeded randomness
// ---------------------------------------------------------------------------------------------

/** mulberry32: small, fast, good enough for test data. */
function createRng(seed) {
	let state = seed >>> 0;
	const next = () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	return {
		next,
		int: (min, max) => min + Math.floor(next() * (max - min + 1)),
		chance: (p) => next() < p,
		pick: (items) => items[Math.floor(next() * items.length)],
		hex: (length) => {
			let out = "";
			for (let i = 0; i < length; i++) out += Math.floor(next() * 16).toString(16);
			return out;
		},
	};
}

export let rng = createRng(DEFAULT_SEED);

/** Start the random stream over from `seed` (the corpus is a function of the seed). */
export function reseed(seed) {
	rng = createRng(seed);
}

// ---------------------------------------------------------------------------------------------
// Fake clock and seeded ids (installed before pi is imported)
// ---------------------------------------------------------------------------------------------

export const RealDate = Date;
export const clock = {
	nowMs: RealDate.UTC(2026, 4, 2, 9, 14, 3, 127),
	/** Advance by a random human-ish pause; sometimes 0 so that entries share a millisecond. */
	tick(minMs = 0, maxMs = 4000) {
		this.nowMs += rng.chance(0.08) ? 0 : rng.int(minMs, maxMs);
		return this.nowMs;
	},
	set(ms) {
		this.nowMs = ms;
	},
};

class FakeDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) super(clock.nowMs);
		else super(...args);
	}
	static now() {
		return clock.nowMs;
	}
}
globalThis.Date = FakeDate;

export function seededUuid() {
	const h = rng.hex(32);
	return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
const require = createRequire(import.meta.url);
require("node:crypto").randomUUID = seededUuid;
syncBuiltinESMExports(); // pi's `import { randomUUID } from "crypto"` now sees the seeded one

// ---------------------------------------------------------------------------------------------
// Text and content generators
// ---------------------------------------------------------------------------------------------

export const ENGLISH_WORDS = (
	"the a to of and in for is on that with test file function module error fix refactor parser " +
	"session tree branch leaf token budget summary compaction context message tool result read write " +
	"edit bash path config value return import class method async await cache index build run check"
).split(" ");
const UNICODE_WORDS = [
	"café", "naïve", "Straße", "résumé", "日本語", "中文测试", "한국어", "Ελληνικά", "русский", "עברית",
	"العربية", "😀", "🎉", "👩‍💻", "🚀", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𠜎𠜱", "e\u0301", "Z\u0351\u0364a\u0358l", "∑∫√", "™",
];
// Characters that trip line splitting or escaping if a reader/writer is not careful.
const TRICKY_SNIPPETS = [
	"line\u2028separator", "para\u2029separator", "next\u0085line", "tab\there", "vt\u000bff\u000c",
	"esc\u001b[31mred\u001b[0m", "nul-ish \u0001\u001f", 'quote " and \\ backslash', "</summary> <summary>",
	"del\u007fchar", "bom\ufeffinside",
];

export function words(count, { unicode = 0, tricky = 0 } = {}) {
	const out = [];
	for (let i = 0; i < count; i++) {
		if (tricky > 0 && rng.chance(tricky)) out.push(rng.pick(TRICKY_SNIPPETS));
		else if (unicode > 0 && rng.chance(unicode)) out.push(rng.pick(UNICODE_WORDS));
		else out.push(rng.pick(ENGLISH_WORDS));
	}
	return out.join(" ");
}

export function sentence(options) {
	const text = words(rng.int(4, 14), options);
	return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

export function paragraph(sentences, options) {
	return Array.from({ length: sentences }, () => sentence(options)).join(" ");
}

/** Code-ish text of about `chars` UTF-16 code units (no lone surrogates: the corpus has none). */
export function codeText(chars, options = {}) {
	const lines = [];
	let length = 0;
	let n = 0;
	while (length < chars) {
		n++;
		const line = rng.chance(0.2)
			? `    # ${words(rng.int(3, 9), options)}`
			: `def ${rng.pick(ENGLISH_WORDS)}_${n}(x, y=${rng.int(0, 99)}):  return x * ${rng.int(1, 9)} + y`;
		lines.push(line);
		length += line.length + 1;
	}
	return sliceWithoutSplittingPairs(lines.join("\n"), chars);
}

/** text.slice(0, n), one code unit shorter when that would leave half a surrogate pair. */
function sliceWithoutSplittingPairs(text, n) {
	const code = text.charCodeAt(n - 1);
	return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

export const FILE_PATHS = [
	"src/app.py", "src/parser.py", "src/session/tree.py", "tests/test_app.py", "README.md",
	"/home/user/projects/demo-app/pyproject.toml", "docs/設計.md", "src/ünïcödé.py", "assets/logo 🚀.png",
	"src/a b/with space.ts", "lib/Zeta.ts", "lib/alpha.ts", "lib/_under.ts", "lib/Ärger.ts",
];

// A real 1x1 PNG.
const TINY_PNG_BASE64 =
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

export function imageBlock() {
	return { type: "image", data: TINY_PNG_BASE64, mimeType: "image/png" };
}

export function usage(input, output, { cacheRead = 0, cacheWrite = 0, totalTokens } = {}) {
	const total = totalTokens ?? input + output + cacheRead + cacheWrite;
	const cost = {
		input: input * 0.000003,
		output: output * 0.000015,
		cacheRead: cacheRead * 0.0000003,
		cacheWrite: cacheWrite * 0.00000375,
	};
	cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
	return { input, output, cacheRead, cacheWrite, totalTokens: total, cost };
}

export const MODELS = [
	{ api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" },
	{ api: "openai-responses", provider: "openai", model: "gpt-5" },
	{ api: "google-generative-ai", provider: "google", model: "gemini-2.5-pro" },
];


// ---------------------------------------------------------------------------------------------
// SessionWriter: a thin, readable layer over pi's SessionManager
// ---------------------------------------------------------------------------------------------

export class SessionWriter {
	constructor(name, description, outDir) {
		this.name = name;
		this.description = description;
		this.outDir = outDir;
		this.scratchDir = join(outDir, `.scratch-${name}`);
		rmSync(this.scratchDir, { recursive: true, force: true });
		this.manager = piModules.SessionManager.create(SESSION_CWD, this.scratchDir, { id: seededUuid() });
		this.model = MODELS[0];
		this.contextTokens = 3000; // grows with the conversation, feeds plausible usage numbers
		this.toolCallCounter = 0;
		this.leaves = [];
		this.branchPairs = [];
		this.textOptions = {};
	}

	get leafId() {
		return this.manager.getLeafId();
	}

	tick(minMs, maxMs) {
		clock.tick(minMs, maxMs);
	}

	message(message) {
		this.tick();
		return this.manager.appendMessage({ ...message, timestamp: clock.nowMs });
	}

	user(content) {
		this.contextTokens += Math.ceil(JSON.stringify(content).length / 4);
		return this.message({ role: "user", content });
	}

	userText(text) {
		return this.user(rng.chance(0.3) ? text : [{ type: "text", text }]);
	}

	/**
	 * Append an assistant message. blocks: array of content blocks (text/thinking/toolCall).
	 * Returns the entry id; tool calls are available through `lastToolCalls`.
	 */
	assistant(blocks, { stopReason, errorMessage, usageOverride, omitUsage = false } = {}) {
		const output = Math.ceil(JSON.stringify(blocks).length / 4);
		const message = {
			role: "assistant",
			content: blocks,
			api: this.model.api,
			provider: this.model.provider,
			model: this.model.model,
			usage: usageOverride ?? usage(this.contextTokens, output, { cacheRead: rng.chance(0.5) ? this.contextTokens - 500 : 0 }),
			stopReason: stopReason ?? (blocks.some((b) => b.type === "toolCall") ? "toolUse" : "stop"),
			...(errorMessage !== undefined ? { errorMessage } : {}),
		};
		if (omitUsage) delete message.usage;
		this.contextTokens += output;
		this.lastToolCalls = blocks.filter((b) => b.type === "toolCall");
		return this.message(message);
	}

	toolCall(name, args) {
		this.toolCallCounter++;
		return { type: "toolCall", id: `toolu_${String(this.toolCallCounter).padStart(4, "0")}_${rng.hex(6)}`, name, arguments: args };
	}

	toolResult(call, content, { isError = false, details } = {}) {
		const blocks = typeof content === "string" ? [{ type: "text", text: content }] : content;
		this.contextTokens += Math.ceil(JSON.stringify(blocks).length / 4);
		return this.message({
			role: "toolResult",
			toolCallId: call.id,
			toolName: call.name,
			content: blocks,
			...(details !== undefined ? { details } : {}),
			isError,
		});
	}

	bash({ command, output, exitCode = 0, cancelled = false, truncated = false, fullOutputPath, excludeFromContext }) {
		return this.message({
			role: "bashExecution",
			command,
			output,
			exitCode,
			cancelled,
			truncated,
			...(fullOutputPath !== undefined ? { fullOutputPath } : {}),
			...(excludeFromContext !== undefined ? { excludeFromContext } : {}),
		});
	}

	thinkingLevel(level) {
		this.tick();
		return this.manager.appendThinkingLevelChange(level);
	}

	modelChange(model) {
		this.tick();
		this.model = model;
		return this.manager.appendModelChange(model.provider, model.model);
	}

	compaction(summary, firstKeptEntryId, tokensBefore, details, fromHook) {
		this.tick();
		return this.manager.appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook);
	}

	customMessage(customType, content, display, details) {
		this.tick();
		return this.manager.appendCustomMessageEntry(customType, content, display, details);
	}

	custom(customType, data) {
		this.tick();
		return this.manager.appendCustomEntry(customType, data);
	}

	label(targetId, label) {
		this.tick();
		return this.manager.appendLabelChange(targetId, label);
	}

	sessionName(name) {
		this.tick();
		return this.manager.appendSessionInfo(name);
	}

	branch(fromId) {
		this.manager.branch(fromId);
	}

	branchWithSummary(targetId, summary, details, fromHook) {
		this.tick();
		return this.manager.branchWithSummary(targetId, summary, details, fromHook);
	}

	resetLeaf() {
		this.manager.resetLeaf();
	}

	/**
	 * One agentic turn: a user prompt, `steps` assistant messages with 1-3 tool calls each
	 * (each followed by its tool results), then a final text answer.
	 * resultChars picks the size of each tool result.
	 */
	toolTurn({ steps, resultChars = () => rng.int(100, 2500), prompt, finalText = true, thinking = 0.5, images = 0 }) {
		const ids = { user: this.userText(prompt ?? paragraph(rng.int(1, 3), this.textOptions)), steps: [] };
		for (let step = 0; step < steps; step++) {
			const blocks = [];
			if (rng.chance(thinking)) blocks.push({ type: "thinking", thinking: paragraph(rng.int(1, 3), this.textOptions), thinkingSignature: `sig_${rng.hex(16)}` });
			if (rng.chance(0.4)) blocks.push({ type: "text", text: sentence(this.textOptions) });
			const callCount = rng.chance(0.25) ? rng.int(2, 3) : 1;
			for (let c = 0; c < callCount; c++) blocks.push(this.randomToolCall());
			const assistantId = this.assistant(blocks);
			const resultIds = [];
			for (const call of this.lastToolCalls) {
				const content = [{ type: "text", text: this.toolOutputFor(call, resultChars()) }];
				if (images > 0 && rng.chance(images)) content.push(imageBlock());
				resultIds.push(this.toolResult(call, content, { isError: rng.chance(0.07), details: rng.chance(0.3) ? { durationMs: rng.int(1, 900) } : undefined }));
			}
			ids.steps.push({ assistant: assistantId, results: resultIds });
		}
		if (finalText) {
			const blocks = [];
			if (rng.chance(thinking)) blocks.push({ type: "thinking", thinking: paragraph(1, this.textOptions) });
			blocks.push({ type: "text", text: paragraph(rng.int(1, 4), this.textOptions) });
			ids.final = this.assistant(blocks);
		}
		return ids;
	}

	randomToolCall() {
		const path = rng.pick(FILE_PATHS);
		switch (rng.int(0, 6)) {
			case 0:
			case 1:
				return this.toolCall("read", rng.chance(0.3) ? { path, offset: rng.int(1, 200), limit: 100 } : { path });
			case 2:
				return this.toolCall("write", { path, content: codeText(rng.int(40, 400), this.textOptions) });
			case 3:
				return this.toolCall("edit", { path, oldText: words(3, this.textOptions), newText: words(4, this.textOptions) });
			case 4:
				return this.toolCall("bash", { command: rng.pick(["pytest -q", "ls -la", "git status", "make build", `grep -rn "${rng.pick(ENGLISH_WORDS)}" src`]), timeout: rng.int(10, 120) });
			case 5:
				return this.toolCall(rng.pick(["grep", "find", "ls"]), { pattern: rng.pick(ENGLISH_WORDS), path: rng.pick(["src", "tests", "."]) });
			default:
				// A path-carrying call with an empty path and one with a non-string path: not file ops.
				return rng.chance(0.5) ? this.toolCall("read", { path: "" }) : this.toolCall("edit", { path: 42, oldText: "a", newText: "b" });
		}
	}

	toolOutputFor(call, chars) {
		if (call.name === "bash") return `$ ${call.arguments.command}\n${codeText(chars, this.textOptions)}`;
		if (call.name === "write" || call.name === "edit") return `Successfully wrote ${rng.int(1, 400)} bytes to ${call.arguments.path}`;
		return codeText(chars, this.textOptions);
	}

	addLeaf(id) {
		if (!this.leaves.includes(id)) this.leaves.push(id);
	}

	addBranchPair(fromId, toId) {
		this.branchPairs.push([fromId, toId]);
	}

	/** Move the finished file to OUTDIR/<name>.jsonl and describe it for the manifest. */
	finish(extra = {}) {
		const files = readdirSync(this.scratchDir).filter((f) => f.endsWith(".jsonl"));
		if (files.length !== 1) throw new Error(`${this.name}: expected one session file, found ${files.length}`);
		const file = `${this.name}.jsonl`;
		renameSync(join(this.scratchDir, files[0]), join(this.outDir, file));
		rmSync(this.scratchDir, { recursive: true, force: true });
		return {
			file,
			description: this.description,
			leaves: [null, ...this.leaves],
			branchPairs: this.branchPairs,
			keepRecentTokens: KEEP_RECENT_TOKENS_QUERIES,
			branchTokenBudgets: BRANCH_TOKEN_BUDGET_QUERIES,
			idsAssignedOnLoad: false,
			...this.manifestFields(),
			...extra,
		};
	}

	/** Fields a generator adds to every session of its manifest (after the common ones). */
	manifestFields() {
		return {};
	}
}

export function pickSpread(items, count) {
	if (items.length <= count) return [...items];
	const picked = [];
	for (let i = 0; i < count; i++) picked.push(items[Math.floor(((i + 0.5) * items.length) / count)]);
	return picked;
}

export function jsonLine(value) {
	return `${JSON.stringify(value)}\n`;
}

export function isoAt(ms) {
	return new RealDate(ms).toISOString();
}

/** `OUTDIR [--seed N]` from the command line. */
export function parseArgs(argv, usage) {
	let outDir;
	let seed = DEFAULT_SEED;
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === "--seed") {
			seed = Number(argv[++i]);
			if (!Number.isInteger(seed)) throw new Error("--seed needs an integer");
		} else if (!outDir) {
			outDir = argv[i];
		} else {
			throw new Error(`unexpected argument: ${argv[i]}`);
		}
	}
	if (!outDir) throw new Error(usage);
	return { outDir: resolve(outDir), seed };
}
