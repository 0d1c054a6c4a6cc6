"""Extension files in ``.pi/extensions/`` driving the real server: the ``context``,
``before_agent_start``, ``tool_result`` and ``session_start`` hooks, trust and failures."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pi_lsp.scripted_llm import ScriptedLLM, replies
from tests.e2e.conftest import SCRIPTED_MODEL, another_server, request
from tests.extension_sources import BROKEN, MEMORY_NOTE, STATEFUL, TEAM, TEAM_RULE


def install(workspace: Path, **sources: str) -> None:
    folder = workspace / ".pi" / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in sources.items():
        (folder / f"{name}.py").write_text(source)


def options(llm: ScriptedLLM, **more) -> dict:
    return {"model": SCRIPTED_MODEL, "apiBase": llm.base_url, "autoName": False, **more}


def session_text(workspace: Path) -> str:
    [path] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    return path.read_text()


async def test_hooks_shape_what_the_model_sees_and_what_is_stored(workspace):
    (workspace / "secrets.env").write_text("API_KEY=sk-12345\n")
    install(workspace, broken=BROKEN, team=TEAM)  # the broken one loads first and is skipped
    async with ScriptedLLM() as llm, another_server(workspace, options(llm)) as client:
        llm.enqueue(replies.tool_calls([("call-1", "read", {"path": "secrets.env"})]))
        llm.enqueue(replies.text("Done."))
        result = await request(client, "pi/prompt", {"text": "read secrets.env"})
        assert result["stopReason"] == "stop"
    first, second = llm.requests
    for sent in (first, second):  # every request of the turn, the tool round's too
        assert TEAM_RULE in sent["messages"][0]["content"]
        assert MEMORY_NOTE in json.dumps(sent["messages"])
    assert "sk-12345" not in json.dumps(second) and "API_KEY=[redacted]" in json.dumps(second)
    stored = session_text(workspace)
    assert MEMORY_NOTE not in stored and TEAM_RULE not in stored  # chosen per request, not kept
    assert "sk-12345" not in stored and "API_KEY=[redacted]" in stored


async def test_session_start_restores_the_extensions_state_after_a_restart(workspace):
    install(workspace, stateful=STATEFUL)
    async with ScriptedLLM() as llm:
        async with another_server(workspace, options(llm)) as client:
            for text in ("one", "two"):
                llm.enqueue(replies.text("Ok."))
                await request(client, "pi/prompt", {"text": text})
        async with another_server(workspace, options(llm)) as client:  # the same session again
            llm.enqueue(replies.text("Ok."))
            await request(client, "pi/prompt", {"text": "three"})
    assert "Restored 2 turns." in llm.requests[-1]["messages"][0]["content"]
    entries = [json.loads(line) for line in session_text(workspace).splitlines()]
    counters = [entry["data"] for entry in entries if entry.get("customType") == "counter"]
    assert counters == [{"turn": 1}, {"turn": 2}, {"turn": 3}]


async def test_an_untrusted_workspace_does_not_load_the_project_extensions(workspace):
    install(workspace, team=TEAM)
    async with (
        ScriptedLLM() as llm,
        another_server(workspace, options(llm, trusted=False)) as client,
    ):
        llm.enqueue(replies.text("Ok."))
        await request(client, "pi/prompt", {"text": "hello"})
        resources = await request(client, "pi/resources", {})
    assert TEAM_RULE not in json.dumps(llm.requests) and MEMORY_NOTE not in json.dumps(llm.requests)
    assert any(".pi/extensions" in item["message"] for item in resources["diagnostics"])


async def test_extension_files_reload_as_they_change_and_a_broken_one_is_a_diagnostic(
    client, scripted_llm, workspace
):
    changes: list = []
    client.feature("pi/resourcesChanged")(lambda params: changes.append(params))
    folder = workspace / ".pi" / "extensions"
    folder.mkdir(parents=True)
    path = folder / "team.py"
    path.write_text(TEAM)  # the server is running: the watcher finds it
    await wait_for(lambda: any(ref["kind"] == "extension" for c in changes for ref in c["added"]))
    scripted_llm.enqueue(replies.text("One."), replies.text("Two."))
    await request(client, "pi/prompt", {"text": "one"})
    assert TEAM_RULE in scripted_llm.requests[-1]["messages"][0]["content"]
    path.write_text(TEAM.replace(TEAM_RULE, "Team rule: answer in limericks."))
    await wait_for(lambda: any(ref["kind"] == "extension" for c in changes for ref in c["changed"]))
    await request(client, "pi/prompt", {"text": "two"})
    assert "answer in limericks" in scripted_llm.requests[-1]["messages"][0]["content"]
    broken = folder / "broken.py"
    broken.write_text("import json\n\njson.loads('{')\n")
    await wait_for(lambda: bool(client.diagnostics.get(broken.as_uri())))
    [diagnostic] = client.diagnostics[broken.as_uri()]
    assert diagnostic.range.start.line == 2 and "JSONDecodeError" in diagnostic.message
    broken.unlink()
    await wait_for(lambda: len(client.diagnostics[broken.as_uri()]) == 0)  # cleared


async def wait_for(condition, timeout: float = 10.0) -> None:
    async def poll():
        while not condition():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


FORGETFUL = """
def context(event):
    for message, entry_id in zip(event.messages, event.entry_ids, strict=True):
        if message["role"] == "toolResult" and "BIG-OUTPUT" in str(message["content"]):
            event.edit_context(entry_id, "[a big output, forgotten by the extension]")
"""


async def test_a_context_hook_replaces_a_big_tool_result_for_the_following_requests(workspace):
    (workspace / "big.log").write_text("BIG-OUTPUT " * 200)
    install(workspace, forgetful=FORGETFUL)
    async with ScriptedLLM() as llm, another_server(workspace, options(llm)) as client:
        llm.enqueue(replies.tool_calls([("call-1", "read", {"path": "big.log"})]))
        llm.enqueue(replies.text("A big log."))
        await request(client, "pi/prompt", {"text": "read big.log"})
        llm.enqueue(replies.text("Nothing more."))
        await request(client, "pi/prompt", {"text": "and now?"})
    assert "BIG-OUTPUT" in json.dumps(llm.requests[1])  # the request the hook saw it in
    assert "BIG-OUTPUT" not in json.dumps(llm.requests[2])
    assert "forgotten by the extension" in json.dumps(llm.requests[2])
    entries = [json.loads(line) for line in session_text(workspace).splitlines()]
    [edit] = [entry for entry in entries if entry["type"] == "context_edit"]
    [output] = [e for e in entries if e.get("message", {}).get("role") == "toolResult"]
    assert edit["targetId"] == output["id"] and "BIG-OUTPUT" in json.dumps(output)
