"""A session continued alternately in pi 1.6 and in pi-lsp stays valid for both.

pi 1.6's own ``SessionManager`` (tests/reference/pi16_session.mjs) appends turns, context edits,
usage records, system messages and compactions it plans itself; pi-lsp continues the same file,
through the real server (a turn with the scripted model, a compaction) or through its session API.
After every switch, pi 1.6 (``pi_reference.mjs``) and pi-lsp must report the same leaf, the same
tree and the same context at every entry. Through the server, the model must never be sent what
the user left out of the context in pi, nor pi's own recorded system prompt.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from pi_lsp import protocol
from pi_lsp.compaction.prepare import prepare_compaction
from pi_lsp.compaction.settings import CompactionSettings
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from pi_lsp.session.session import Session
from pi_lsp.session.tree_view import tree_view
from tests.builders import assistant_message, usage
from tests.e2e.conftest import another_server, request

from .harness import PI16_DIR, REFERENCE_DIR, REFERENCE_SCRIPT, run_node_script

PI16_SESSION_SCRIPT = REFERENCE_DIR / "pi16_session.mjs"
SECRET = "sk-live-7f00d"
PI_PROMPT = "You are pi, recorded by pi 1.6."
SERVER_OPTIONS = {
    "model": "openai/scripted",
    "autoName": False,
    "tokenizer": "chars4",
    "compaction": {"keepRecentTokens": 10, "reserveTokens": 100},
    "contextWindow": 100000,
}


def pi16_takes_a_turn(node: Path, file: Path, ops: list[dict[str, Any]]) -> dict[str, Any]:
    """pi 1.6's SessionManager opens ``file`` (creating it) and appends ``ops``."""
    output = run_node_script(
        node, PI16_SESSION_SCRIPT, [str(file), "-"], stdin=json.dumps(ops).encode()
    )
    return json.loads(output)


def pi16_view(node: Path, file: Path) -> dict[str, Any]:
    """pi 1.6's leaf, tree and context at every entry (and at its default leaf)."""
    [tree] = ask_pi16(node, [["tree", str(file)]])
    queries = [["context", str(file)]] + [
        ["context", str(file), "--leaf", entry["id"]] for entry in tree["entries"]
    ]
    contexts = ask_pi16(node, queries)
    return {
        "leafId": tree["leafId"],
        "tree": _tree_shape(tree),
        "contexts": dict(zip([None] + [e["id"] for e in tree["entries"]], contexts, strict=True)),
    }


def ask_pi16(node: Path, queries: list[list[str]]) -> list[Any]:
    output = run_node_script(
        node, REFERENCE_SCRIPT, ["batch", "-"], stdin=json.dumps(queries).encode(), pi_dir=PI16_DIR
    )
    answers = json.loads(output)
    assert all(answer["ok"] for answer in answers), answers
    return [answer["result"] for answer in answers]


def our_view(file: Path) -> dict[str, Any]:
    session = Session.open(file, writable=False)
    tree = protocol.to_json(tree_view(session))
    contexts = {None: session.build_context().to_json()}
    for entry in session.entries:
        contexts[entry.id] = session.build_context(entry.id).to_json()
    return {"leafId": session.leaf_id, "tree": _tree_shape(tree), "contexts": contexts}


def _tree_shape(tree: dict[str, Any]) -> dict[str, Any]:
    return {
        "leafId": tree["leafId"],
        "name": tree["name"],
        "entries": [(e["id"], e["parentId"], e["type"]) for e in tree["entries"]],
        "labels": tree["labels"],
        "roots": tree["roots"],
        "children": tree["children"],
    }


def assert_both_agree(node: Path, file: Path) -> dict[str, Any]:
    ours, pis = our_view(file), pi16_view(node, file)
    assert ours["leafId"] == pis["leafId"]
    assert ours["tree"] == pis["tree"]
    differing = [
        leaf for leaf in pis["contexts"] if ours["contexts"][leaf] != pis["contexts"][leaf]
    ]
    assert not differing, f"contexts differ at {differing}"
    return ours


def pi16_opening(secret_target: str = "$-2") -> list[dict[str, Any]]:
    tool = {"name": "read", "description": "Read a file.", "parameters": {"type": "object"}}
    return [
        {
            "op": "system",
            "content": PI_PROMPT,
            "sections": {"rules": "<rules/>"},
            "toolsAdded": [tool],
        },
        {"op": "user", "text": "Fix the parser test."},
        {"op": "assistant", "text": "Reading it.", "calls": [["read", {"path": "src/parser.py"}]]},
        {"op": "assistant", "text": "The parser drops the last token."},
        {"op": "user", "text": f"Use this key for the fixtures: {SECRET}"},
        {"op": "assistant", "text": "Done. Please take the key out of the conversation."},
        {"op": "contextEdit", "target": secret_target, "replacement": None},
        {"op": "usage", "kind": "cache_warm", "note": "warm-up"},
    ]


def sent_text(llm: ScriptedLLM) -> str:
    return json.dumps(llm.requests[-1]["messages"], ensure_ascii=False)


async def test_pi16_and_the_pi_lsp_server_take_turns_on_one_session(reference_node, tmp_path):
    workspace = tmp_path / "project"
    sessions = workspace / ".pi" / "sessions"
    sessions.mkdir(parents=True)
    # Inside the session directory: pi-lsp opens only files there (TCP safety).
    file = sessions / "shared.jsonl"
    pi16_takes_a_turn(reference_node, file, pi16_opening())
    assert_both_agree(reference_node, file)

    async with ScriptedLLM() as llm:
        # pi-lsp resumes the file pi 1.6 wrote and takes a turn.
        options = {**SERVER_OPTIONS, "apiBase": llm.base_url}
        async with another_server(workspace, options) as client:
            opened = await request(client, "pi/openSession", {"path": str(file)})
            assert opened["readOnly"] is False
            llm.enqueue(replies.text("Fixed in the editor."))
            await request(client, "pi/prompt", {"text": "Now add a regression test."})
            sent = sent_text(llm)
            assert "Fix the parser test." in sent and "Now add a regression test." in sent
            assert SECRET not in sent and PI_PROMPT not in sent
            transcript = await request(client, "pi/messages", {})
            removed = [e for e in transcript["entries"] if e.get("contextEdit") == "removed"]
            assert [e["message"]["content"][0]["text"] for e in removed] == [
                f"Use this key for the fixtures: {SECRET}"
            ]
            tree = await request(client, "pi/tree", {})
            assert f"removed from context: Use this key for the fixtures: {SECRET}" in [
                e["preview"] for e in tree["entries"]
            ]
        ours = assert_both_agree(reference_node, file)
        editor_answer = ours["leafId"]

        # pi 1.6 continues: a turn, a replacement of pi-lsp's answer, a compaction it plans, a
        # branch and a label.
        pi16 = pi16_takes_a_turn(
            reference_node,
            file,
            [
                {"op": "user", "text": "Rename the test, please."},
                {"op": "assistant", "text": "Renamed to test_last_token."},
                {
                    "op": "contextEdit",
                    "target": editor_answer,
                    "replacement": {"content": "Fixed."},
                },
                {"op": "compact", "keepRecentTokens": 40, "summary": "## Goal\nFix the parser"},
                {"op": "user", "text": "Run the tests."},
                {"op": "assistant", "text": "All green."},
                {"op": "label", "target": "$-2", "label": "green"},
            ],
        )
        assert_both_agree(reference_node, file)

        # pi-lsp again: a turn and a compaction of its own.
        async with another_server(workspace, options) as client:
            await request(client, "pi/openSession", {"path": str(file)})
            llm.enqueue(replies.text("Committed."))
            await request(client, "pi/prompt", {"text": "Commit it."})
            sent = sent_text(llm)
            assert (
                SECRET not in sent and PI_PROMPT not in sent and "## Goal\\nFix the parser" in sent
            )
            llm.enqueue(replies.text("## Goal\nFix the parser and commit"))
            compacted = await request(client, "pi/compact", {})
            assert compacted["firstKeptEntryId"]
        assert_both_agree(reference_node, file)

        # pi 1.6 reads pi-lsp's compaction and goes on from it.
        pi16 = pi16_takes_a_turn(
            reference_node,
            file,
            [{"op": "user", "text": "Thanks!"}, {"op": "assistant", "text": "You're welcome."}],
        )
        final = assert_both_agree(reference_node, file)
        assert final["leafId"] == pi16["appended"][-1]
        messages = final["contexts"][None]["messages"]
        # pi-lsp's compaction carries pi's prompt state (its snapshot), then the new summary.
        assert [message["role"] for message in messages[:2]] == ["system", "compactionSummary"]
        assert messages[0]["content"] == PI_PROMPT and messages[0]["sections"] == {
            "rules": "<rules/>"
        }
        assert messages[1]["summary"].startswith("## Goal\nFix the parser and commit")


def test_pi_lsp_writes_pi16_continues_and_pi_lsp_again(reference_node, tmp_path):
    file = tmp_path / "from-pi-lsp.jsonl"
    with Session.open(file, cwd="/home/user/projects/demo-app") as session:
        session.append_model_change("openai", "scripted")
        session.append_thinking_level_change("high")
        first = session.append_message({"role": "user", "content": "Start here", "timestamp": 1})
        for turn in range(4):
            session.append_message(
                {"role": "user", "content": f"Question {turn} " + "words " * 20, "timestamp": 2}
            )
            session.append_message(_answer(f"Answer {turn} " + "more " * 20))
        session.append_custom_message("reminder", "Keep it short", True)
        plan = prepare_compaction(session.branch(), CompactionSettings(keep_recent_tokens=60))
        session.append_compaction(
            "## Goal\nFirst pass", plan.first_kept_entry_id, plan.tokens_before
        )
        session.append_label(first, "start")
        session.branch_with_summary(first, "The user explored another branch.")
        session.append_message({"role": "user", "content": "On the side branch", "timestamp": 3})
        session.append_message(_answer("Side answer"))
    assert_both_agree(reference_node, file)

    pi16 = pi16_takes_a_turn(
        reference_node,
        file,
        [
            {"op": "user", "text": "pi 1.6 here"},
            {
                "op": "assistant",
                "text": "Answer from pi 1.6",
                "calls": [["edit", {"path": "a.py"}]],
            },
            {"op": "contextEdit", "target": first, "replacement": None},
            {"op": "system", "content": "", "sections": {"rules": "<rules>new</rules>"}},
            {"op": "compactKeepingNothing", "summary": "## Goal\nNothing kept"},
            {"op": "usage", "kind": "cache_warm"},
            {"op": "user", "text": "after the compaction"},
            {"op": "assistant", "text": "noted"},
            {"op": "contextEdit", "target": "$-2", "replacement": {"content": "after, edited"}},
        ],
    )
    assert_both_agree(reference_node, file)

    with Session.open(file) as session:
        assert session.leaf_id == pi16["leafId"]
        session.append_message(
            {"role": "user", "content": "pi-lsp again " + "x " * 40, "timestamp": 4}
        )
        session.append_message(_answer("pi-lsp answers " + "y " * 40))
        plan = prepare_compaction(session.branch(), CompactionSettings(keep_recent_tokens=30))
        summarized = str(plan.messages_to_summarize + plan.turn_prefix_messages)
        assert "after, edited" in summarized and "after the compaction" not in summarized
        # What pi 1.6 itself would snapshot of its prompt state, compacting here.
        copy = tmp_path / "copy.jsonl"
        shutil.copy(file, copy)
        pi16_takes_a_turn(reference_node, copy, [{"op": "compactKeepingNothing", "summary": "x"}])
        expected_snapshot = json.loads(copy.read_text().splitlines()[-1])["systemMessage"]
        compaction = session.append_compaction(
            "## Goal\nSecond pass", plan.first_kept_entry_id, plan.tokens_before
        )
        snapshot = session.get_entry(compaction)["systemMessage"]
        assert json.dumps({**snapshot, "timestamp": 0}) == json.dumps(
            {**expected_snapshot, "timestamp": 0}
        )
        assert snapshot["sections"] == {"rules": "<rules>new</rules>"}
        session.move_leaf(pi16["appended"][1])
        session.append_message(
            {"role": "user", "content": "a branch from pi 1.6's answer", "timestamp": 5}
        )
    assert_both_agree(reference_node, file)
    pi16_takes_a_turn(reference_node, file, [{"op": "user", "text": "and pi 1.6 once more"}])
    assert_both_agree(reference_node, file)


def _answer(text: str) -> dict[str, Any]:
    return assistant_message(text, provider="openai", model="scripted", usage_=usage(100, 10))
