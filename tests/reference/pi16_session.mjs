#!/usr/bin/env node
/**
 * pi16_session.mjs FILE OPS.json|- — continue a session file with pi 1.6's own SessionManager.
 *
 * The "pi 1.6 takes a turn" side of pi-lsp's round-trip tests (tests/conformance/
 * test_pi16_round_trip.py): pi 1.6.0 (tests/reference/node_modules/pi16) opens FILE, or creates
 * it when it does not exist, and appends what OPS asks for, exactly as pi appends it. OPS is a
 * JSON array of operations, applied in order:
 *
 *   {"op": "user", "text"}                      a user message
 *   {"op": "assistant", "text", "calls"?}        an answer; calls: [[name, arguments], …] become
 *                                               tool calls, each answered by a tool result
 *   {"op": "system", "content", "sections"?, "toolsAdded"?, "toolsRemoved"?}
 *   {"op": "contextEdit", "target", "replacement"}   replacement null leaves the target out
 *   {"op": "usage", "kind", "note"?}
 *   {"op": "compact", "keepRecentTokens", "summary"}  plans with pi 1.6's prepareCompaction and
 *                                               appends the compaction it plans (no model call)
 *   {"op": "compactKeepingNothing", "summary"}
 *   {"op": "branch", "target"}                  moves the leaf
 *   {"op": "branchWithSummary", "target", "summary"}
 *   {"op": "label", "target", "label"}
 *
 * A "target" is an entry id, or "$N" for the N-th entry this run appended (negative N counts
 * from the end). Prints {"file", "leafId", "appended": [ids]} as one JSON line.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PI16_DIR = process.env.PI16_REFERENCE_PI_DIR ?? fileURLToPath(new URL("./node_modules/pi16/", import.meta.url));
const importPi = (relativePath) => import(pathToFileURL(join(PI16_DIR, relativePath)).href);
const { SessionManager } = await importPi("dist/core/session-manager.js");
const { prepareCompaction, DEFAULT_COMPACTION_SETTINGS } = await importPi("dist/core/compaction/index.js");

const MODEL = { api: "openai-completions", provider: "openai", model: "scripted" };
let callCounter = 0;

function usage(input, output) {
	return { input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

function open(file) {
	// A new file gets the cwd of the corpus sessions; an existing one keeps its header's.
	return existsSync(file)
		? SessionManager.open(file, dirname(file))
		: SessionManager.open(file, dirname(file), "/home/user/projects/demo-app");
}

function apply(manager, op, appended) {
	const target = (value) => {
		if (typeof value === "string" && value.startsWith("$")) {
			const index = Number(value.slice(1));
			return appended[index < 0 ? appended.length + index : index];
		}
		return value;
	};
	const now = Date.now();
	switch (op.op) {
		case "user":
			return [manager.appendMessage({ role: "user", content: [{ type: "text", text: op.text }], timestamp: now })];
		case "assistant": {
			const calls = (op.calls ?? []).map(([name, args]) => ({ type: "toolCall", id: `pi16_call_${++callCounter}`, name, arguments: args }));
			const ids = [
				manager.appendMessage({
					role: "assistant",
					content: [{ type: "text", text: op.text }, ...calls],
					...MODEL,
					usage: usage(1000 + 10 * callCounter, 20),
					stopReason: calls.length ? "toolUse" : "stop",
					timestamp: now,
				}),
			];
			for (const call of calls) {
				ids.push(manager.appendMessage({ role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text: `result of ${call.name}` }], isError: false, timestamp: now }));
			}
			return ids;
		}
		case "system": {
			const { op: _, ...fields } = op;
			return [manager.appendMessage({ role: "system", ...fields, timestamp: now })];
		}
		case "contextEdit":
			return [manager.appendContextEdit(target(op.target), op.replacement)];
		case "usage":
			return [manager.appendUsage(op.kind, MODEL.provider, MODEL.model, usage(0, 0), op.note).id];
		case "compact": {
			const settings = { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: op.keepRecentTokens };
			const plan = prepareCompaction(manager.getBranch(), settings);
			if (!plan) throw new Error("pi 1.6 found nothing to compact");
			return [manager.appendCompaction(op.summary, plan.firstKeptEntryId, plan.tokensBefore, { readFiles: [], modifiedFiles: [] })];
		}
		case "compactKeepingNothing":
			return [manager.appendCompaction(op.summary, null, 1000)];
		case "branch":
			manager.branch(target(op.target));
			return [];
		case "branchWithSummary":
			return [manager.branchWithSummary(target(op.target), op.summary)];
		case "label":
			return [manager.appendLabelChange(target(op.target), op.label)];
		default:
			throw new Error(`unknown op ${JSON.stringify(op.op)}`);
	}
}

function main([file, opsSource]) {
	if (!file || !opsSource) throw new Error("usage: pi16_session.mjs FILE OPS.json|-");
	const path = resolve(file);
	const ops = JSON.parse(readFileSync(opsSource === "-" ? 0 : opsSource, "utf8"));
	const manager = open(path);
	const appended = [];
	for (const op of ops) appended.push(...apply(manager, op, appended));
	if (manager.getSessionFile() !== path) throw new Error(`pi wrote ${basename(manager.getSessionFile())}, not ${basename(path)}`);
	process.stdout.write(`${JSON.stringify({ file: path, leafId: manager.getLeafId(), appended })}\n`);
}

try {
	main(process.argv.slice(2));
} catch (error) {
	process.stderr.write(`pi16_session: ${error instanceof Error ? error.message : String(error)}\n`);
	process.exitCode = 1;
}
