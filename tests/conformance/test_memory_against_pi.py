"""pi 0.84.2 reads the entries pi-lsp's memory beyond pi writes, and builds the same context.

The real server, with the scripted model, writes one session through every new kind of entry:
nested context files brought in on demand (``custom_message`` entries of type
``pi-lsp.context-file``, the second one replacing a changed file), an automatic compaction started
by ``compaction.threshold``, a manual compaction of a split turn with instructions, and
compactions whose summaries carry bounded file lists (``details`` with the complete lists, deleted
files marked in the text). pi then loads the file with its real ``SessionManager``: every line
must survive ``JSON.stringify`` unchanged, and pi must report the same leaf, tree and context at
every entry, with the nested rules reaching its context as user messages.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from pi_lsp.session.session import Session
from tests.e2e.conftest import another_server, request

from .test_pi_reads_ours import ROUND_TRIP_SCRIPT, ask_pi

MARKER = "NESTED-RULE-7f3a: use tabs in the api package"
CHANGED = "NESTED-RULE-v2: spaces after all"
SUMMARY = "## Goal\nShip the api package\n\n## Next Steps\n1. Run the tests"
OPTIONS = {
    "model": "openai/scripted",
    "autoName": False,
    "tokenizer": "chars4",
    "contextWindow": 100000,
    "compaction": {"keepRecentTokens": 100, "threshold": "50%", "fileListLimit": 2},
}


def padding(word: str) -> str:
    return f"{word} " * 30


async def write_session(workspace: Path, llm: ScriptedLLM) -> Path:
    package = workspace / "packages" / "api"
    (package / "src").mkdir(parents=True)
    (package / "AGENTS.md").write_text(MARKER + "\n")
    for number in range(4):
        (package / "src" / f"module_{number}.py").write_text(f"x = {number}\n")
    async with another_server(workspace, {**OPTIONS, "apiBase": llm.base_url}) as client:
        reads = [
            replies.tool_calls([(f"r{n}", "read", {"path": f"packages/api/src/module_{n}.py"})])
            for n in range(4)
        ]
        llm.enqueue(
            *reads,
            replies.tool_calls([("w1", "write", {"path": "packages/api/out.py", "content": ""})]),
            replies.text("Read them all. " + padding("details")),
        )
        await request(client, "pi/prompt", {"text": "Survey the api package. " + padding("ctx")})
        (package / "AGENTS.md").write_text(CHANGED + "\n")
        (package / "src" / "module_0.py").unlink()
        (package / "out.py").unlink()
        llm.enqueue(replies.text("Spaces it is. " + padding("details")))
        await request(client, "pi/prompt", {"text": "The rules changed. " + padding("ctx")})
        llm.enqueue(replies.text(SUMMARY))
        compacted = await request(client, "pi/compact", {"instructions": "Keep module names"})
        assert "(deleted)" in compacted["summary"] and "older file" in compacted["summary"]

        for number in range(2):  # so the next compaction's kept part stays after this one
            llm.enqueue(replies.text(f"Answer {number}. " + padding("details")))
            await request(client, "pi/prompt", {"text": f"Question {number}. " + padding("ctx")})
        large = {"prompt_tokens": 60000, "completion_tokens": 10, "total_tokens": 60010}
        llm.enqueue(
            replies.text("A long answer.", usage=large),
            replies.text(SUMMARY + "\n- [x] threshold"),
            replies.text("## Original Request\nKeep going"),
        )
        await request(client, "pi/prompt", {"text": "Keep going. " + padding("ctx")})
        llm.enqueue(
            replies.tool_calls([("r9", "ls", {"path": "packages/api"})]), replies.text("Listed.")
        )
        await request(client, "pi/prompt", {"text": "List the package. " + padding("ctx")})
    [path] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    return path


def lines_pi_rewrites_differently(node: Path, file: Path) -> list[str]:
    rewritten = subprocess.run(
        [str(node), "-e", ROUND_TRIP_SCRIPT, str(file)], capture_output=True, check=True
    )
    return json.loads(rewritten.stdout)


async def test_pi_reads_every_memory_entry_we_write_and_builds_the_same_context(
    reference_node, tmp_path
):
    workspace = tmp_path / "project"
    workspace.mkdir()
    async with ScriptedLLM() as llm:
        file = await write_session(workspace, llm)
    entries = [json.loads(line) for line in file.read_text().splitlines()]
    nested = [e for e in entries if e.get("customType") == "pi-lsp.context-file"]
    compactions = [e for e in entries if e["type"] == "compaction"]
    assert len(nested) >= 2 and len(compactions) == 2  # a manual one, then the threshold's

    assert lines_pi_rewrites_differently(reference_node, file) == []

    ours = Session.open(file, writable=False)
    [tree] = ask_pi(reference_node, [["tree", str(file)]])
    assert tree["ok"], tree
    assert tree["result"]["leafId"] == ours.leaf_id
    assert [(e["id"], e["parentId"], e["type"]) for e in tree["result"]["entries"]] == [
        (entry.id, entry.parent_id, entry.type) for entry in ours.entries
    ]

    queries = [["context", str(file), "--leaf", entry.id] for entry in ours.entries]
    answers = ask_pi(reference_node, queries)
    differing = [
        entry.id
        for entry, answer in zip(ours.entries, answers, strict=True)
        if answer.get("result") != ours.build_context(entry.id).to_json()
    ]
    assert differing == []
    at_first_injection = answers[[entry.id for entry in ours.entries].index(nested[0]["id"])]
    assert MARKER in json.dumps(at_first_injection["result"]["messages"][-1])
    at_leaf = json.dumps(answers[-1]["result"]["messages"])
    assert CHANGED in at_leaf  # the changed rules, brought back after the compactions
