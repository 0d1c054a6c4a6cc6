"""``pi-lsp acp`` as a client written from ACP's schema sees it: the order of the lines on the
wire, what an update replaces, refusals, ``session/close``, error codes, and every line checked
against ACP's published v1 JSON schema (``wire.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.scripted_llm import replies
from tests.e2e.acp.wire import Refusal, WireClient, client_terminals, disk_files, wire_agent

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(autouse=True)
def every_reply_used(scripted_llm):
    """A reply a test left would answer the next test's prompt: fail here instead."""
    yield
    left = len(scripted_llm._queue)
    scripted_llm._queue.clear()
    assert not left, f"{left} scripted replies were left unused"


FILES = {"fs": {"readTextFile": True, "writeTextFile": True}}


def _text(prompt: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": prompt}]


async def _new_session(client: WireClient, workspace: Path, **params: Any) -> str:
    answer = await client.request(
        "session/new", {"cwd": str(workspace), "mcpServers": [], **params}
    )
    return answer["result"]["sessionId"]


async def _prompt(client: WireClient, session_id: str, text: str) -> dict[str, Any]:
    return await client.request("session/prompt", {"sessionId": session_id, "prompt": _text(text)})


def _read_then_edit(text_before_read: str) -> tuple:
    edit = {"path": "app.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]}
    return (
        replies.tool_calls([("call-1", "read", {"path": "app.py"})], text=text_before_read),
        replies.tool_calls([("call-2", "edit", edit)]),
        replies.text("Fixed."),
    )


def _tool_updates(client: WireClient, call_id: str) -> list[dict[str, Any]]:
    return [update for update in client.updates() if update.get("toolCallId") == call_id]


async def test_a_new_sessions_updates_come_after_the_response_that_names_it(
    scripted_llm, workspace
):
    """SDK session helpers drop updates of a session they do not know yet."""
    async with wire_agent(scripted_llm, workspace) as client:
        session_id = await _new_session(client, workspace)
        await _prompt(client, session_id, "/tree")  # reads on until the command list came
        named = client.index(lambda line: line.get("result", {}).get("sessionId") == session_id)
        first_update = client.index(lambda line: line.get("method") == "session/update")
        assert named < first_update
        commands = next(
            update
            for update in client.updates()
            if update["sessionUpdate"] == "available_commands_update"
        )
        assert "tree" in {command["name"] for command in commands["availableCommands"]}


async def test_fs_requests_come_after_the_updates_that_explain_them(scripted_llm, workspace):
    scripted_llm.enqueue(*_read_then_edit("Let me read it."))
    async with wire_agent(scripted_llm, workspace, disk_files(), FILES) as client:
        session_id = await _new_session(client, workspace)
        answer = await _prompt(client, session_id, "fix add")
        assert answer["result"]["stopReason"] == "end_turn"

    def update_of(kind: str, call_id: str | None = None):
        def matches(line: dict[str, Any]) -> bool:
            update = line.get("params", {}).get("update", {})
            return update.get("sessionUpdate") == kind and (
                call_id is None or update.get("toolCallId") == call_id
            )

        return matches

    read = client.index(lambda line: line.get("method") == "fs/read_text_file")
    write = client.index(lambda line: line.get("method") == "fs/write_text_file")
    assert client.index(update_of("agent_message_chunk")) < read
    assert client.index(update_of("tool_call", "call-1")) < read
    assert client.index(update_of("tool_call", "call-2")) < write
    assert (workspace / "app.py").read_text() == "def add(a, b):\n    return a + b\n"


async def test_the_last_update_of_an_edit_keeps_its_diff_live_and_on_load(scripted_llm, workspace):
    """ACP: ``content`` in a ``tool_call_update`` replaces the tool call's content."""
    scripted_llm.enqueue(*_read_then_edit("Reading."))
    async with wire_agent(scripted_llm, workspace) as client:
        session_id = await _new_session(client, workspace)
        await _prompt(client, session_id, "fix add")
        live = _tool_updates(client, "call-2")[-1]
        loaded = len(client.lines)
        await client.request(
            "session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
        )
        replayed = [
            line["params"]["update"]
            for line in client.lines[loaded:]
            if line.get("params", {}).get("update", {}).get("toolCallId") == "call-2"
        ][-1]
    app = str(workspace / "app.py")
    for final in (live, replayed):
        assert final["status"] == "completed"
        diff, result = final["content"]
        assert diff == {"type": "diff", "path": app, "oldText": "a - b", "newText": "a + b"}
        assert result["content"]["text"].startswith("Replaced 1 block in app.py")


async def test_a_client_that_refuses_requests_gets_nothing_on_stderr(scripted_llm, workspace):
    """acp.el shows every stderr chunk to the user as an error; a client refusing a permission
    question, a write or a terminal is an expected answer, not a fault."""

    async def refuse(params: dict[str, Any]) -> dict[str, Any]:
        raise Refusal(-32601, "not offered")

    scripted_llm.enqueue(
        replies.tool_calls([("call-1", "bash", {"command": "echo hi"})]),
        replies.tool_calls([("call-2", "write", {"path": "notes.md", "content": "hi\n"})]),
        replies.tool_calls([("call-3", "bash", {"command": "echo again"})]),
        replies.text("Fine."),
    )
    answers = {
        "session/request_permission": refuse,
        "fs/write_text_file": refuse,
        "terminal/create": refuse,
    }
    capabilities = {"fs": {"writeTextFile": True}, "terminal": True}
    options = {"permissions": {"bash": {"ask": True, "allow": ["echo again"]}}}
    async with wire_agent(scripted_llm, workspace, answers, capabilities, **options) as client:
        session_id = await _new_session(client, workspace)
        answer = await _prompt(client, session_id, "say hi")
        assert answer["result"]["stopReason"] == "end_turn"
        assert _tool_updates(client, "call-1")[-1]["status"] == "failed"  # not allowed
        assert _tool_updates(client, "call-2")[-1]["status"] == "completed"  # on the disk
        assert _tool_updates(client, "call-3")[-1]["status"] == "completed"  # run by pi-lsp
        asked = [line.get("method") for line in client.lines if "id" in line and "method" in line]
        assert set(asked) == set(answers), "each refusal was tried"
    assert (workspace / "notes.md").read_text() == "hi\n"
    assert client.stderr == b"", client.stderr.decode(errors="replace")


def _error_code(answer: dict[str, Any]) -> int:
    assert "error" in answer, answer
    return answer["error"]["code"]


async def test_close_forgets_a_session_and_load_opens_it_again(scripted_llm, workspace):
    scripted_llm.enqueue(replies.text("Hello."))
    async with wire_agent(scripted_llm, workspace) as client:
        initialized = client.lines[0]["result"]
        assert initialized["agentCapabilities"]["sessionCapabilities"]["close"] == {}
        session_id = await _new_session(client, workspace)
        await _prompt(client, session_id, "hi")
        closed = await client.request("session/close", {"sessionId": session_id})
        assert closed["result"] == {}
        assert _error_code(await _prompt(client, session_id, "still there?")) == -32002
        again = await client.request("session/close", {"sessionId": session_id})
        assert _error_code(again) == -32002
        loading = len(client.lines)
        loaded = await client.request(
            "session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
        )
        assert "result" in loaded
        replayed = [line["params"]["update"] for line in client.lines[loading:-1]]
        texts = [update["content"]["text"] for update in replayed if "content" in update]
        assert "hi" in texts and "Hello." in texts


async def test_unknown_sessions_are_acps_resource_not_found(scripted_llm, workspace):
    async with wire_agent(scripted_llm, workspace) as client:
        for method in ("session/load", "session/resume"):
            params = {"sessionId": "no-such-session", "cwd": str(workspace), "mcpServers": []}
            assert _error_code(await client.request(method, params)) == -32002, method


async def test_a_config_option_takes_only_the_values_it_offers(scripted_llm, workspace):
    async with wire_agent(scripted_llm, workspace) as client:
        session_id = await _new_session(client, workspace)

        async def set_option(config_id: str, value: Any) -> dict[str, Any]:
            params = {"sessionId": session_id, "configId": config_id, "value": value}
            return await client.request("session/set_config_option", params)

        refused = await set_option("model", "nonexistent/model")
        assert _error_code(refused) == -32602
        assert "not one of its options" in refused["error"]["message"]
        unknown = await set_option("colour", "blue")
        assert _error_code(unknown) == -32602
        assert "unknown configId 'colour'" in unknown["error"]["message"]
        changed = await set_option("thinking_level", "high")
        current = {
            option["id"]: option["currentValue"] for option in changed["result"]["configOptions"]
        }
        assert current == {"model": "openai/scripted", "thinking_level": "high"}


async def test_model_command_refuses_a_model_no_path_sends(scripted_llm, workspace):
    """/model stays free-form (any litellm provider), but a provider nothing sends to is refused
    before the switch: no model_change is written and the next turn still works."""
    async with wire_agent(scripted_llm, workspace) as client:
        session_id = await _new_session(client, workspace)
        refused = await _prompt(client, session_id, "/model nonexistent/model")
        assert _error_code(refused) == -32602
        assert "unknown model 'nonexistent/model'" in refused["error"]["message"]
        accepted = await _prompt(client, session_id, "/model bedrock/anthropic.claude-v2")
        assert "error" not in accepted
        switched_back = await _prompt(client, session_id, "/model openai/scripted")
        assert "error" not in switched_back
        scripted_llm.enqueue(replies.text("Still here."))
        assert (await _prompt(client, session_id, "hi"))["result"]["stopReason"] == "end_turn"
    written = "".join(path.read_text() for path in workspace.rglob("*.jsonl"))
    assert "nonexistent" not in written and "anthropic.claude-v2" in written


async def test_model_command_refuses_a_model_only_vs_code_provides(scripted_llm, workspace):
    """An ACP client lends no models of its own: ``vscode-lm/…`` is refused, saying why."""
    async with wire_agent(scripted_llm, workspace) as client:
        session_id = await _new_session(client, workspace)
        refused = await _prompt(client, session_id, "/model vscode-lm/copilot/gpt-5-mini")
        assert _error_code(refused) == -32602
        assert "only the Pi extension for VS Code can run it" in refused["error"]["message"]


async def test_a_session_gets_its_title_from_the_first_prompt_and_from_name(
    scripted_llm, workspace
):
    scripted_llm.enqueue(replies.text("Fixed."), replies.text("Done."))

    def titles() -> list[str]:
        return [
            update["title"]
            for update in client.updates()
            if update["sessionUpdate"] == "session_info_update"
        ]

    async with wire_agent(scripted_llm, workspace) as client:
        session_id = await _new_session(client, workspace)
        await _prompt(client, session_id, "fix the add function")
        assert titles() == ["fix the add function"]
        await _prompt(client, session_id, "/name my-session")
        said = [u["content"]["text"] for u in client.updates() if "content" in u]
        assert "Session named 'my-session'." in said
        await _prompt(client, session_id, "and the tests")
        assert titles() == ["fix the add function", "my-session"]
        listed = await client.request("session/list", {"cwd": str(workspace)})
        assert [info["title"] for info in listed["result"]["sessions"]] == ["my-session"]


async def test_an_mcp_server_passed_that_fails_to_start_is_said_once(scripted_llm, workspace):
    scripted_llm.enqueue(replies.text("Hello."), replies.text("Again."))
    server = {"name": "files", "command": "/bin/true", "args": [], "env": []}

    def notices() -> list[str]:
        return [
            update["content"]["text"]
            for update in client.updates()
            if "MCP" in update.get("content", {}).get("text", "")
        ]

    async with wire_agent(scripted_llm, workspace) as client:
        session_id = await _new_session(client, workspace, mcpServers=[server])
        await _prompt(client, session_id, "hi")
        while not notices():  # the server starts (and fails) in the background
            await asyncio.sleep(0.05)
        params = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": [server]}
        await client.request("session/resume", params)  # the same server: not started again
        await _prompt(client, session_id, "again")
        [notice] = notices()
        assert notice.startswith('MCP server "files" failed to start: ')


def _said(client: WireClient, since: int = 0) -> str:
    lines = client.lines[since:]
    updates = [line["params"]["update"] for line in lines if line.get("method") == "session/update"]
    return "".join(update.get("content", {}).get("text", "") for update in updates)


async def test_the_id_a_client_holds_leads_to_the_conversation_it_continued(
    scripted_llm, workspace
):
    """After ``/new`` or ``/fork``, in this process and the next one (Zed's history,
    CodeCompanion's ``/resume`` and agent-shell keep threads by the id of ``session/new``)."""
    scripted_llm.enqueue(
        replies.text("First answer."), replies.text("Second answer."), replies.text("Third.")
    )
    async with wire_agent(scripted_llm, workspace) as client:
        thread = await _new_session(client, workspace)
        await _prompt(client, thread, "first conversation")
        await _prompt(client, thread, "/new")
        await _prompt(client, thread, "second conversation")
        await _prompt(client, thread, "/fork")
        await _prompt(client, thread, "third conversation")
    params = {"sessionId": thread, "cwd": str(workspace), "mcpServers": []}
    async with wire_agent(scripted_llm, workspace) as client:
        listed = await client.request("session/list", {"cwd": str(workspace)})
        sessions = listed["result"]["sessions"]
        assert thread in [info["sessionId"] for info in sessions]
        assert len(sessions) == 2, "the first conversation, left by /new, is not listed"
        loading = len(client.lines)
        await client.request("session/load", params)
        replayed = _said(client, loading)
        assert "second conversation" in replayed and "third conversation" in replayed
        assert "first conversation" not in replayed


async def test_a_new_session_never_written_leaves_the_id_where_it_was(scripted_llm, workspace):
    scripted_llm.enqueue(replies.text("First answer."))
    async with wire_agent(scripted_llm, workspace) as client:
        thread = await _new_session(client, workspace)
        await _prompt(client, thread, "first conversation")
        await _prompt(client, thread, "/new")
    params = {"sessionId": thread, "cwd": str(workspace), "mcpServers": []}
    async with wire_agent(scripted_llm, workspace) as client:
        listed = await client.request("session/list", {"cwd": str(workspace)})
        assert [info["sessionId"] for info in listed["result"]["sessions"]] == [thread]
        await client.request("session/load", params)
        assert "first conversation" in _said(client)


async def test_every_kind_of_message_pi_lsp_sends_is_valid_acp(scripted_llm, workspace):
    """Each line is checked against ACP's v1 schema as it arrives (``wire.py``): here a session
    that sends as many kinds of message as pi-lsp has."""

    async def allow_once(params: dict[str, Any]) -> dict[str, Any]:
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    scripted_llm.enqueue(
        replies.tool_calls([("call-1", "bash", {"command": "echo hi"})], text="Running."),
        replies.tool_calls([("call-2", "write", {"path": "notes.md", "content": "hi\n"})]),
        replies.text("Done.", reasoning="It printed hi."),
        replies.text("## Goal\nKeep going."),  # the compaction's summary
    )
    answers = {**disk_files(), **client_terminals(), "session/request_permission": allow_once}
    capabilities = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
    options = {
        "permissions": {"bash": "ask", "write": "ask"},
        "compaction": {"keepRecentTokens": 5, "reserveTokens": 100},
        "tokenizer": "chars4",
    }
    async with wire_agent(scripted_llm, workspace, answers, capabilities, **options) as client:
        session_id = await _new_session(client, workspace)
        await _prompt(client, session_id, "run echo hi, then write notes")
        for command in ("/compact", "/tree", "/model openai/scripted", "/label nothing"):
            await _prompt(client, session_id, command)
        params = {"sessionId": session_id, "configId": "thinking_level", "value": "low"}
        await client.request("session/set_config_option", params)
        await client.request("session/list", {"cwd": str(workspace)})
        params = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
        await client.request("session/resume", params)
        await client.request("session/load", params)
        await client.request("session/close", {"sessionId": session_id})
    sent = {line["method"] for line in client.lines if "method" in line}
    assert sent >= {
        "session/update",
        "session/request_permission",
        "terminal/create",
        "terminal/output",
        "fs/write_text_file",
    }
    kinds = {update["sessionUpdate"] for update in client.updates()}
    assert kinds >= {
        "available_commands_update",
        "agent_message_chunk",
        "agent_thought_chunk",
        "user_message_chunk",
        "tool_call",
        "tool_call_update",
        "usage_update",
        "session_info_update",
        "config_option_update",
    }
    assert any("error" in line for line in client.lines), "an error answer was checked too"


async def test_the_schema_check_refuses_what_acp_does_not_define():
    from tests.e2e.acp.wire import check_against_schema

    update = {"sessionUpdate": "tool_call_update", "status": "completed"}  # no toolCallId
    notification = {"jsonrpc": "2.0", "method": "session/update"}
    with pytest.raises(AssertionError, match="is not valid under any of the given schemas"):
        check_against_schema({**notification, "params": {"sessionId": "s", "update": update}}, None)
    with pytest.raises(AssertionError, match="stopReason"):
        check_against_schema({"jsonrpc": "2.0", "id": 3, "result": {}}, "session/prompt")
    check_against_schema(
        {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}, "session/prompt"
    )
