"""The other direction: session files written by pi-lsp open in pi 0.84.2 with the same context.

pi-lsp writes a varied set of sessions through its own ``Session`` API (branches, compactions,
branch summaries, labels, bash executions, custom messages, non-ASCII text, a fork). pi then
loads each file with its real ``SessionManager`` and must report the same leaf, the same tree and
the same LLM context at every entry; and re-serializing any line with ``JSON.stringify`` must
give back exactly the bytes pi-lsp wrote.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pi_lsp.session.fork import fork_session
from pi_lsp.session.session import Session
from tests.builders import assistant_message, tool_call, user_text

from .harness import ask_pi

ROUND_TRIP_SCRIPT = """
const fs = require("fs");
const bad = [];
for (const file of process.argv.slice(1)) {
  const lines = fs.readFileSync(file, "utf8").split("\\n").filter((line) => line !== "");
  lines.forEach((line, index) => {
    if (JSON.stringify(JSON.parse(line)) !== line) bad.push(`${file}:${index + 1}`);
  });
}
console.log(JSON.stringify(bad));
"""


def priced_usage(cost: float) -> dict:
    return {
        "input": 1000,
        "output": 50,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 1050,
        "cost": {
            "input": cost,
            "output": 1.0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": 1.0 + cost,
        },
    }


def signed_answer(
    text: str, at: int, *, tool: tuple[str, str, dict] | None = None, cost: float = 0.0000031
) -> dict:
    """An answer with what pi must read back: a signed thinking block, a tool call, a price."""
    thought = {"type": "thinking", "thinking": "Let me think… 🤔", "thinkingSignature": "sig"}
    calls = [tool_call(tool[1], tool[0], **tool[2])] if tool else []
    return assistant_message(
        thought,
        text,
        *calls,
        api="openai-completions",
        provider="openai",
        model="gpt-4o",
        usage_=priced_usage(cost),
        stop_reason="toolUse" if tool else "stop",
        timestamp=at,
    )


def tool_result(call_id: str, name: str, text: str, at: int) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "details": {"lines": 3},
        "isError": False,
        "timestamp": at,
    }


def write_sessions(directory: Path) -> list[Path]:
    paths = []
    with Session.create(directory, "/work/projet-été") as session:
        session.append_model_change("openai", "gpt-4o")
        session.append_thinking_level_change("high")
        first = session.append_message(user_text("Répare le test 😀 — 修复测试", 1_767_225_600_000))
        session.append_message(
            signed_answer(
                "Reading.", 1_767_225_601_000, tool=("c1", "read", {"path": "src/app.py"})
            )
        )
        session.append_message(
            tool_result("c1", "read", "def add(a, b):\n    return a - b\n" * 200, 1_767_225_602_000)
        )
        session.append_message(
            signed_answer(
                "Fixing.",
                1_767_225_603_000,
                tool=(
                    "c2",
                    "edit",
                    {
                        "path": "src/app.py",
                        "edits": [{"oldText": "-", "newText": "+"}],
                        "10": 1.5e-7,
                    },
                ),
            )
        )
        session.append_message(tool_result("c2", "edit", "ok", 1_767_225_604_000))
        answer = session.append_message(signed_answer("Done.", 1_767_225_605_000))
        session.append_message(
            {
                "role": "bashExecution",
                "command": "pytest -q",
                "output": "1 passed\n",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "timestamp": 1_767_225_606_000,
            }
        )
        session.append_message(
            {
                "role": "bashExecution",
                "command": "make lint",
                "output": "x" * 50,
                "exitCode": 2,
                "cancelled": False,
                "truncated": True,
                "fullOutputPath": "/tmp/out.log",
                "timestamp": 1_767_225_607_000,
            }
        )
        session.append_custom_message(
            "reminder", "Remember the style guide", True, details={"source": "hook"}
        )
        session.append_custom_message("hidden", [{"type": "text", "text": "hidden context"}], False)
        session.append_custom("editor-file-ops", {"read": ["README.md"], "modified": []})
        session.append_compaction(
            "## Goal\nFix the test",
            first,
            12345,
            details={"readFiles": ["src/app.py"], "modifiedFiles": []},
        )
        session.append_message(user_text("And now the docs", 1_767_225_608_000))
        session.append_label(first, "start")
        session.append_label(answer, "answer")
        session.append_label(first, "")  # cleared again
        session.move_leaf(answer)
        session.append_message(user_text("Try another way", 1_767_225_609_000))
        session.branch_with_summary(
            first,
            "The user explored a different branch.",
            details={"readFiles": ["a"], "modifiedFiles": ["b"]},
        )
        session.append_message(signed_answer("Back here.", 1_767_225_610_000))
        session.append_session_info("Projet\nété")
        paths.append(session.path)
        with fork_session(session, answer) as fork:
            paths.append(fork.path)
    with Session.create(directory, "/work") as roots:
        roots.append_message(user_text("first root", 1_767_225_700_000))
        roots.reset_leaf()
        roots.append_message(user_text("second root", 1_767_225_701_000))
        roots.append_message(signed_answer("reply", 1_767_225_702_000, cost=0.25))
        paths.append(roots.path)
    return paths


@pytest.fixture(scope="module")
def our_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_sessions(tmp_path_factory.mktemp("written-by-pi-lsp"))


def test_pi_rewrites_every_line_we_wrote_to_the_same_bytes(reference_node, our_files):
    result = subprocess.run(
        [str(reference_node), "-e", ROUND_TRIP_SCRIPT, *map(str, our_files)],
        capture_output=True,
        check=True,
    )
    assert json.loads(result.stdout) == []


def test_pi_sees_our_tree_leaf_and_labels(reference_node, our_files):
    answers = ask_pi(reference_node, [["tree", str(path)] for path in our_files])
    for path, answer in zip(our_files, answers, strict=True):
        assert answer["ok"], answer
        pi_tree = answer["result"]
        ours = Session.open(path, writable=False)
        assert pi_tree["leafId"] == ours.leaf_id
        assert pi_tree["name"] == ours.name
        assert [(item["id"], item["parentId"], item["type"]) for item in pi_tree["entries"]] == [
            (entry.id, entry.parent_id, entry.type) for entry in ours.entries
        ]
        assert pi_tree["labels"] == ours.labels


def test_pi_builds_the_same_context_at_every_entry(reference_node, our_files):
    queries, expected = [], []
    for path in our_files:
        session = Session.open(path, writable=False)
        for entry in session.entries:
            queries.append(["context", str(path), "--leaf", entry.id])
            expected.append(session.build_context(entry.id).to_json())
    answers = ask_pi(reference_node, queries)
    mismatches = [
        query
        for query, answer, ours in zip(queries, answers, expected, strict=True)
        if answer.get("result") != ours
    ]
    assert len(queries) > 30 and mismatches == []
