"""``pi-lsp acp`` end to end: the ACP SDK's own client side drives the real process over stdio,
with the scripted model behind the real litellm client.

Most tests share one warm ``pi-lsp acp`` process (``agent``), each on a workspace of its own (ACP
sessions name their ``cwd``), so litellm's import is paid once; tests that need other settings
or another client start their own (``acp_agent``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import (
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ClientCapabilities,
    ResourceContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from pi_lsp.client import isolated_environment
from pi_lsp.scripted_llm import replies
from tests.e2e.acp.support import (
    HOME,
    RecordingClient,
    acp_agent,
    acp_command,
    start_streaming,
)
from tests.scripted_llm_fixtures import read_then_edit_app

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def warm(scripted_llm, tmp_path_factory):
    async with acp_agent(scripted_llm, tmp_path_factory.mktemp("acp-shared")) as (
        connection,
        client,
        _,
    ):
        yield connection, client


@contextlib.asynccontextmanager
async def reuse(agent):
    connection, client = agent
    yield connection, client, None


async def test_initialize_advertises_what_pi_lsp_supports(scripted_llm, workspace):
    async with acp_agent(scripted_llm, workspace) as (_, _, answer):
        assert answer.protocol_version == PROTOCOL_VERSION
        assert answer.agent_capabilities.load_session is True
        assert answer.agent_capabilities.prompt_capabilities.image is True
        assert answer.agent_capabilities.prompt_capabilities.embedded_context is True
        assert answer.auth_methods == []
        assert answer.agent_info.name == "pi-lsp"


async def test_a_prompt_streams_thoughts_text_and_tool_calls(scripted_llm, workspace, agent):
    scripted_llm.enqueue(
        replies.tool_calls([("call-1", "read", {"path": "app.py"})], text="Reading."),
        replies.text("It subtracts.", reasoning="Look at the operator."),
    )
    async with reuse(agent) as (connection, client, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await connection.prompt(
            session_id=session.session_id, prompt=[text_block("what does add do?")]
        )
        assert answer.stop_reason == "end_turn"
        assert client.text() == "Reading.It subtracts."
        assert client.text(AgentThoughtChunk) == "Look at the operator."
        (start,) = client.of_type(ToolCallStart)
        assert (start.tool_call_id, start.kind, start.status) == ("call-1", "read", "in_progress")
        assert start.raw_input == {"path": "app.py"}
        assert [location.path for location in start.locations] == [str(workspace / "app.py")]
        final = client.of_type(ToolCallProgress)[-1]
        assert final.status == "completed"
        assert "return a - b" in final.content[0].content.text
        commands = client.of_type(AvailableCommandsUpdate)[0].available_commands
        assert {"tree", "navigate", "compact"} <= {command.name for command in commands}
        files = list((workspace / ".pi" / "sessions").glob("*.jsonl"))
        assert len(files) == 1 and session.session_id in files[0].name
        (usage,) = client.of_type(UsageUpdate)
        assert usage.used > 0 and usage.size > usage.used
        assert usage.cost is not None and usage.cost.currency == "USD"


async def test_model_and_thinking_level_are_session_config_options(scripted_llm, workspace, agent):
    scripted_llm.enqueue(replies.text("Hello."))
    async with reuse(agent) as (connection, client, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        options = {option.id: option for option in session.config_options}
        assert options["model"].current_value == "openai/scripted"
        assert options["thinking_level"].current_value == "medium"
        answer = await connection.set_config_option(
            config_id="thinking_level", session_id=session.session_id, value="high"
        )
        changed = {option.id: option for option in answer.config_options}
        assert changed["thinking_level"].current_value == "high"
        with pytest.raises(RequestError, match="does not take"):
            await connection.set_config_option(
                config_id="thinking_level", session_id=session.session_id, value="loud"
            )
        await connection.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        await connection.prompt(session_id=session.session_id, prompt=[text_block("/thinking low")])
        assert "Thinking level: low." in client.text()
    file = next((workspace / ".pi" / "sessions").glob("*.jsonl"))
    levels = [
        entry["thinkingLevel"]
        for entry in map(json.loads, file.read_text().splitlines())
        if entry["type"] == "thinking_level_change"
    ]
    assert levels == ["medium", "high", "low"]


async def test_a_missing_model_is_a_clear_error_on_the_first_prompt(scripted_llm, workspace):
    async with acp_agent(scripted_llm, workspace, model=None) as (connection, _, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        with pytest.raises(RequestError) as raised:
            await connection.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert "model" in str(raised.value).lower()


async def test_cancel_ends_the_turn_as_cancelled_and_keeps_the_partial_answer(
    scripted_llm, workspace, agent
):
    scripted_llm.enqueue(replies.slow_text("one two three four five six", chunk_delay=0.3))
    async with reuse(agent) as (connection, client, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        prompt = await start_streaming(connection, client, session.session_id, "count")
        await connection.cancel(session_id=session.session_id)
        answer = await prompt
        assert answer.stop_reason == "cancelled"
        saved = (workspace / ".pi" / "sessions").glob("*.jsonl")
        lines = [json.loads(line) for line in next(saved).read_text().splitlines()]
        assistant = [line for line in lines if line.get("message", {}).get("role") == "assistant"]
        assert assistant[-1]["message"]["stopReason"] == "aborted"


async def test_tree_navigation_with_a_summary_compaction_and_load_in_a_new_process(
    scripted_llm, workspace
):
    scripted_llm.enqueue(
        replies.text("First answer."),
        replies.text("Second answer."),
        replies.text("The branch tried a second question."),  # the branch summary
        replies.text("## Goal\nKeep going."),  # the compaction summary
    )
    small = {"compaction": {"keepRecentTokens": 5, "reserveTokens": 100}, "tokenizer": "chars4"}
    async with acp_agent(scripted_llm, workspace, **small) as (connection, client, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        session_id = session.session_id
        for text in ("first question", "second question"):
            await connection.prompt(session_id=session_id, prompt=[text_block(text)])
        client.updates.clear()
        await connection.prompt(session_id=session_id, prompt=[text_block("/tree")])
        tree = client.text()
        assert "first question" in tree and "second question" in tree
        file = next((workspace / ".pi" / "sessions").glob("*.jsonl"))
        entries = [json.loads(line) for line in file.read_text().splitlines()]
        first_answer = next(
            entry["id"] for entry in entries if entry.get("message", {}).get("role") == "assistant"
        )
        assert first_answer in tree
        client.updates.clear()
        await connection.prompt(
            session_id=session_id, prompt=[text_block(f"/navigate {first_answer} --summarize")]
        )
        assert f"Moved to {first_answer}" in client.text()
        assert "summarized in entry" in client.text()
        assert "**Branch summary**" in client.text()  # its card
        assert "> The branch tried a second question." in client.text()
        client.updates.clear()
        await connection.prompt(session_id=session_id, prompt=[text_block("/compact")])
        assert "Keep going." in client.text()
        with pytest.raises(RequestError, match="usage: /navigate"):
            await connection.prompt(session_id=session_id, prompt=[text_block("/navigate")])

    async with acp_agent(scripted_llm, workspace) as (connection, client, _):
        listed = await connection.list_sessions(cwd=str(workspace))
        assert [info.session_id for info in listed.sessions] == [session_id]
        await connection.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        assert client.text(UserMessageChunk) == "first question"
        replayed = client.text()
        assert "First answer." in replayed and "Second answer." not in replayed
        assert "The branch tried a second question." in replayed
        assert "Keep going." in replayed
    types = [entry["type"] for entry in map(json.loads, file.read_text().splitlines())]
    assert types.count("branch_summary") == 1 and types.count("compaction") == 1


async def test_summary_cards_live_and_in_replays(scripted_llm, workspace):
    scripted_llm.enqueue(
        *read_then_edit_app("a - b", "a + b", "Fixed."),
        replies.error(400, "summary refused"),  # the first /compact's summary
        replies.text("## Goal\nFix add()."),  # the second's
    )
    small = {"compaction": {"keepRecentTokens": 5, "reserveTokens": 100}, "tokenizer": "chars4"}
    app_link = f"[app.py]({(workspace / 'app.py').as_uri()})"
    async with acp_agent(scripted_llm, workspace, **small) as (connection, client, _):
        session_id = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await connection.prompt(session_id=session_id, prompt=[text_block("fix add")])
        client.updates.clear()
        with pytest.raises(RequestError):
            await connection.prompt(session_id=session_id, prompt=[text_block("/compact")])
        assert "Compaction failed: " in client.text()
        assert "the session is unchanged" in client.text()
        client.updates.clear()
        await connection.prompt(session_id=session_id, prompt=[text_block("/compact")])
        live = client.text()
        assert "**Compaction summary**" in live and "- Why: asked for" in live
        assert re.search(r"- Tokens: [\d,]+ → [\d,]+", live)
        assert "- Model: openai/scripted" in live
        assert f"- Modified: {app_link}" in live
        assert "> ## Goal\n> Fix add()." in live
        assert live.count("Fix add().") == 1  # the command's answer does not repeat it
    async with acp_agent(scripted_llm, workspace) as (connection, client, _):
        await connection.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        replayed = client.text()
        assert "**Compaction summary**" in replayed and f"- Modified: {app_link}" in replayed
        assert re.search(r"- Tokens: [\d,]+ before", replayed)
        assert "> ## Goal\n> Fix add()." in replayed
        assert "Why:" not in replayed  # the entry does not record why it was written


class FileSystemClient(RecordingClient):
    """A client with an unsaved buffer of ``app.py``, recording the files it is asked to write."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__()
        self.buffers = buffers
        self.reads: list[str] = []
        self.writes: dict[str, str] = {}

    async def read_text_file(self, path: str, session_id: str, **kwargs: Any):
        from acp.schema import ReadTextFileResponse

        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, path: str, content: str, session_id: str, **kwargs: Any):
        self.writes[path] = content
        self.buffers[path] = content


async def test_tools_read_and_write_through_the_clients_file_system(scripted_llm, workspace):
    from acp.schema import FileSystemCapabilities

    app = str(workspace / "app.py")
    client = FileSystemClient({app: "def add(a, b):\n    return a * b  # unsaved\n"})
    scripted_llm.enqueue(*read_then_edit_app("a * b", "a + b", "Fixed.", "-"))
    capabilities = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
    )
    async with acp_agent(scripted_llm, workspace, client, capabilities) as (connection, _, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        await connection.prompt(session_id=session.session_id, prompt=[text_block("fix add")])
    read_result = next(
        update
        for update in client.of_type(ToolCallProgress)
        if update.tool_call_id == "call-1" and update.status == "completed"
    )
    assert "# unsaved" in read_result.content[0].content.text
    assert client.writes == {app: "def add(a, b):\n    return a + b  # unsaved\n"}
    assert (workspace / "app.py").read_text() == "def add(a, b):\n    return a - b\n"
    edit_start = next(update for update in client.of_type(ToolCallStart) if update.kind == "edit")
    diff = edit_start.content[0]
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == ("diff", app, "a * b", "a + b")


async def test_a_prompt_sent_during_a_turn_is_queued_as_a_follow_up(scripted_llm, workspace, agent):
    scripted_llm.enqueue(
        replies.slow_text("first answer", chunks=4, chunk_delay=0.2),
        replies.text("second answer"),
    )
    async with reuse(agent) as (connection, client, _):
        session_id = (await connection.new_session(cwd=str(workspace))).session_id
        first = await start_streaming(connection, client, session_id, "one")
        second = await connection.prompt(session_id=session_id, prompt=[text_block("two")])
        assert (await first).stop_reason == second.stop_reason == "end_turn"
        assert client.text() == "first answersecond answer"
        users = [m for m in scripted_llm.requests[-1]["messages"] if m["role"] == "user"]
        assert "one" in str(users[-2]["content"]) and "two" in str(users[-1]["content"])


async def test_bash_output_streams_as_tool_call_updates(scripted_llm, workspace, agent):
    command = "for i in 1 2 3; do echo line-$i; sleep 0.3; done"
    scripted_llm.enqueue(
        replies.tool_calls([("call-1", "bash", {"command": command})]), replies.text("Done.")
    )
    async with reuse(agent) as (connection, client, _):
        session_id = (await connection.new_session(cwd=str(workspace))).session_id
        await connection.prompt(session_id=session_id, prompt=[text_block("run it")])
    (start,) = client.of_type(ToolCallStart)
    assert (start.kind, start.title) == ("execute", f"bash {command}")
    progress = client.of_type(ToolCallProgress)
    running = [update for update in progress if update.status == "in_progress"]
    assert running, "no output arrived while the command ran"
    assert "line-3" not in running[0].content[0].content.text
    assert progress[-1].status == "completed"
    assert "line-3" in progress[-1].content[0].content.text


async def test_cancel_also_ends_a_queued_follow_up_as_cancelled(scripted_llm, workspace, agent):
    scripted_llm.enqueue(replies.slow_text("one two three four five six", chunk_delay=0.3))
    requests_before = len(scripted_llm.requests)
    async with reuse(agent) as (connection, client, _):
        session_id = (await connection.new_session(cwd=str(workspace))).session_id
        running = await start_streaming(connection, client, session_id, "count")
        queued = asyncio.ensure_future(
            connection.prompt(session_id=session_id, prompt=[text_block("and then?")])
        )
        await asyncio.sleep(0.2)
        await connection.cancel(session_id=session_id)
        assert (await running).stop_reason == "cancelled"
        assert (await queued).stop_reason == "cancelled"
        assert len(scripted_llm.requests) == requests_before + 1, "the queued prompt never ran"


async def test_stdout_carries_nothing_but_acp_messages(scripted_llm, workspace):
    """litellm logging at INFO writes to stdout; under ``pi-lsp acp`` every line must still be one
    JSON-RPC message."""
    scripted_llm.enqueue(replies.text("All clean."))
    options = {"model": "openai/scripted", "apiBase": scripted_llm.base_url, "autoName": False}
    process = await asyncio.create_subprocess_exec(
        *acp_command(options),
        env={**isolated_environment(HOME), "LITELLM_LOG": "INFO"},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    lines: list[dict] = []

    async def request(request_id: int, method: str, params: dict) -> dict:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        process.stdin.write(json.dumps(message).encode() + b"\n")
        while True:
            line = await asyncio.wait_for(process.stdout.readline(), timeout=60)
            lines.append(json.loads(line))  # anything that is not JSON fails here
            if lines[-1].get("id") == request_id and "method" not in lines[-1]:
                return lines[-1]

    try:
        initialized = await request(1, "initialize", {"protocolVersion": PROTOCOL_VERSION + 6})
        assert initialized["result"]["protocolVersion"] == PROTOCOL_VERSION  # the latest we have
        new = await request(2, "session/new", {"cwd": str(workspace), "mcpServers": []})
        session_id = new["result"]["sessionId"]
        prompt = [{"type": "text", "text": "hi"}]
        answer = await request(3, "session/prompt", {"sessionId": session_id, "prompt": prompt})
        assert answer["result"]["stopReason"] == "end_turn"
        bad = await request(4, "session/prompt", {"sessionId": session_id, "content": prompt})
        assert bad["error"]["code"] == -32602
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), timeout=30)
    assert all(line["jsonrpc"] == "2.0" for line in lines)
    assert any(line.get("method") == "session/update" for line in lines)
    assert process.returncode == 0


async def test_skills_are_commands_that_follow_reloads_and_attachments_are_recorded(
    scripted_llm, workspace, agent
):
    def add_skill(name: str) -> None:
        folder = workspace / ".pi" / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name}.\n---\nDo it.\n")

    def advertised() -> set[str]:
        updates = client.of_type(AvailableCommandsUpdate)
        return {command.name for command in updates[-1].available_commands} if updates else set()

    add_skill("review")
    scripted_llm.enqueue(replies.text("Reviewed."))
    async with reuse(agent) as (connection, client, _):
        session_id = (await connection.new_session(cwd=str(workspace))).session_id
        while "skill:review" not in advertised():
            await asyncio.sleep(0.02)
        add_skill("release-notes")
        async with asyncio.timeout(10):
            while "skill:release-notes" not in advertised():
                await asyncio.sleep(0.05)
        app = workspace / "app.py"
        link = ResourceContentBlock(type="resource_link", name="app.py", uri=app.as_uri())
        await connection.prompt(
            session_id=session_id, prompt=[text_block("/skill:review this"), link]
        )
    sent = json.dumps(scripted_llm.requests[-1]["messages"][-1])
    assert "Do it." in sent and str(app) in sent
    file = next((workspace / ".pi" / "sessions").glob("*.jsonl"))
    recorded = [
        entry["data"]
        for entry in map(json.loads, file.read_text().splitlines())
        if entry.get("customType") == "pi-lsp.editor-file-ops"
    ]
    assert recorded == [{"readFiles": ["app.py"], "modifiedFiles": []}]


async def test_tree_of_a_big_session_shows_a_window_and_every_hint_shows_more(workspace, agent):
    """A session of 10,000 entries written the way pi writes them (``bench/generate_session.py``:
    compactions, branches with summaries, labels): ``/tree`` answers with what fits a screen,
    and each ``/tree <id>`` it offers answers the same way, around that entry."""
    sessions = workspace / ".pi" / "sessions"
    sessions.mkdir(parents=True)
    generator = Path(__file__).resolve().parents[3] / "bench" / "generate_session.py"
    file = sessions / "2026-01-01T00-00-00-000Z_bench-10000.jsonl"
    completed = await asyncio.create_subprocess_exec(
        sys.executable, str(generator), str(file), "10000"
    )
    assert await completed.wait() == 0
    leaf_id = json.loads(file.read_text().splitlines()[-1])["id"]
    async with reuse(agent) as (connection, client, _):
        await connection.resume_session(cwd=str(workspace), session_id="bench-10000")

        async def tree(*arguments: str) -> str:
            client.updates.clear()
            command = " ".join(("/tree", *arguments))
            await connection.prompt(session_id="bench-10000", prompt=[text_block(command)])
            return client.text()

        shown = await tree()
        assert re.findall(r"^@ +(\w+) ", shown, re.MULTILINE) == [leaf_id]
        assert len(re.findall(r"^[@* ] +\w+ ", shown, re.MULTILINE)) >= 30
        assert len(shown) < 6_000, f"/tree sent {len(shown)} characters"
        assert "earlier entries: /tree" in shown and "branches: /tree" in shown
        hints = re.findall(r"/tree (\w+)", shown)
        assert len(hints) > 3, "a session of 10,000 entries has more than one screen"
        for entry_id in hints:
            around = await tree(entry_id)
            assert len(around) < 6_000
            assert re.search(rf"^[@* ] +{entry_id} ", around, re.MULTILINE), entry_id
        with pytest.raises(RequestError, match="usage: /tree"):
            await tree("one", "two")


async def test_errors_quote_client_input_shortened(workspace, agent):
    """Unknown sessions, entries and values sent megabytes long come back as their start and
    length, not whole."""
    huge = "x" * 100_000
    shortened = "x" * 79 + "… (100,00"  # 100,002 characters where the value is quoted
    async with reuse(agent) as (connection, _, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        known = session.session_id
        calls = {
            "prompt": connection.prompt(session_id=huge, prompt=[text_block("hi")]),
            "load": connection.load_session(cwd=str(workspace), session_id=huge, mcp_servers=[]),
            "/tree": connection.prompt(session_id=known, prompt=[text_block(f"/tree {huge}")]),
            "/navigate": connection.prompt(
                session_id=known, prompt=[text_block(f"/navigate {huge}")]
            ),
            "config": connection.set_config_option(
                config_id="thinking_level", session_id=known, value=huge
            ),
            "cwd": connection.new_session(cwd=huge, mcp_servers=[]),
            "extension method": connection.ext_method(huge, {}),
        }
        for name, call in calls.items():
            with pytest.raises(RequestError) as raised:
                await call
            error = json.dumps([str(raised.value), raised.value.data], ensure_ascii=False)
            assert shortened in error and len(error) < 400, (name, len(error))


async def test_fork_at_the_leaf_needs_a_conversation_to_fork(scripted_llm, workspace, agent):
    """A new session holds only its thinking level: ``/fork`` refuses it, as ``pi/fork`` does."""
    scripted_llm.enqueue(replies.text("Hello."))
    async with reuse(agent) as (connection, client, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        with pytest.raises(RequestError, match="the session is empty"):
            await connection.prompt(session_id=session.session_id, prompt=[text_block("/fork")])
        await connection.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        await connection.prompt(session_id=session.session_id, prompt=[text_block("/fork")])
        assert "Forked into session" in client.text()
