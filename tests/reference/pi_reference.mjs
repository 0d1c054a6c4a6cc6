#!/usr/bin/env node
/**
 * pi_reference.mjs — answer session questions with pi 0.84.2's OWN functions.
 *
 * This is the reference side of pi-lsp's conformance tests: every answer is computed by
 * the dist/ code of the pinned npm package @earendil-works/pi-coding-agent@0.84.2
 * (installed next to this script by install.sh), never by re-implemented logic. It prints
 * one JSON document on stdout, with the same contract as `python -m pi_lsp session …`:
 *
 *   context FILE [--leaf ID]
 *       {"messages": [...], "thinkingLevel": "...", "model": {"provider","modelId"} | null}
 *       = buildSessionContext(entries, leafId). Default leaf = SessionManager's leaf after
 *       load (the last entry in file order).
 *   plan-compaction FILE [--leaf ID] [--keep-recent-tokens N] [--reserve-tokens N]
 *       null when prepareCompaction(getBranch(leaf), settings) returns undefined, else
 *       {"firstKeptEntryId","isSplitTurn","tokensBefore","previousSummary","messagesToSummarize",
 *        "turnPrefixMessages","readFiles","modifiedFiles","serialized"} where the file lists are
 *       computeFileLists(preparation.fileOps) and serialized =
 *       serializeConversation(convertToLlm(messagesToSummarize)). Defaults come from pi's
 *       DEFAULT_COMPACTION_SETTINGS (keepRecentTokens 20000, reserveTokens 16384).
 *   plan-branch-summary FILE --from ID --to ID [--token-budget N]
 *       {"commonAncestorId","entryIds","messages","totalTokens","readFiles","modifiedFiles"} from
 *       collectEntriesForBranchSummary(session, from, to) then prepareBranchEntries(entries, budget).
 *       Default budget 128000 - 16384 (pi's default context window minus branchSummary.reserveTokens).
 *   tree FILE
 *       {"leafId","name","entries":[{"id","parentId","type"}...file order],"labels":{targetId: label},
 *        "roots":[ids],"children":{id:[childIds in getTree() order]}} (entries without children are
 *       left out of "children").
 *   batch QUERIES.json|-
 *       QUERIES is a JSON array of argument lists, each one of the commands above, e.g.
 *       [["context","a.jsonl","--leaf","1a2b3c4d"],["tree","a.jsonl"]]. Prints a JSON array with
 *       one {"ok":true,"result":...} or {"ok":false,"error":"..."} per query. Each file is loaded
 *       once per batch (so the random ids that a v1 migration assigns agree between queries).
 *
 * The session file is never modified: pi's SessionManager opens a temporary copy (its
 * migration/repair writes land there) and the copy is deleted right after loading.
 * Bad input (unknown command/option, missing file, unknown entry id, not a pi session):
 * exit status 1 and one line on stderr.
 *
 * The pi package directory can be overridden with PI_REFERENCE_PI_DIR (for trying another
 * install); by default it is ./node_modules/@earendil-works/pi-coding-agent beside this file.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PI_PACKAGE_DIR =
	process.env.PI_REFERENCE_PI_DIR ??
	fileURLToPath(new URL("./node_modules/@earendil-works/pi-coding-agent/", import.meta.url));

class UsageError extends Error {}

async function importPiModule(relativePath) {
	const modulePath = join(PI_PACKAGE_DIR, relativePath);
	if (!existsSync(modulePath)) {
		throw new UsageError(
			`pi is not installed at ${PI_PACKAGE_DIR} (run tests/reference/install.sh): missing ${relativePath}`,
		);
	}
	return import(pathToFileURL(modulePath).href);
}

let pi; // filled by loadPi()

async function loadPi() {
	const sessionManagerModule = await importPiModule("dist/core/session-manager.js");
	const compactionModule = await importPiModule("dist/core/compaction/index.js");
	const messagesModule = await importPiModule("dist/core/messages.js");
	pi = {
		SessionManager: sessionManagerModule.SessionManager,
		buildSessionContext: sessionManagerModule.buildSessionContext,
		prepareCompaction: compactionModule.prepareCompaction,
		DEFAULT_COMPACTION_SETTINGS: compactionModule.DEFAULT_COMPACTION_SETTINGS,
		computeFileLists: compactionModule.computeFileLists,
		serializeConversation: compactionModule.serializeConversation,
		collectEntriesForBranchSummary: compactionModule.collectEntriesForBranchSummary,
		prepareBranchEntries: compactionModule.prepareBranchEntries,
		convertToLlm: messagesModule.convertToLlm,
	};
}

// pi's interactive default: model.contextWindow || 128000, minus branchSummary.reserveTokens (16384).
const DEFAULT_BRANCH_SUMMARY_TOKEN_BUDGET = 128000 - 16384;

// ---------------------------------------------------------------------------------------------
// Argument parsing
// ---------------------------------------------------------------------------------------------

const COMMAND_OPTIONS = {
	context: { leaf: "id" },
	"plan-compaction": { leaf: "id", "keep-recent-tokens": "int", "reserve-tokens": "int" },
	"plan-branch-summary": { from: "id", to: "id", "token-budget": "int" },
	tree: {},
};

function parseQuery(argv) {
	if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string")) {
		throw new UsageError("a query must be a non-empty list of strings");
	}
	const [command, ...rest] = argv;
	const allowed = COMMAND_OPTIONS[command];
	if (!allowed) {
		throw new UsageError(`unknown command '${command}' (expected one of: ${Object.keys(COMMAND_OPTIONS).join(", ")}, batch)`);
	}
	const positionals = [];
	const options = {};
	for (let i = 0; i < rest.length; i++) {
		const arg = rest[i];
		if (!arg.startsWith("--")) {
			positionals.push(arg);
			continue;
		}
		let name = arg.slice(2);
		let value;
		const eq = name.indexOf("=");
		if (eq >= 0) {
			value = name.slice(eq + 1);
			name = name.slice(0, eq);
		} else {
			value = rest[++i];
		}
		const kind = allowed[name];
		if (!kind) throw new UsageError(`${command}: unknown option --${name}`);
		if (value === undefined) throw new UsageError(`${command}: option --${name} needs a value`);
		if (kind === "int") {
			if (!/^\d+$/.test(value)) throw new UsageError(`${command}: --${name} must be a non-negative integer, got '${value}'`);
			options[name] = Number(value);
		} else {
			options[name] = value;
		}
	}
	if (positionals.length !== 1) {
		throw new UsageError(`${command}: expected exactly one session FILE, got ${positionals.length} positional arguments`);
	}
	return { command, file: positionals[0], options };
}

// ---------------------------------------------------------------------------------------------
// Loading a session through pi's SessionManager, on a throw-away copy
// ---------------------------------------------------------------------------------------------

const loadedSessions = new Map();

function loadSession(file) {
	const path = resolve(file);
	const cached = loadedSessions.get(path);
	if (cached) return cached;
	if (!existsSync(path)) throw new UsageError(`no such session file: ${file}`);
	if (!statSync(path).isFile()) throw new UsageError(`not a file: ${file}`);
	const scratchDir = mkdtempSync(join(tmpdir(), "pi-reference-"));
	const copy = join(scratchDir, basename(path));
	let manager;
	try {
		copyFileSync(path, copy);
		// sessionDir = scratch dir, so nothing outside it is ever created or written.
		manager = pi.SessionManager.open(copy, scratchDir);
	} catch (error) {
		throw new UsageError(`cannot load ${file}: ${oneLine(error).replaceAll(copy, file)}`);
	} finally {
		rmSync(scratchDir, { recursive: true, force: true });
	}
	loadedSessions.set(path, manager);
	return manager;
}

function requireEntry(manager, id, optionName) {
	if (!manager.getEntry(id)) throw new UsageError(`--${optionName}: no entry with id '${id}'`);
	return id;
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

function contextCommand(manager, options) {
	const leafId = options.leaf !== undefined ? requireEntry(manager, options.leaf, "leaf") : manager.getLeafId();
	const context = pi.buildSessionContext(manager.getEntries(), leafId);
	return { messages: context.messages, thinkingLevel: context.thinkingLevel, model: context.model ?? null };
}

function planCompactionCommand(manager, options) {
	const leafId = options.leaf !== undefined ? requireEntry(manager, options.leaf, "leaf") : manager.getLeafId();
	const branchEntries = leafId ? manager.getBranch(leafId) : [];
	const settings = {
		...pi.DEFAULT_COMPACTION_SETTINGS,
		...(options["keep-recent-tokens"] !== undefined ? { keepRecentTokens: options["keep-recent-tokens"] } : {}),
		...(options["reserve-tokens"] !== undefined ? { reserveTokens: options["reserve-tokens"] } : {}),
	};
	const preparation = pi.prepareCompaction(branchEntries, settings);
	if (!preparation) return null;
	const { readFiles, modifiedFiles } = pi.computeFileLists(preparation.fileOps);
	return {
		firstKeptEntryId: preparation.firstKeptEntryId,
		isSplitTurn: preparation.isSplitTurn,
		tokensBefore: preparation.tokensBefore,
		previousSummary: preparation.previousSummary ?? null,
		messagesToSummarize: preparation.messagesToSummarize,
		turnPrefixMessages: preparation.turnPrefixMessages,
		readFiles,
		modifiedFiles,
		serialized: pi.serializeConversation(pi.convertToLlm(preparation.messagesToSummarize)),
	};
}

function planBranchSummaryCommand(manager, options) {
	if (options.from === undefined) throw new UsageError("plan-branch-summary: --from ID is required");
	if (options.to === undefined) throw new UsageError("plan-branch-summary: --to ID is required");
	const fromId = requireEntry(manager, options.from, "from");
	const toId = requireEntry(manager, options.to, "to");
	const budget = options["token-budget"] ?? DEFAULT_BRANCH_SUMMARY_TOKEN_BUDGET;
	// collectEntriesForBranchSummary returns {entries, commonAncestorId};
	// prepareBranchEntries returns {messages, fileOps, totalTokens}.
	const collected = pi.collectEntriesForBranchSummary(manager, fromId, toId);
	const prepared = pi.prepareBranchEntries(collected.entries, budget);
	const { readFiles, modifiedFiles } = pi.computeFileLists(prepared.fileOps);
	return {
		commonAncestorId: collected.commonAncestorId ?? null,
		entryIds: collected.entries.map((entry) => entry.id),
		messages: prepared.messages,
		totalTokens: prepared.totalTokens,
		readFiles,
		modifiedFiles,
	};
}

function treeCommand(manager) {
	const entries = manager.getEntries();
	const labels = {};
	for (const entry of entries) {
		const label = manager.getLabel(entry.id);
		if (label !== undefined) labels[entry.id] = label;
	}
	const roots = [];
	const children = {};
	const stack = [];
	for (const root of manager.getTree()) {
		roots.push(root.entry.id);
		stack.push(root);
	}
	while (stack.length > 0) {
		const node = stack.pop();
		if (node.children.length > 0) children[node.entry.id] = node.children.map((child) => child.entry.id);
		stack.push(...node.children);
	}
	return {
		leafId: manager.getLeafId(),
		name: manager.getSessionName() ?? null,
		entries: entries.map((entry) => ({ id: entry.id, parentId: entry.parentId ?? null, type: entry.type })),
		labels,
		roots,
		children,
	};
}

const COMMANDS = {
	context: contextCommand,
	"plan-compaction": planCompactionCommand,
	"plan-branch-summary": planBranchSummaryCommand,
	tree: treeCommand,
};

function runQuery(argv) {
	const { command, file, options } = parseQuery(argv);
	const manager = loadSession(file);
	return COMMANDS[command](manager, options);
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

function oneLine(error) {
	const text = error instanceof Error ? error.message : String(error);
	return text.replace(/\s*\n\s*/g, " ").trim();
}

function readQueries(source) {
	let text;
	try {
		text = source === "-" ? readFileSync(0, "utf8") : readFileSync(source, "utf8");
	} catch (error) {
		throw new UsageError(`batch: cannot read ${source}: ${oneLine(error)}`);
	}
	let queries;
	try {
		queries = JSON.parse(text);
	} catch (error) {
		throw new UsageError(`batch: queries are not valid JSON: ${oneLine(error)}`);
	}
	if (!Array.isArray(queries)) throw new UsageError("batch: queries must be a JSON array of argument lists");
	return queries;
}

function writeJson(value) {
	process.stdout.write(`${JSON.stringify(value)}\n`);
}

async function main(argv) {
	if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h") {
		throw new UsageError(
			"usage: pi_reference.mjs (context|plan-compaction|plan-branch-summary|tree) FILE [options] | batch QUERIES.json|-",
		);
	}
	await loadPi();
	if (argv[0] === "batch") {
		if (argv.length !== 2) throw new UsageError("usage: pi_reference.mjs batch QUERIES.json|-");
		const results = readQueries(argv[1]).map((query) => {
			try {
				return { ok: true, result: runQuery(query) };
			} catch (error) {
				return { ok: false, error: oneLine(error) };
			}
		});
		writeJson(results);
		return;
	}
	writeJson(runQuery(argv));
}

try {
	await main(process.argv.slice(2));
} catch (error) {
	process.stderr.write(`pi_reference: ${oneLine(error)}\n`);
	process.exitCode = 1;
}
