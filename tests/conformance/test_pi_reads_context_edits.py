"""Context edits pi-lsp writes (``pi/contextEdit``, ``pi/contextRestore``) read right in both pis.

The real server forgets a tool result, replaces a user message and an answer, and restores one,
between turns with the scripted model. Then pi 1.6 must build exactly pi-lsp's context at every
entry (``buildSessionContext``), pi 0.84.2 must open the file with the same tree and keep the
edited messages (it ignores the entries it does not know), and after pi 0.84.2 continues the file
with its own ``SessionManager``, pi 1.6 and pi-lsp still agree.
"""

from __future__ import annotations

import json
from pathlib import Path

from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from pi_lsp.session.session import Session
from tests.e2e.conftest import another_server, request

from .harness import REFERENCE_DIR, ask_pi, run_node_script
from .test_pi16_round_trip import PI16_SESSION_SCRIPT, SERVER_OPTIONS, assert_both_agree

PI_0842_DIR = REFERENCE_DIR / "node_modules" / "@earendil-works" / "pi-coding-agent"
SECRET = "sk-live-0c0ffee"
TOOL_OUTPUT = "return a - b"


async def write_session(workspace: Path) -> Path:
    """A session the server wrote, with every kind of edit pi-lsp makes; its file."""
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    async with ScriptedLLM() as llm:
        options = {**SERVER_OPTIONS, "apiBase": llm.base_url}
        async with another_server(workspace, options) as client:
            await edit_between_turns(client, llm)
    [path] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    return path


async def edit_between_turns(client, llm: ScriptedLLM) -> None:
    llm.enqueue(
        replies.tool_calls([("call_1", "read", {"path": "app.py"})]),
        replies.text("It subtracts."),
    )
    await request(client, "pi/prompt", {"text": f"Deploy key {SECRET}; read app.py."})
    llm.enqueue(replies.text("A long answer that should be shorter."))
    await request(client, "pi/prompt", {"text": "Explain."})
    rows = (await request(client, "pi/tree", {}))["entries"]
    by_role: dict[str, list[str]] = {}
    for row in rows:
        by_role.setdefault(row.get("role", row["type"]), []).append(row["id"])
    edits = [
        (by_role["toolResult"][0], None),
        (by_role["user"][0], "Deploy with my key; read app.py."),
        (by_role["assistant"][-1], "Short answer."),
    ]
    for target, replacement in edits:
        await request(client, "pi/contextEdit", {"targetId": target, "replacement": None})
        await request(client, "pi/contextEdit", {"targetId": target, "replacement": replacement})
    await request(client, "pi/contextRestore", {"targetId": by_role["assistant"][-1]})
    llm.enqueue(replies.text("Done."))
    await request(client, "pi/prompt", {"text": "Go on."})
    sent = json.dumps(llm.requests[-1]["messages"])
    assert SECRET not in sent and TOOL_OUTPUT not in sent
    assert "A long answer that should be shorter." in sent


async def test_both_pis_read_the_context_edits_pi_lsp_writes(reference_node, tmp_path):
    workspace = tmp_path / "project"
    workspace.mkdir()
    file = await write_session(workspace)
    kinds = [entry.type for entry in Session.open(file, writable=False).entries]
    assert kinds.count("context_edit") == 7

    ours = assert_both_agree(reference_node, file)  # pi 1.6: the same context everywhere
    leaf_context = json.dumps(ours["contexts"][None])
    assert SECRET not in leaf_context and TOOL_OUTPUT not in leaf_context

    [tree, context] = ask_pi(reference_node, [["tree", str(file)], ["context", str(file)]])
    assert tree["ok"] and context["ok"], (tree, context)
    assert [
        (entry["id"], entry["parentId"], entry["type"]) for entry in tree["result"]["entries"]
    ] == ours["tree"]["entries"]
    assert tree["result"]["leafId"] == ours["leafId"]
    kept = json.dumps(context["result"]["messages"])  # pi 0.84.2 ignores the edits
    assert SECRET in kept and TOOL_OUTPUT in kept

    continued = run_node_script(
        reference_node,
        PI16_SESSION_SCRIPT,
        [str(file), "-"],
        stdin=json.dumps(
            [{"op": "user", "text": "From pi 0.84.2."}, {"op": "assistant", "text": "Hello."}]
        ).encode(),
        variables={"PI16_REFERENCE_PI_DIR": f"{PI_0842_DIR}/"},
    )
    assert len(json.loads(continued)["appended"]) == 2
    after = assert_both_agree(reference_node, file)
    leaf_context = json.dumps(after["contexts"][None])
    assert "From pi 0.84.2." in leaf_context
    assert SECRET not in leaf_context and TOOL_OUTPUT not in leaf_context
