#!/usr/bin/env node
/**
 * generate_sessions.mjs OUTDIR [--seed N] — write a reproducible corpus of pi session files.
 *
 * The corpus feeds pi-lsp's conformance tests (tests/conformance). Sessions are written by
 * pi 0.84.2's real SessionManager (SessionManager.create, its append/branch/resetLeaf methods, persisted
 * to disk exactly as pi writes them); a few legacy/edge-case files that pi can no longer
 * produce (v1, v2 with a `hookMessage` role, orphans, CRLF, unknown entry types, …) are
 * hand-written in pi's shape.
 *
 * Reproducibility: content comes from a seeded PRNG; the wall clock that pi reads
 * (`new Date()`, `Date.now()`) is a fake clock driven by the same PRNG, and node:crypto's
 * randomUUID (pi's entry-id source) is replaced by a seeded one, so the same seed gives
 * byte-identical files with the same ids.
 *
 * Output: OUTDIR/<name>.jsonl for every session and OUTDIR/manifest.json:
 *   {"piVersion", "seed", "defaults": {"keepRecentTokens": [...], "branchTokenBudgets": [...]},
 *    "sessions": [{"file", "description", "leaves": [null | id, ...],
 *                  "branchPairs": [[fromId, toId], ...],
 *                  "keepRecentTokens": [null | N, ...], "branchTokenBudgets": [null | N, ...],
 *                  "idsAssignedOnLoad": bool,            // v1 file: ids are random per load
 *                  "trailingToolResultsBug": bool,
 *                  "bugQueries": [{"leaf", "keepRecentTokens", "expectedFirstKeptEntryId"}]}]}
 * A null leaf / keepRecentTokens / budget means "leave the option out" (pi's default).
 * bugQueries lists every (leaf, keepRecentTokens) plan-compaction query whose token budget is
 * crossed inside trailing tool results: pi 0.84.2 then plans to keep everything (null or an
 * empty plan), while pi-lsp keeps the last assistant tool call (expectedFirstKeptEntryId).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
	BRANCH_TOKEN_BUDGET_QUERIES, clock, codeText, FILE_PATHS, imageBlock, isoAt, jsonLine, KEEP_RECENT_TOKENS_QUERIES,
	loadPi, MODELS, paragraph, parseArgs, pickSpread, RealDate, reseed, rng, SESSION_CWD, SessionWriter, sentence,
	usage, words,
} from "./corpus_support.mjs";

const PI_PACKAGE_DIR =
	process.env.PI_REFERENCE_PI_DIR ??
	fileURLToPath(new URL("./node_modules/@earendil-works/pi-coding-agent/", import.meta.url));
const { sessionEntryToContextMessages, estimateTokens } = await loadPi(PI_PACKAGE_DIR);

/** SessionWriter whose manifest entries also list the queries that hit 0.84.2's cut-point bug. */
class SessionWriter084 extends SessionWriter {
	manifestFields() {
		const bugQueries = findTrailingToolResultBugQueries(this.manager, [null, ...this.leaves], KEEP_RECENT_TOKENS_QUERIES);
		return { trailingToolResultsBug: bugQueries.length > 0, bugQueries };
	}
}

// ---------------------------------------------------------------------------------------------
// Detecting pi 0.84.2's "budget crossed inside trailing tool results" case
// ---------------------------------------------------------------------------------------------

const CUT_POINT_ROLES = new Set(["user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"]);

/**
 * Mirror of prepareCompaction/findCutPoint's walk (pi 0.84.2), only to find out whether the
 * keepRecentTokens budget is crossed at an entry with no valid cut point at or after it. Returns
 * the id the fixed algorithm keeps instead (the last cut point, moved back over entries that add
 * nothing to the context), or null when the query is not affected.
 */
function trailingToolResultBug(branch, keepRecentTokens) {
	if (branch.length === 0 || branch[branch.length - 1].type === "compaction") return null;
	let prevCompactionIndex = -1;
	for (let i = branch.length - 1; i >= 0; i--) {
		if (branch[i].type === "compaction") {
			prevCompactionIndex = i;
			break;
		}
	}
	let start = 0;
	if (prevCompactionIndex >= 0) {
		const kept = branch.findIndex((e) => e.id === branch[prevCompactionIndex].firstKeptEntryId);
		start = kept >= 0 ? kept : prevCompactionIndex + 1;
	}
	const cutPoints = [];
	for (let i = start; i < branch.length; i++) {
		if (branch[i].type === "compaction") continue;
		if (sessionEntryToContextMessages(branch[i]).some((m) => CUT_POINT_ROLES.has(m.role))) cutPoints.push(i);
	}
	if (cutPoints.length === 0) return null;
	let accumulated = 0;
	for (let i = branch.length - 1; i >= start; i--) {
		const tokens = sessionEntryToContextMessages(branch[i]).reduce((sum, m) => sum + estimateTokens(m), 0);
		if (tokens === 0) continue;
		accumulated += tokens;
		if (accumulated >= keepRecentTokens) {
			if (cutPoints.some((c) => c >= i)) return null;
			let cutIndex = cutPoints[cutPoints.length - 1];
			while (cutIndex > start) {
				const previous = branch[cutIndex - 1];
				if (previous.type === "compaction" || sessionEntryToContextMessages(previous).length > 0) break;
				cutIndex--;
			}
			return branch[cutIndex].id;
		}
	}
	return null;
}

function findTrailingToolResultBugQueries(manager, leaves, keepValues) {
	const found = [];
	for (const leaf of leaves) {
		const branch = manager.getBranch(leaf ?? undefined);
		for (const keep of keepValues) {
			const expectedFirstKeptEntryId = trailingToolResultBug(branch, keep ?? 20000);
			if (expectedFirstKeptEntryId) found.push({ leaf, keepRecentTokens: keep, expectedFirstKeptEntryId });
		}
	}
	return found;
}

/** Drop candidate leaves that would hit the trailing-tool-results bug (kept for the dedicated file only). */
function leavesWithoutBug(manager, candidates) {
	return candidates.filter((leaf) => findTrailingToolResultBugQueries(manager, [leaf], KEEP_RECENT_TOKENS_QUERIES).length === 0);
}

// ---------------------------------------------------------------------------------------------
// Scenarios (each writes one session with pi's SessionManager)
// ---------------------------------------------------------------------------------------------

function linearChat(outDir) {
	const s = new SessionWriter084("linear-chat", "Plain chat: model/thinking changes, thinking blocks, usage variants, stopReasons stop/length/aborted/error, session name.", outDir);
	s.modelChange(MODELS[0]);
	s.thinkingLevel("medium");
	const firstUser = s.userText("Hello! Can you explain what a session tree is?");
	s.assistant([{ type: "thinking", thinking: "The user wants an explanation of trees.", thinkingSignature: "sig_abc" }, { type: "text", text: paragraph(3) }]);
	for (let turn = 0; turn < 14; turn++) {
		s.userText(paragraph(rng.int(1, 3)));
		const blocks = [];
		if (rng.chance(0.6)) blocks.push({ type: "thinking", thinking: paragraph(rng.int(1, 4)), thinkingSignature: `sig_${rng.hex(8)}` });
		if (turn === 3) blocks.push({ type: "thinking", thinking: "", redacted: true, thinkingSignature: "opaque-redacted" });
		blocks.push({ type: "text", text: paragraph(rng.int(2, 6)), ...(rng.chance(0.3) ? { textSignature: `ts_${rng.hex(6)}` } : {}) });
		if (rng.chance(0.3)) blocks.push({ type: "text", text: paragraph(1) });
		let options = {};
		if (turn === 4) options = { stopReason: "length" };
		if (turn === 6) options = { stopReason: "aborted", usageOverride: usage(0, 0) };
		if (turn === 8) options = { stopReason: "error", errorMessage: "529 overloaded_error: Overloaded", usageOverride: usage(0, 0) };
		if (turn === 9) options = { usageOverride: usage(5000, 300, { totalTokens: 0 }) }; // totalTokens 0: sum of parts counts
		if (turn === 10) options = { usageOverride: usage(0, 0) }; // all-zero usage: ignored
		const id = turn === 8 ? s.assistant([], options) : s.assistant(blocks, options);
		if (turn === 5) s.thinkingLevel("high");
		if (turn === 7) s.modelChange(MODELS[1]);
		if ([2, 6, 8, 11].includes(turn)) s.addLeaf(id);
	}
	s.sessionName("Explaining\nsession trees  ");
	s.addLeaf(firstUser);
	s.userText("Thanks, that's all.");
	const last = s.assistant([{ type: "text", text: "You're welcome!" }], { stopReason: "stop" });
	s.addLeaf(last);
	s.addBranchPair(last, firstUser);
	return s.finish();
}

function toolHeavyLong(outDir) {
	const s = new SessionWriter084("tool-heavy-long", "Hundreds of entries of agentic tool use (read/write/edit/bash/grep), big tool results (>2000 chars, one >20k tokens), images, interleaved settings/label/custom entries; default and small keepRecentTokens give plans, many split turns.", outDir);
	s.modelChange(MODELS[0]);
	s.thinkingLevel("low");
	const candidates = [];
	for (let turn = 0; turn < 34; turn++) {
		let hugeResultsLeft = turn === 12 ? 1 : 0; // one result of 90000 chars (> 20k tokens)
		const ids = s.toolTurn({
			steps: rng.int(2, 10),
			resultChars: () => (hugeResultsLeft-- > 0 ? 90000 : rng.chance(0.15) ? rng.int(3000, 9000) : rng.int(80, 1800)),
			images: turn % 7 === 3 ? 0.4 : 0,
		});
		if (turn % 9 === 4) {
			s.user([{ type: "text", text: "Here is a screenshot of the failure:" }, imageBlock(), { type: "text", text: "what do you see?" }]);
			s.assistant([{ type: "text", text: "I see a red error banner." }]);
		}
		if (turn % 8 === 5) s.thinkingLevel(rng.pick(["off", "minimal", "medium", "high", "xhigh"]));
		if (turn % 11 === 6) s.modelChange(rng.pick(MODELS));
		if (turn % 10 === 7) s.label(ids.user, `turn-${turn}`);
		if (turn % 6 === 2) s.custom("editor-state", { openFiles: [rng.pick(FILE_PATHS)], turn });
		candidates.push(ids.user, ids.steps[0].assistant, ids.steps[ids.steps.length - 1].results[0], ids.final);
	}
	for (const leaf of leavesWithoutBug(s.manager, pickSpread(candidates, 8))) s.addLeaf(leaf);
	s.addBranchPair(s.leafId, candidates[40]);
	return s.finish();
}

function branching(outDir) {
	const s = new SessionWriter084("branching", "Tree with branch(), branchWithSummary() (details, fromHook, empty summary, to root), resetLeaf() second root, labels set/overwritten/cleared, session names, sibling timestamps out of file order.", outDir);
	s.modelChange(MODELS[0]);
	s.thinkingLevel("medium");
	const main1 = s.toolTurn({ steps: 3 });
	const main2 = s.toolTurn({ steps: 4 });
	const forkPoint = main2.final;
	const main3 = s.toolTurn({ steps: 5, resultChars: () => rng.int(500, 3000) });
	const tipA = s.toolTurn({ steps: 2 }).final;
	s.sessionName("First name");

	// Branch B from the fork point with a pi-style summary of the abandoned path.
	const summaryB = s.branchWithSummary(forkPoint, `The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\n${paragraph(2)}\n\n<read-files>\nsrc/app.py\n</read-files>`, { readFiles: ["src/app.py", "docs/設計.md"], modifiedFiles: ["src/parser.py"] });
	const branchB = s.toolTurn({ steps: 3 });
	s.label(branchB.user, "branch-b-start");
	s.label(branchB.user, "branch-b-renamed"); // overwrite
	const tipB = s.toolTurn({ steps: 2 }).final;

	// Branch C from an assistant tool call inside main3 (mid-turn), plain branch().
	s.branch(main3.steps[1].assistant);
	const branchC = s.toolTurn({ steps: 2 });
	// Extension-made summary: its details must not feed file lists.
	const hookSummary = s.branchWithSummary(branchC.final, "Summary written by an extension 🧩", { readFiles: ["ext/ignored.py"], modifiedFiles: ["ext/ignored2.py"] }, true);
	const tipC = s.toolTurn({ steps: 1 }).final;
	s.label(main1.user, "start");
	s.label(main1.user, undefined); // clear
	s.label(main2.user, "keep-me");
	s.label(main2.user, ""); // clear with empty string
	s.label(main2.final, "🔖 important");

	// Branch D: very large nested branch summary, to exercise prepareBranchEntries' 90% rule.
	s.branch(main1.final);
	const bigSummary = s.branchWithSummary(main1.final, `The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n${paragraph(90)}`, { readFiles: ["big/read.md"], modifiedFiles: [] });
	const branchD = s.toolTurn({ steps: 2, resultChars: () => rng.int(200, 600) });
	const tipD = s.toolTurn({ steps: 1, resultChars: () => rng.int(200, 600) }).final;

	// Branch E: empty summary (kept out of the context, still a branch summary entry), clock skew
	// so this sibling sorts before older siblings in getTree().
	const skewFrom = clock.nowMs;
	clock.set(skewFrom - 3_600_000);
	const emptySummary = s.branchWithSummary(forkPoint, "", { readFiles: [], modifiedFiles: [] });
	const tipE = s.toolTurn({ steps: 1 }).final;
	clock.set(skewFrom + 1000);

	// A summary of a branch back to the very first position (parent null => new root).
	const rootSummary = s.branchWithSummary(null, "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\nStarted over.", { readFiles: ["src/app.py"], modifiedFiles: ["README.md"] });
	const tipF = s.toolTurn({ steps: 2 }).final;

	// A second root started with resetLeaf().
	s.resetLeaf();
	s.thinkingLevel("off");
	const root2 = s.toolTurn({ steps: 2 });
	s.sessionName("   "); // clears the name
	s.sessionName("Final name ✨");
	s.branch(tipB);
	const tipBLabel = s.label(tipB, "leaf-b"); // label entry becomes the leaf

	for (const id of [tipA, tipB, tipC, tipD, tipE, tipF, root2.final, forkPoint, summaryB, hookSummary, bigSummary, emptySummary, rootSummary, main3.steps[2].results[0], tipBLabel]) s.addLeaf(id);
	s.addBranchPair(tipA, tipB);
	s.addBranchPair(tipB, tipA);
	s.addBranchPair(tipC, tipA);
	s.addBranchPair(tipA, main2.user); // navigating up the same path
	s.addBranchPair(main2.user, tipA); // old leaf on the target's path: nothing to summarize
	s.addBranchPair(tipD, tipB);
	s.addBranchPair(tipE, tipC);
	s.addBranchPair(tipF, tipA); // different roots: no common ancestor
	s.addBranchPair(root2.final, tipD);
	s.addBranchPair(tipBLabel, root2.user);
	s.addBranchPair(tipA, tipA);
	s.addBranchPair(branchD.user, tipC);
	return s.finish();
}

function compactions(outDir) {
	const s = new SessionWriter084("compactions", "Several compactions on one path (details with file lists, one fromHook with extension details, one keeping from the first entry, one whose firstKeptEntryId is off the path), a branch from before a compaction, a compaction as leaf.", outDir);
	s.modelChange(MODELS[0]);
	s.thinkingLevel("high");
	const turns = [];
	for (let i = 0; i < 10; i++) turns.push(s.toolTurn({ steps: rng.int(2, 6) }));
	const beforeFirst = s.leafId;
	const c1 = s.compaction(`## Goal\n${paragraph(2)}\n\n## Progress\n- [x] ${sentence()}\n\n<read-files>\nsrc/app.py\n</read-files>`, turns[6].user, 48123, { readFiles: ["src/app.py", "lib/Zeta.ts"], modifiedFiles: ["src/parser.py"] });
	for (let i = 0; i < 8; i++) turns.push(s.toolTurn({ steps: rng.int(2, 6) }));
	const c2 = s.compaction("Extension summary (custom format).", turns[15].steps[1].assistant, 51000, { strategy: "custom-ext", readFiles: "not-a-list" }, true);
	for (let i = 0; i < 8; i++) turns.push(s.toolTurn({ steps: rng.int(2, 7) }));
	const c3 = s.compaction(`## Goal\n${paragraph(1)}\n\n---\n\n**Turn Context (split turn):**\n\n${paragraph(1)}`, turns[22].steps[2]?.assistant ?? turns[22].final, 60321, { readFiles: ["docs/設計.md"], modifiedFiles: ["src/ünïcödé.py", "lib/alpha.ts"] });
	for (let i = 0; i < 6; i++) turns.push(s.toolTurn({ steps: rng.int(2, 6) }));
	const mainTip = s.leafId;

	// Branch from before the first compaction: its context has no compaction at all.
	s.branch(beforeFirst);
	const early = s.toolTurn({ steps: 3 });
	// A compaction whose firstKeptEntryId is on another branch: nothing before it is kept.
	// Its details.readFiles is not a list (pi skips it; modifiedFiles still count).
	const offPath = s.compaction("Summary keeping an entry that is not on this path.", turns[20].user, 30000, { readFiles: "not-a-list", modifiedFiles: ["x.py"] });
	const afterOffPath = s.toolTurn({ steps: 2 }).final;

	// A compaction keeping everything from the first entry.
	s.branch(turns[3].final);
	const keepAll = s.compaction("Summary that keeps everything.", s.manager.getBranch()[0].id, 12000, { readFiles: ["a.py"], modifiedFiles: [] });
	const afterKeepAll = s.toolTurn({ steps: 4, resultChars: () => rng.int(1000, 4000) }).final;

	// A compaction that is itself the leaf: prepareCompaction refuses ("already compacted").
	s.branch(turns[12].final);
	const compactionLeaf = s.compaction("Compaction at the leaf.", turns[10].user, 40000, { readFiles: [], modifiedFiles: [] });

	for (const id of leavesWithoutBug(s.manager, [mainTip, c1, c2, c3, early.final, offPath, afterOffPath, keepAll, afterKeepAll, compactionLeaf, turns[13].steps[0].assistant, turns[24].user, turns[9].final])) s.addLeaf(id);
	s.addBranchPair(mainTip, afterOffPath);
	s.addBranchPair(afterOffPath, mainTip);
	s.addBranchPair(mainTip, afterKeepAll);
	s.addBranchPair(compactionLeaf, mainTip);
	return s.finish();
}

function bashAndCustom(outDir) {
	const s = new SessionWriter084("bash-and-custom", "bashExecution messages (exit codes, cancelled, truncated with/without fullOutputPath, excludeFromContext, empty output, no exit code), custom_message entries (string/array/image content, display false, details), custom entries.", outDir);
	s.modelChange(MODELS[1]);
	s.thinkingLevel("minimal");
	const leaves = [];
	for (let round = 0; round < 10; round++) {
		leaves.push(s.bash({ command: "pytest -q", output: codeText(rng.int(50, 1500)), exitCode: 1 }));
		s.bash({ command: "sleep 100", output: "partial output", exitCode: undefined, cancelled: true });
		s.bash({ command: "cat huge.log", output: codeText(3000), exitCode: 0, truncated: true, fullOutputPath: "/tmp/pi-bash-output-1234.log" });
		s.bash({ command: "cat other.log", output: codeText(800), exitCode: 0, truncated: true });
		s.bash({ command: "env | grep SECRET", output: "SECRET=hidden", exitCode: 0, excludeFromContext: true });
		s.bash({ command: "true", output: "", exitCode: 0 });
		leaves.push(s.customMessage("reminder", `Remember: ${sentence()}`, true, { source: "ext", n: round }));
		s.customMessage("hidden-context", [{ type: "text", text: paragraph(2) }, imageBlock()], false);
		s.custom("ext-state", { round, nested: { values: [1, 2.5, "x"] } });
		const turn = s.toolTurn({ steps: rng.int(1, 5), resultChars: () => rng.int(200, 2500) });
		leaves.push(turn.final, turn.steps[0].assistant);
		s.customMessage("array-only", [{ type: "text", text: "first" }, { type: "text", text: "second" }], true);
		s.bash({ command: "git diff", output: codeText(rng.int(500, 4000)), exitCode: 2 });
		const answer = s.assistant([{ type: "text", text: paragraph(2) }]);
		leaves.push(answer);
	}
	for (const id of leavesWithoutBug(s.manager, pickSpread(leaves, 8))) s.addLeaf(id);
	return s.finish();
}

function unicodeAndTruncation(outDir) {
	const s = new SessionWriter084("unicode-and-truncation", "Non-ASCII, CJK, emoji (astral), U+2028/U+2029/NEL/control characters in text, args and paths; tool results around the 2000-code-unit truncation limit, one cut through a surrogate pair; >20k-token CJK result.", outDir);
	s.textOptions = { unicode: 0.3, tricky: 0.05 };
	s.modelChange(MODELS[2]);
	s.thinkingLevel("medium");
	const leaves = [];
	s.userText("こんにちは 👋 — 请帮我修复 src/ünïcödé.py 里的 bug\u2028第二行\u0085第三行");
	const read = s.toolCall("read", { path: "docs/設計.md" });
	s.assistant([{ type: "thinking", thinking: "需要先读文件 🤔" }, { type: "text", text: "好的，我先读取文件。" }, read]);
	// Exactly at, one over, one under the limit; and a surrogate pair straddling index 2000.
	s.toolResult(read, "界".repeat(2000));
	const r2 = s.toolCall("read", { path: "src/ünïcödé.py" });
	s.assistant([r2]);
	s.toolResult(r2, `${"a".repeat(1999)}😀${"b".repeat(50)}`);
	const r3 = s.toolCall("read", { path: "assets/logo 🚀.png" });
	s.assistant([r3]);
	s.toolResult(r3, [{ type: "text", text: "x".repeat(2001) }, imageBlock()]);
	const r4 = s.toolCall("bash", { command: "printf 'tab\\there\\u2028'", env: { LANG: "ja_JP.UTF-8", 表: "値" } });
	s.assistant([r4]);
	s.toolResult(r4, [{ type: "text", text: "part one 🎉 " }, { type: "text", text: `${"y".repeat(1990)}👩‍💻 tail` }]);
	leaves.push(s.assistant([{ type: "text", text: "修复完成 ✅. Done\u2029." }]));
	for (let turn = 0; turn < 18; turn++) {
		const ids = s.toolTurn({ steps: rng.int(1, 6), resultChars: () => (turn === 9 ? 95000 : rng.int(100, 3000)) });
		if (turn === 4) s.user([{ type: "text", text: "看这张图 📷" }, imageBlock()]);
		if (turn === 6) s.customMessage("多语言", "カスタム メッセージ 🌏\u2028with separator", true);
		if (turn === 11) s.sessionName("Ünïcödé 会话 🚀");
		leaves.push(ids.user, ids.final, ids.steps[0].assistant);
	}
	for (const id of leavesWithoutBug(s.manager, pickSpread(leaves, 7))) s.addLeaf(id);
	return s.finish();
}

function jsonNumbersAndKeys(outDir) {
	const s = new SessionWriter084("json-numbers-and-keys", "Tool-call arguments whose JSON.stringify form is tricky: small/large floats (1.5e-7, 1e21), integer-like keys (ordered first by JS), nested values, unicode keys; usage costs with float noise.", outDir);
	s.modelChange(MODELS[0]);
	s.thinkingLevel("off");
	const leaves = [];
	const trickyArgs = [
		{ path: "src/app.py", threshold: 1.5e-7, ratio: 0.1, big: 1e21, bigger: 1.2345e25, small: 0.000001, neg: -2.5, int: 12345678901234 },
		{ path: "src/parser.py", b: 1, 10: "ten", 2: "two", a: [1, 2, { z: null, y: true }], "": "empty key" },
		{ path: "lib/alpha.ts", "ключ": "значение", "🔑": "🔒", nested: { deep: { deeper: [0.5, 1e-10, 100, -0.25] } } },
		{ command: "echo \"quoted\" 'single' \\ backslash\ttab", timeout: 30.5 },
	];
	for (let turn = 0; turn < 16; turn++) {
		s.userText(`Turn ${turn}: ${sentence()}`);
		const call = s.toolCall(turn % 4 === 3 ? "bash" : rng.pick(["read", "edit", "write"]), trickyArgs[turn % 4]);
		leaves.push(s.assistant([{ type: "text", text: `Calling with ${Object.keys(call.arguments).length} args.` }, call], { usageOverride: usage(1000 + turn * 333, 77, { cacheRead: 1 }) }));
		s.toolResult(call, codeText(rng.int(500, 3500)));
		leaves.push(s.assistant([{ type: "text", text: paragraph(2) }]));
	}
	for (const id of leavesWithoutBug(s.manager, pickSpread(leaves, 5))) s.addLeaf(id);
	return s.finish();
}

function trailingToolResultsBug(outDir) {
	const s = new SessionWriter084("trailing-tool-results-bug", "The keepRecentTokens budget is crossed inside trailing tool results: pi 0.84.2 plans to keep everything; pi-lsp keeps the last assistant tool call with its results.", outDir);
	s.modelChange(MODELS[0]);
	s.thinkingLevel("medium");
	for (let turn = 0; turn < 6; turn++) s.toolTurn({ steps: rng.int(1, 3), resultChars: () => rng.int(200, 1500) });
	s.userText("Read both log files, please.");
	const big = s.toolCall("read", { path: "logs/huge.log" });
	const small = s.toolCall("read", { path: "logs/small.log" });
	const assistantId = s.assistant([{ type: "text", text: "Reading both logs." }, big, small]);
	s.toolResult(big, codeText(100000));
	const lastResult = s.toolResult(small, "ok");
	s.addLeaf(lastResult);
	s.addLeaf(assistantId);
	const info = s.finish();
	if (!info.trailingToolResultsBug) throw new Error("trailing-tool-results-bug: the bug condition was not produced");
	return info;
}

function longLinearChain(outDir) {
	const s = new SessionWriter084("long-linear-chain", "Thousands of short entries in one chain (deep parent links: no recursion allowed), periodic thinking-level changes and labels.", outDir);
	s.modelChange(MODELS[0]);
	const leaves = [];
	for (let turn = 0; turn < 1300; turn++) {
		const user = s.userText(`Q${turn}: ${words(rng.int(3, 12))}`);
		const answer = s.assistant([{ type: "text", text: `A${turn}: ${words(rng.int(5, 20))}` }]);
		if (turn % 97 === 13) s.thinkingLevel(rng.pick(["low", "medium", "high"]));
		if (turn % 211 === 50) s.label(user, `q-${turn}`);
		if (turn % 150 === 149) leaves.push(user, answer);
	}
	s.sessionName("Long chain");
	s.sessionName(""); // cleared again: no name
	for (const id of pickSpread(leaves, 4)) s.addLeaf(id);
	s.addBranchPair(s.leafId, leaves[0]);
	return s.finish();
}

function headerOnlyAndEmpty(outDir) {
	writeFileSync(join(outDir, "handmade-header-only.jsonl"), jsonLine({ type: "session", version: 3, id: "header-only", timestamp: "2026-02-01T00:00:00.000Z", cwd: SESSION_CWD }));
	writeFileSync(join(outDir, "handmade-empty.jsonl"), "");
	const common = { leaves: [null], branchPairs: [], keepRecentTokens: KEEP_RECENT_TOKENS_QUERIES, branchTokenBudgets: BRANCH_TOKEN_BUDGET_QUERIES, idsAssignedOnLoad: false, trailingToolResultsBug: false, bugQueries: [] };
	return [
		{ file: "handmade-header-only.jsonl", description: "A header and no entries.", ...common },
		{ file: "handmade-empty.jsonl", description: "A 0-byte file: pi 0.84.2 opens it as a new, empty session (and would write a header into it).", ...common },
	];
}

// ---------------------------------------------------------------------------------------------
// Hand-written files (shapes pi no longer writes)
// ---------------------------------------------------------------------------------------------

function legacyV1(outDir) {
	// v1: no version, no ids; legacy header fields; compaction with firstKeptEntryIndex
	// (index into the raw entry list, header = 0).
	let t = RealDate.UTC(2025, 10, 3, 8, 0, 0, 0);
	const lines = [{ type: "session", id: "legacy-v1-session", timestamp: isoAt(t), cwd: SESSION_CWD, provider: "anthropic", modelId: "claude-sonnet-4-5", thinkingLevel: "low", branchedFrom: "/old/path/session.jsonl" }];
	const at = () => {
		t += 1500;
		return t;
	};
	const assistantMsg = (content, stopReason = "stop") => ({ role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(2000 + lines.length * 40, 50), stopReason, timestamp: at() });
	lines.push({ type: "thinking_level_change", timestamp: isoAt(at()), thinkingLevel: "low" });
	for (let turn = 0; turn < 12; turn++) {
		lines.push({ type: "message", timestamp: isoAt(at()), message: { role: "user", content: paragraph(2), timestamp: t } });
		const call = { type: "toolCall", id: `toolu_legacy_${turn}`, name: rng.pick(["read", "edit", "bash"]), arguments: { path: rng.pick(FILE_PATHS), command: "ls" } };
		lines.push({ type: "message", timestamp: isoAt(at()), message: assistantMsg([{ type: "text", text: sentence() }, call], "toolUse") });
		lines.push({ type: "message", timestamp: isoAt(at()), message: { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text: codeText(rng.int(300, 2600)) }], isError: false, timestamp: t } });
		lines.push({ type: "message", timestamp: isoAt(at()), message: assistantMsg([{ type: "text", text: paragraph(2) }]) });
		if (turn === 5) {
			lines.push({ type: "model_change", timestamp: isoAt(at()), provider: "openai", modelId: "gpt-4o" });
			lines.push({ type: "compaction", timestamp: isoAt(at()), summary: "Legacy summary of the first turns.", firstKeptEntryIndex: 14, tokensBefore: 175004 });
		}
	}
	lines.push({ type: "compaction", timestamp: isoAt(at()), summary: "Second legacy summary.", firstKeptEntryIndex: 40, tokensBefore: 185014 });
	lines.push({ type: "message", timestamp: isoAt(at()), message: { role: "user", content: "After the second compaction.", timestamp: t } });
	lines.push({ type: "message", timestamp: isoAt(at()), message: assistantMsg([{ type: "text", text: "Continuing." }]) });
	writeFileSync(join(outDir, "legacy-v1.jsonl"), lines.map(jsonLine).join(""));
	return {
		file: "legacy-v1.jsonl",
		description: "Hand-written v1 session (no version, no ids, legacy header fields, compactions with firstKeptEntryIndex): migrated on load with fresh random ids.",
		leaves: [null],
		branchPairs: [],
		keepRecentTokens: KEEP_RECENT_TOKENS_QUERIES,
		branchTokenBudgets: BRANCH_TOKEN_BUDGET_QUERIES,
		idsAssignedOnLoad: true,
		trailingToolResultsBug: false,
		bugQueries: [],
	};
}

function legacyV2HookMessage(outDir) {
	let t = RealDate.UTC(2025, 11, 24, 18, 30, 0, 0);
	const at = () => {
		t += 2100;
		return t;
	};
	const ids = [];
	let parentId = null;
	const lines = [{ type: "session", version: 2, id: "legacy-v2-session", timestamp: isoAt(t), cwd: SESSION_CWD }];
	const push = (entry) => {
		const id = `v2e${String(ids.length).padStart(5, "0")}`;
		lines.push({ type: entry.type, id, parentId, timestamp: isoAt(at()), ...entry });
		ids.push(id);
		parentId = id;
		return id;
	};
	push({ type: "model_change", provider: "anthropic", modelId: "claude-sonnet-4-5" });
	push({ type: "message", message: { role: "user", content: [{ type: "text", text: "Start the v2 session" }], timestamp: t } });
	push({ type: "message", message: { role: "hookMessage", customType: "pre-prompt-hook", content: "Injected by a hook (v2 shape)", display: true, details: { hook: "pre" }, timestamp: t } });
	push({ type: "message", message: { role: "assistant", content: [{ type: "text", text: "Acknowledged." }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(1200, 20), stopReason: "stop", timestamp: t } });
	const hook2 = push({ type: "message", message: { role: "hookMessage", customType: "array-hook", content: [{ type: "text", text: "Array content hook 🪝" }], display: false, timestamp: t } });
	push({ type: "custom_message", customType: "modern", content: "A v2 custom_message entry", display: true });
	for (let i = 0; i < 6; i++) {
		push({ type: "message", message: { role: "user", content: paragraph(3), timestamp: t } });
		push({ type: "message", message: { role: "assistant", content: [{ type: "text", text: paragraph(4) }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(1500 + i * 200, 90), stopReason: "stop", timestamp: t } });
	}
	writeFileSync(join(outDir, "legacy-v2-hookmessage.jsonl"), lines.map(jsonLine).join(""));
	return {
		file: "legacy-v2-hookmessage.jsonl",
		description: "Hand-written v2 session with `hookMessage` role messages (migrated to `custom`).",
		leaves: [null, hook2, ids[3]],
		branchPairs: [[ids[ids.length - 1], ids[2]]],
		keepRecentTokens: KEEP_RECENT_TOKENS_QUERIES,
		branchTokenBudgets: BRANCH_TOKEN_BUDGET_QUERIES,
		idsAssignedOnLoad: false,
		trailingToolResultsBug: false,
		bugQueries: [],
	};
}

function handmadeEdgeCases(outDir) {
	// v3 file with things pi tolerates on load but never writes itself.
	const header = { type: "session", version: 3, id: "handmade-edge-cases", timestamp: "2026-01-10T10:00:00.000Z", cwd: SESSION_CWD };
	const msg = (role, content, extra = {}) => ({ role, content, timestamp: 1768039200000, ...extra });
	const assistantExtra = { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(900, 40), stopReason: "stop" };
	const e = [
		{ type: "message", id: "e0000001", parentId: null, timestamp: "2026-01-10T10:00:01.000Z", message: msg("user", "root question") },
		{ type: "message", id: "e0000002", parentId: "e0000001", timestamp: "2026-01-10T10:00:02.000Z", message: msg("assistant", [{ type: "text", text: "root answer" }], assistantExtra) },
		// Siblings under e0000002 whose timestamps sort differently than their text or file order:
		// +02:00 offset (= 09:30Z, earliest), no milliseconds, and plain Z.
		{ type: "message", id: "e0000003", parentId: "e0000002", timestamp: "2026-01-10T10:45:00.000Z", message: msg("user", "sibling written first, sorted last") },
		{ type: "message", id: "e0000004", parentId: "e0000002", timestamp: "2026-01-10T11:30:00+02:00", message: msg("user", "sibling with +02:00 offset, sorted first") },
		{ type: "message", id: "e0000005", parentId: "e0000002", timestamp: "2026-01-10T10:15:00Z", message: msg("user", "sibling without milliseconds") },
		{ type: "message", id: "e0000006", parentId: "e0000002", timestamp: "2026-01-10T10:15:00.000Z", message: msg("user", "sibling tied with the previous one") },
		// Message with null content (pi substitutes [] in the context).
		{ type: "message", id: "e0000007", parentId: "e0000005", timestamp: "2026-01-10T10:00:07.000Z", message: msg("assistant", null, assistantExtra) },
		// Entry types pi 0.84.2 does not know: ignored for its context, still tree nodes. pi 1.x gives
		// usage entries no context either; its context_edit leaves e0000003 out of the context, but
		// e0000003 is on another branch (pi 1.6 applies an edit only to entries on the edit's own
		// path), so both versions build the same context at every leaf here.
		{ type: "usage", id: "e0000008", parentId: "e0000004", timestamp: "2026-01-10T10:00:08.000Z", kind: "cache_warm", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(10, 0) },
		{ type: "context_edit", id: "e0000009", parentId: "e0000008", timestamp: "2026-01-10T10:00:09.000Z", targetId: "e0000003", replacement: null },
		{ type: "custom_message", id: "e0000010", parentId: "e0000009", timestamp: "2026-01-10T11:00:10.500+01:00", customType: "offset-ts", content: "custom message with an offset timestamp", display: true },
		{ type: "branch_summary", id: "e0000011", parentId: "e0000010", timestamp: "2026-01-10T10:00:11.000Z", fromId: "e0000003", summary: "branch summary in a hand-written file" },
		{ type: "message", id: "e0000012", parentId: "e0000011", timestamp: "2026-01-10T10:00:12.000Z", message: msg("toolResult", [{ type: "text", text: "orphan-ish tool result with no call" }], { toolCallId: "missing", toolName: "read", isError: false }) },
		// Orphan (unknown parent) and self-parented entries: both become roots in getTree().
		{ type: "message", id: "e0000013", parentId: "does-not-exist", timestamp: "2026-01-10T10:00:13.000Z", message: msg("user", "orphan entry") },
		{ type: "message", id: "e0000014", parentId: "e0000014", timestamp: "2026-01-10T10:00:14.000Z", message: msg("user", "self-parented entry") },
		{ type: "message", id: "e0000015", parentId: "e0000013", timestamp: "2026-01-10T10:00:15.000Z", message: msg("assistant", [{ type: "text", text: "answer under the orphan" }], assistantExtra) },
		{ type: "label", id: "e0000016", parentId: "e0000015", timestamp: "2026-01-10T10:00:16.000Z", targetId: "not-an-entry", label: "dangling label" },
		{ type: "label", id: "e0000017", parentId: "e0000016", timestamp: "2026-01-10T10:00:17.000Z", targetId: "e0000002", label: "answer" },
		{ type: "session_info", id: "e0000018", parentId: "e0000017", timestamp: "2026-01-10T10:00:18.000Z", name: "  Handmade  " },
		// A kind no pi version knows (yet): a tree node that adds nothing to the context.
		{ type: "checkpoint_v9", id: "e0000020", parentId: "e0000012", timestamp: "2026-01-10T10:00:20.000Z", data: { note: "from a later pi" } },
		{ type: "label", id: "e0000019", parentId: "e0000006", timestamp: "2026-01-10T10:00:19.000Z", targetId: "e0000006", label: "last line is a label" },
	];
	// A blank line and a torn line before the header: pi skips both when looking for it.
	let text = `\n{"type":"sess\n${jsonLine(header)}`;
	e.forEach((entry, index) => {
		let line = JSON.stringify(entry);
		if (index === 2) line += "\r"; // CRLF line
		if (index === 5) text += "\n   \n"; // blank lines
		if (index === 7) text += '{"type":"message","id":"broken", "parentId":\n'; // torn/malformed line
		text += index === e.length - 1 ? line : `${line}\n`; // no newline after the last line
	});
	writeFileSync(join(outDir, "handmade-edge-cases.jsonl"), text);
	return {
		file: "handmade-edge-cases.jsonl",
		description: "Hand-written v3 file: blank and torn lines before the header, CRLF, blank and malformed lines, no final newline, orphan and self-parented roots, sibling timestamps with offsets/without millis/ties, null message content, pi 1.x and unknown entry types, dangling label, label as leaf.",
		// e0000014 (self-parented) is never used as a leaf: pi 0.84.2's getBranch/buildSessionPath
		// loop forever on a parent cycle (until "Invalid array length").
		leaves: [null, "e0000012", "e0000015", "e0000007", "e0000018", "e0000003", "e0000020"],
		branchPairs: [["e0000012", "e0000003"], ["e0000015", "e0000012"], ["e0000012", "e0000007"], ["e0000003", "e0000005"]],
		keepRecentTokens: KEEP_RECENT_TOKENS_QUERIES,
		branchTokenBudgets: BRANCH_TOKEN_BUDGET_QUERIES,
		idsAssignedOnLoad: false,
		trailingToolResultsBug: false,
		bugQueries: [],
	};
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

function main() {
	const { outDir, seed } = parseArgs(process.argv.slice(2), "usage: generate_sessions.mjs OUTDIR [--seed N]");
	reseed(seed);
	mkdirSync(outDir, { recursive: true });
	const scenarios = [
		linearChat, toolHeavyLong, branching, compactions, bashAndCustom, unicodeAndTruncation, jsonNumbersAndKeys,
		longLinearChain, trailingToolResultsBug, legacyV1, legacyV2HookMessage, handmadeEdgeCases, headerOnlyAndEmpty,
	];
	const sessions = scenarios.flatMap((scenario) => scenario(outDir));
	const manifest = {
		piVersion: "0.84.2",
		seed,
		defaults: { keepRecentTokens: KEEP_RECENT_TOKENS_QUERIES, branchTokenBudgets: BRANCH_TOKEN_BUDGET_QUERIES },
		sessions,
	};
	writeFileSync(join(outDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
	process.stdout.write(`wrote ${sessions.length} sessions and manifest.json to ${outDir}\n`);
}

try {
	main();
} catch (error) {
	process.stderr.write(`generate_sessions: ${error instanceof Error ? error.stack : String(error)}\n`);
	process.exitCode = 1;
}
