#!/usr/bin/env node
/**
 * generate_sessions_16.mjs OUTDIR [--seed N] — a reproducible corpus of session files written by
 * pi 1.6.0's own SessionManager, with every entry kind pi 1.x added to the v3 format.
 *
 * It feeds pi-lsp's pi 1.6 conformance tests (tests/conformance/test_against_pi16.py): pi-lsp's
 * context must equal pi 1.6's at every entry of every file. The scenarios cover context edits
 * (omit; replace user, assistant, tool-result and custom-message content; several edits of one
 * target; edits left behind on another branch; edits of entries a compaction summarized),
 * `usage` entries, system-role messages (a full prompt with sections and tools, then patches),
 * compactions that keep entries and compactions that keep nothing (both with the systemMessage
 * snapshot pi 1.6 takes), branches, branch summaries and labels. One hand-written file holds
 * shapes pi 1.6 reads but its API refuses to write (edits of compactions, summaries, shell
 * commands and system messages; odd replacements; an edit before its target; unknown kinds).
 *
 * Reproducibility as in generate_sessions.mjs (corpus_support.mjs: seeded content, fake clock,
 * seeded entry ids). The manifest has the same shape, with `leaves` listing every entry of the
 * file (and null, pi's default leaf).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
	BRANCH_TOKEN_BUDGET_QUERIES, clock, imageBlock, jsonLine, KEEP_RECENT_TOKENS_QUERIES, loadPi, MODELS, paragraph,
	parseArgs, reseed, rng, SESSION_CWD, SessionWriter, sentence, usage,
} from "./corpus_support.mjs";

const PI_PACKAGE_DIR =
	process.env.PI16_REFERENCE_PI_DIR ?? fileURLToPath(new URL("./node_modules/pi16/", import.meta.url));
await loadPi(PI_PACKAGE_DIR);

const TOOLS = {
	read: { name: "read", description: "Read a file.", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
	bash: { name: "bash", description: "Run a shell command.", parameters: { type: "object", properties: { command: { type: "string" }, timeout: { type: "number" } }, required: ["command"] } },
	edit: { name: "edit", description: "Replace text in a file.", parameters: { type: "object", properties: { path: { type: "string" }, oldText: { type: "string" }, newText: { type: "string" } } } },
	write: { name: "write", description: "Write a file.", parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } } } },
};

/** SessionWriter for pi 1.6: context edits, usage entries, system messages; every entry is a leaf to probe. */
class SessionWriter16 extends SessionWriter {
	contextEdit(targetId, replacement) {
		this.tick();
		return this.manager.appendContextEdit(targetId, replacement);
	}

	usageRecord(kind, note) {
		this.tick();
		const amount = rng.int(500, 9000);
		return this.manager.appendUsage(kind, this.model.provider, this.model.model, usage(0, 0, { cacheWrite: amount }), note).id;
	}

	/** A system-role message: the prompt state pi 1.6 records (full at first, then patches). */
	system({ content = "", sections, toolsAdded, toolsRemoved }) {
		return this.message({
			role: "system",
			content,
			...(sections !== undefined ? { sections } : {}),
			...(toolsAdded !== undefined ? { toolsAdded } : {}),
			...(toolsRemoved !== undefined ? { toolsRemoved } : {}),
		});
	}

	/** pi 1.6's retain-none compaction: firstKeptEntryId is the compaction's own id. */
	compactionKeepingNothing(summary, tokensBefore, details) {
		return this.compaction(summary, null, tokensBefore, details);
	}

	finish(extra = {}) {
		return super.finish({ leaves: [null, ...this.manager.getEntries().map((entry) => entry.id)], ...extra });
	}
}

function summaryText(title) {
	return `## Goal\n${title}: ${paragraph(1)}\n\n## Progress\n### Done\n- [x] ${sentence()}\n\n<read-files>\nsrc/app.py\n</read-files>`;
}

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

function contextEdits(outDir) {
	const s = new SessionWriter16("pi16-context-edits", "Context edits: a pasted secret left out, tool results, answers, prompts and custom messages replaced, one target edited three times, a branch from before an edit, edits of entries a compaction already summarized.", outDir);
	s.modelChange(MODELS[0]);
	s.thinkingLevel("medium");
	const first = s.toolTurn({ steps: 2 });
	const secret = s.userText("Here is the production key: sk-live-4f3a9b2c. Please configure the client with it.");
	const ack = s.assistant([{ type: "text", text: "Configured. (Please remove the key from the conversation.)" }]);
	s.contextEdit(secret, null);
	const second = s.toolTurn({ steps: 3 });
	s.contextEdit(second.steps[0].results[0], { content: "[tool output removed: too long]" });
	s.contextEdit(second.steps[1].assistant, { content: "I read the remaining files." });
	s.contextEdit(first.user, { content: [{ type: "text", text: "(edited) Fix the failing parser test." }] });
	const reminder = s.customMessage("reminder", `Remember: ${sentence()}`, true, { source: "ext" });
	s.contextEdit(reminder, { content: "Remember: the style guide changed." });
	const typo = s.userText("Third reqest with a typo");
	s.assistant([{ type: "text", text: paragraph(1) }]);
	s.contextEdit(typo, { content: "Third request, fixed" });
	s.contextEdit(typo, null);
	s.contextEdit(typo, { content: "Third request, restored" });
	const third = s.toolTurn({ steps: 2 });
	s.contextEdit(third.final, null);
	s.contextEdit(third.steps[0].results[0], { content: [{ type: "text", text: "replaced result" }, imageBlock()] });
	const mainTip = s.toolTurn({ steps: 1 }).final;

	// Back to the answer before the secret was left out: on this branch the secret is in the context.
	s.branch(ack);
	const sideTurn = s.toolTurn({ steps: 1 });
	s.contextEdit(first.steps[0].assistant, null);
	s.contextEdit(sideTurn.user, { content: "Side question, reworded" });
	const sideTip = s.toolTurn({ steps: 2 }).final;

	// A compaction on the main branch that keeps the last turns, then edits of a summarized entry
	// (no effect any more) and of a kept one.
	s.branch(mainTip);
	const kept = third.user;
	s.compaction(summaryText("Edits"), kept, 42000, { readFiles: ["src/app.py"], modifiedFiles: ["src/parser.py"] });
	s.contextEdit(second.user, null);
	s.contextEdit(kept, { content: "Kept prompt, edited after the compaction" });
	s.contextEdit(third.steps[1].assistant, null);
	const afterCompaction = s.toolTurn({ steps: 2 });
	s.label(afterCompaction.user, "after-compaction");
	s.addBranchPair(afterCompaction.final, sideTip);
	s.addBranchPair(sideTip, afterCompaction.final);
	return s.finish();
}

function systemAndUsage(outDir) {
	const s = new SessionWriter16("pi16-system-and-usage", "System-role messages (a full prompt with sections and tools, patches that replace and delete sections and add and remove tools), usage entries, a compaction keeping entries and a compaction keeping nothing, both with pi's systemMessage snapshot.", outDir);
	s.system({
		content: "You are pi, an expert coding assistant.",
		sections: { tools: "<tools>\nread, bash\n</tools>", rules: "<rules>\nBe concise.\n</rules>", cwd: `<cwd>\n${SESSION_CWD}\n</cwd>` },
		toolsAdded: [TOOLS.read, TOOLS.bash],
	});
	s.modelChange(MODELS[0]);
	s.thinkingLevel("low");
	const opening = s.toolTurn({ steps: 2 });
	s.usageRecord("cache_warm", "warmed before a long pause");
	const middle = s.toolTurn({ steps: 3 });
	s.system({ sections: { rules: "<rules>\nBe concise. Run the tests.\n</rules>", cwd: null }, toolsAdded: [TOOLS.edit], toolsRemoved: [{ name: "bash" }] });
	s.usageRecord("cache_warm");
	const late = s.toolTurn({ steps: 2 });
	const beforeCompaction = s.leafId;
	// Keeps from the middle turn: the patch above lies in the kept range, the snapshot replaces it.
	s.compaction(summaryText("System"), middle.user, 51000, { readFiles: [], modifiedFiles: ["src/app.py"] });
	s.system({ content: "Also: answer in English.", toolsAdded: [TOOLS.write] });
	const afterFirst = s.toolTurn({ steps: 2 });
	s.usageRecord("cache_warm", "second warm-up");
	s.compactionKeepingNothing(summaryText("Nothing kept"), 58000, { readFiles: ["README.md"], modifiedFiles: [] });
	const afterNone = s.toolTurn({ steps: 1 });

	// A branch from before the first compaction that compacts keeping nothing right away.
	s.branch(beforeCompaction);
	s.compactionKeepingNothing(summaryText("Branch"), 47000);
	s.contextEdit(late.final, null); // summarized already: changes nothing
	const branchTip = s.toolTurn({ steps: 2 }).final;
	s.addBranchPair(afterNone.final, branchTip);
	s.addBranchPair(branchTip, opening.final);
	s.addBranchPair(afterFirst.final, middle.final);
	return s.finish();
}

function branchesLabelsCompactions(outDir) {
	const s = new SessionWriter16("pi16-branches", "Branches (branch, branchWithSummary, a second root), labels, names, shell commands and custom messages, compactions of both kinds on different branches with context edits around them.", outDir);
	s.system({ content: "You are pi.", sections: { tools: "<tools>\nread\n</tools>" }, toolsAdded: [TOOLS.read] });
	s.modelChange(MODELS[1]);
	s.thinkingLevel("high");
	const base = s.toolTurn({ steps: 2 });
	s.bash({ command: "pytest -q", output: "1 failed", exitCode: 1 });
	s.bash({ command: "env | grep TOKEN", output: "TOKEN=x", exitCode: 0, excludeFromContext: true });
	const hidden = s.customMessage("hidden-context", [{ type: "text", text: paragraph(1) }], false);
	const fork = s.toolTurn({ steps: 2 });
	s.sessionName("pi 1.6 branches");
	const tipA = s.toolTurn({ steps: 3 }).final;
	s.contextEdit(hidden, null);
	s.compaction(summaryText("Branch A"), fork.user, 30000, { readFiles: ["a.py"], modifiedFiles: [] });
	const afterA = s.toolTurn({ steps: 1 });
	s.label(fork.user, "fork");

	const summaryB = s.branchWithSummary(fork.final, `The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n${paragraph(2)}`, { readFiles: ["b.py"], modifiedFiles: ["c.py"] });
	const branchB = s.toolTurn({ steps: 2 });
	s.contextEdit(base.user, { content: "Base prompt, as seen from branch B" });
	s.compactionKeepingNothing(summaryText("Branch B"), 33000);
	const tipB = s.toolTurn({ steps: 1 }).final;
	s.label(branchB.user, "branch-b");
	s.label(branchB.user, ""); // cleared

	s.branch(base.steps[0].assistant);
	const branchC = s.toolTurn({ steps: 2 });
	s.contextEdit(base.steps[0].assistant, { content: "Rewritten tool call step" });
	s.model = MODELS[2];
	const tipC = s.assistant([{ type: "text", text: paragraph(1) }]);

	s.resetLeaf();
	const root2 = s.toolTurn({ steps: 1 });
	s.contextEdit(root2.user, null);
	s.branch(tipB);
	s.label(tipB, "leaf-b"); // the label is the last entry, so pi's default leaf

	s.addBranchPair(tipA, tipB);
	s.addBranchPair(tipB, tipC);
	s.addBranchPair(tipC, afterA.final);
	s.addBranchPair(root2.final, tipA);
	s.addBranchPair(branchC.user, branchB.final);
	return s.finish();
}

function handmade16(outDir) {
	const header = { type: "session", version: 3, id: "pi16-handmade", timestamp: "2026-11-20T10:00:00.000Z", cwd: SESSION_CWD };
	const assistantExtra = { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(900, 40), stopReason: "stop" };
	let n = 0;
	let parentId = null;
	const entries = [];
	const push = (fields) => {
		n++;
		const id = `h${String(n).padStart(7, "0")}`;
		entries.push({ type: fields.type, id, parentId, timestamp: `2026-11-20T10:00:${String(n).padStart(2, "0")}.000Z`, ...fields });
		parentId = id;
		return id;
	};
	const message = (role, content, extra = {}) => push({ type: "message", message: { role, content, timestamp: 1795168800000 + n * 1000, ...extra } });
	const edit = (targetId, replacement) => push({ type: "context_edit", targetId, replacement });

	const system = message("system", null); // null content: pi substitutes ""
	const prompt = message("user", "First prompt");
	message("assistant", [{ type: "text", text: "First answer" }], assistantExtra);
	const bash = message("bashExecution", undefined, { command: "ls", output: "a b", exitCode: 0, cancelled: false, truncated: false });
	const summary = push({ type: "branch_summary", fromId: "root", summary: "A summary pi never wrote here" });
	const textSystem = message("system", [{ type: "text", text: "Block content" }], { sections: { a: "<a/>" } });
	edit(bash, null);
	edit(summary, { content: "ignored: summaries keep their text" });
	edit(textSystem, null);
	const blank = message("user", "Prompt whose replacement has no content");
	edit(blank, {}); // content becomes undefined: the field is dropped
	const odd = message("assistant", [{ type: "text", text: "Answer replaced by a string" }], assistantExtra);
	edit(odd, "not an object"); // ("not an object").content is undefined too
	const forward = `h${String(n + 2).padStart(7, "0")}`;
	edit(forward, null); // an edit of an entry that comes after it on the path
	message("user", "Left out by the edit before it");
	edit("no-such-entry", null);
	push({ type: "checkpoint_v9", data: { note: "a kind from a later pi" } });
	push({ type: "usage", kind: "cache_warm", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(0, 0, { cacheWrite: 1200 }) });
	const older = push({ type: "compaction", summary: "Older summary", firstKeptEntryId: prompt, tokensBefore: 1000 });
	message("user", "Between the compactions");
	// The newer compaction keeps from `blank`: the older one lies in its kept range and gives nothing,
	// the system message there is skipped (this compaction has no snapshot of its own).
	const newer = push({ type: "compaction", summary: "Newer summary", firstKeptEntryId: blank, tokensBefore: 2000 });
	edit(older, null);
	message("user", "After the newer compaction");
	message("assistant", [{ type: "text", text: "Still here" }], assistantExtra);
	const snapshotted = push({
		type: "compaction",
		summary: "Compaction with a snapshot, keeping nothing",
		firstKeptEntryId: `h${String(n + 1).padStart(7, "0")}`,
		tokensBefore: 3000,
		systemMessage: { role: "system", content: "Snapshot prompt", sections: { rules: "<rules/>" }, toolsAdded: [TOOLS.read], timestamp: 1795168900000 },
	});
	message("user", "After the snapshot");
	edit(snapshotted, { content: "ignored: a compaction keeps its summary" });
	message("user", "Last");
	edit(newer, null);
	writeFileSync(join(outDir, "pi16-handmade.jsonl"), [header, ...entries].map(jsonLine).join(""));
	void system;
	return {
		file: "pi16-handmade.jsonl",
		description: "Hand-written shapes pi 1.6 reads but does not write itself: edits of a shell command, a branch summary, system messages and compactions, replacements without content or not objects, an edit before its target, an edit of an unknown id, unknown kinds, an older compaction inside a newer one's kept range, a compaction snapshot.",
		leaves: [null, ...entries.map((entry) => entry.id)],
		branchPairs: [],
		// Context and tree only: pi 1.6's planner stops with a TypeError on the content-less replacements.
		keepRecentTokens: [],
		branchTokenBudgets: [],
		idsAssignedOnLoad: false,
	};
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

function main() {
	const { outDir, seed } = parseArgs(process.argv.slice(2), "usage: generate_sessions_16.mjs OUTDIR [--seed N]");
	reseed(seed);
	clock.set(Date.UTC(2026, 10, 20, 9, 0, 0, 0));
	mkdirSync(outDir, { recursive: true });
	const scenarios = [contextEdits, systemAndUsage, branchesLabelsCompactions, handmade16];
	const sessions = scenarios.flatMap((scenario) => scenario(outDir));
	const manifest = { piVersion: "1.6.0", seed, defaults: { keepRecentTokens: KEEP_RECENT_TOKENS_QUERIES, branchTokenBudgets: BRANCH_TOKEN_BUDGET_QUERIES }, sessions };
	writeFileSync(join(outDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
	process.stdout.write(`wrote ${sessions.length} sessions and manifest.json to ${outDir}\n`);
}

try {
	main();
} catch (error) {
	process.stderr.write(`generate_sessions_16: ${error instanceof Error ? error.stack : String(error)}\n`);
	process.exitCode = 1;
}
