"""Forget, replace and restore a message of the context (``pi/contextEdit``, ``pi/contextRestore``),
end to end: what the next model request carries, the entries written, and the refusals.

``tests/conformance/test_pi_reads_context_edits.py`` has pi 1.6 build the context of such a file
and pi 0.84.2 open and continue it.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol.types import ErrorCodes
from pygls.exceptions import JsonRpcException

from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request
from tests.e2e.test_compaction import entries, session_file

TOOL_OUTPUT = "return a - b"
"""What the read tool returns of ``app.py`` (the workspace fixture's file)."""


def sent(scripted_llm, index: int = -1) -> str:
    return json.dumps(scripted_llm.requests[index]["messages"], ensure_ascii=False)


def entry_of(workspace, entry_type: str, role: str | None = None) -> dict:
    return next(
        entry
        for entry in entries(workspace)
        if entry["type"] == entry_type and (role is None or entry["message"]["role"] == role)
    )


async def prompt(client, scripted_llm, text: str, answer: str = "Noted.") -> dict:
    scripted_llm.enqueue(replies.text(answer))
    return await request(client, "pi/prompt", {"text": text})


async def test_a_forgotten_tool_result_is_left_out_of_the_next_request(
    client, scripted_llm, workspace
):
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "read", {"path": "app.py"})]), replies.text("It subtracts.")
    )
    await request(client, "pi/prompt", {"text": "What does app.py do?"})
    assert TOOL_OUTPUT in sent(scripted_llm)
    result_entry = entry_of(workspace, "message", "toolResult")

    edit = await request(
        client, "pi/contextEdit", {"targetId": result_entry["id"], "replacement": None}
    )
    assert edit["contextEdit"] == "removed" and edit["leafId"] == edit["entryId"]
    changed = [e for e in client.pi_events.events() if e["type"] == "tree_changed"][-1]
    assert changed["contextEdits"] == {result_entry["id"]: "removed"}
    assert [row["id"] for row in changed["entries"]] == [edit["entryId"]]
    written = entries(workspace)[-1]
    assert list(written) == ["type", "id", "parentId", "timestamp", "targetId", "replacement"]
    assert written == {
        **written,
        "type": "context_edit",
        "id": edit["entryId"],
        "targetId": result_entry["id"],
        "replacement": None,
    }
    assert entry_of(workspace, "message", "toolResult") == result_entry  # the raw entry stays

    await prompt(client, scripted_llm, "Go on.")
    assert TOOL_OUTPUT not in sent(scripted_llm)
    assert "It subtracts." in sent(scripted_llm)
    tree = await request(client, "pi/tree", {})
    [row] = [row for row in tree["entries"] if row["id"] == result_entry["id"]]
    assert row["contextEdit"] == "removed"


async def test_replace_restore_and_navigating_before_the_edit(client, scripted_llm, workspace):
    await prompt(client, scripted_llm, "My key is sk-live-secret, deploy with it.", "Deployed.")
    user = entry_of(workspace, "message", "user")

    edit = await request(
        client, "pi/contextEdit", {"targetId": user["id"], "replacement": "Deploy with my key."}
    )
    assert edit["contextEdit"] == "replaced"
    assert entries(workspace)[-1]["replacement"] == {"content": "Deploy with my key."}
    await prompt(client, scripted_llm, "Again.")
    assert "sk-live-secret" not in sent(scripted_llm)
    assert "Deploy with my key." in sent(scripted_llm)
    after_replacement = (await request(client, "pi/state", {}))["leafId"]

    restored = await request(client, "pi/contextRestore", {"targetId": user["id"]})
    assert "contextEdit" not in restored
    changed = [e for e in client.pi_events.events() if e["type"] == "tree_changed"][-1]
    assert changed["contextEdits"] == {user["id"]: None}
    assert entries(workspace)[-1]["replacement"] == {"content": user["message"]["content"]}
    await prompt(client, scripted_llm, "Once more.")
    assert "sk-live-secret" in sent(scripted_llm)
    tree = await request(client, "pi/tree", {})
    [row] = [row for row in tree["entries"] if row["id"] == user["id"]]
    assert "contextEdit" not in row
    with pytest.raises(JsonRpcException, match="nothing to restore"):
        await request(client, "pi/contextRestore", {"targetId": user["id"]})

    # Edits are branch-relative: before the edit the original is back.
    await request(client, "pi/navigate", {"targetId": edit["entryId"]})
    await prompt(client, scripted_llm, "On the edited branch.")
    assert "sk-live-secret" not in sent(scripted_llm)
    assistant = entry_of(workspace, "message", "assistant")
    await request(client, "pi/navigate", {"targetId": assistant["id"]})
    await prompt(client, scripted_llm, "Before the edit.")
    assert "sk-live-secret" in sent(scripted_llm)
    assert after_replacement  # the replacement's branch is still in the file
    assert any(entry["id"] == after_replacement for entry in entries(workspace))


async def test_an_assistant_replacement_is_one_text_block(client, scripted_llm, workspace):
    await prompt(client, scripted_llm, "Hello.", "A very long answer.")
    assistant = entry_of(workspace, "message", "assistant")
    await request(client, "pi/contextEdit", {"targetId": assistant["id"], "replacement": "Short."})
    replacement = entries(workspace)[-1]["replacement"]
    assert replacement == {"content": [{"type": "text", "text": "Short."}]}
    await prompt(client, scripted_llm, "And?")
    assert "Short." in sent(scripted_llm) and "A very long answer." not in sent(scripted_llm)


async def test_bad_edits_get_clear_errors_and_write_nothing(client, scripted_llm, workspace):
    await prompt(client, scripted_llm, "Hello.")
    user = entry_of(workspace, "message", "user")
    label = await request(client, "pi/label", {"entryId": user["id"], "label": "start"})
    before = session_file(workspace).read_bytes()

    async def refused(params: dict, code: int, match: str) -> None:
        with pytest.raises(JsonRpcException, match=match) as raised:
            await request(client, "pi/contextEdit", params)
        assert raised.value.code == code
        assert session_file(workspace).read_bytes() == before

    invalid = ErrorCodes.InvalidParams
    await refused({"targetId": "nope", "replacement": None}, -32002, "entry nope not found")
    await refused(
        {"targetId": label["entryId"], "replacement": None},
        invalid,
        "label entry, not a user, assistant, tool-result or custom message",
    )
    await refused({"targetId": user["id"], "replacement": 42}, invalid, "replacement")
    await refused({"targetId": user["id"]}, invalid, "replacement")
    with pytest.raises(JsonRpcException, match="nothing to restore") as raised:
        await request(client, "pi/contextRestore", {"targetId": user["id"]})
    assert raised.value.code == invalid

    scripted_llm.enqueue(replies.hang(30))
    client.pi_events.notifications.clear()
    turn = asyncio.ensure_future(request(client, "pi/prompt", {"text": "Take your time."}))
    await client.pi_events.wait_for("agent_start")
    with pytest.raises(JsonRpcException, match="cannot edit the context while") as raised:
        await request(client, "pi/contextEdit", {"targetId": user["id"], "replacement": None})
    assert raised.value.code == -32011
    assert not [entry for entry in entries(workspace) if entry["type"] == "context_edit"]
    await request(client, "pi/abort", {})
    await asyncio.wait_for(turn, 15)


async def inspected(client) -> dict:
    """``pi/context``, checked to add up and to agree with ``pi/state``'s meter."""
    context = await request(client, "pi/context", {})
    state = await request(client, "pi/state", {})
    assert sum(part["tokens"] for part in context["parts"]) == context["total"]
    assert context["total"] == state["contextUsage"]["tokens"]
    assert context["contextWindow"] == state["contextUsage"]["contextWindow"]
    assert context["freeToWindow"] == context["contextWindow"] - context["total"]
    assert context["freeToCompaction"] == context["compactAt"] - context["total"]
    return context


async def test_the_inspector_shows_every_part_and_what_forgetting_frees(
    client, scripted_llm, workspace
):
    fresh = await inspected(client)
    kinds = [part["kind"] for part in fresh["parts"]]
    assert fresh["basis"] == "estimate" and fresh["total"] > 0
    assert kinds[0] == "base" and "tools" in kinds and "environment" in kinds
    [agents] = [part for part in fresh["parts"] if part["kind"] == "contextFile"]
    assert agents["path"].endswith("AGENTS.md") and agents["tokens"] > 0
    assert not [part for part in fresh["parts"] if part["kind"] == "message"]

    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "read", {"path": "app.py"})]), replies.text("It subtracts.")
    )
    await request(client, "pi/prompt", {"text": "What does app.py do?"})
    answered = await inspected(client)
    assert answered["basis"] == "usage"
    messages = [part for part in answered["parts"] if part["kind"] == "message"]
    assert [part["role"] for part in messages] == ["user", "assistant", "toolResult", "assistant"]
    assert messages[0]["preview"] == "What does app.py do?"
    assert all(part["entryId"] for part in messages)
    [difference] = [part for part in answered["parts"] if part["kind"] == "usageDifference"]
    assert answered["parts"].index(difference) == len(answered["parts"]) - 1  # all were counted
    output = messages[2]

    await request(client, "pi/contextEdit", {"targetId": output["entryId"], "replacement": None})
    forgotten = await inspected(client)
    assert forgotten["basis"] == "estimate"  # the reported usage counted the forgotten output
    [removed] = [part for part in forgotten["parts"] if part.get("contextEdit") == "removed"]
    assert removed["entryId"] == output["entryId"] and removed["tokens"] == 0
    after = {part["entryId"]: part for part in forgotten["parts"] if part.get("entryId")}
    assert after[messages[0]["entryId"]]["tokens"] == messages[0]["tokens"]

    await request(
        client, "pi/contextEdit", {"targetId": messages[0]["entryId"], "replacement": "Hi."}
    )
    replaced = await inspected(client)
    [part] = [part for part in replaced["parts"] if part.get("entryId") == messages[0]["entryId"]]
    assert part["contextEdit"] == "replaced" and part["preview"] == "Hi."
    assert replaced["total"] < forgotten["total"]
