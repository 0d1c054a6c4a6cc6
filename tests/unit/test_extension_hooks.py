"""Extension hooks around a turn, in process: ``context``, ``before_agent_start``,
``tool_result``, ``session_start`` with ``append_entry``; loading, diagnostics, trust, reloads."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from pi_lsp.errors import CompactionCancelledError
from pi_lsp.llm.double import replies
from tests.agent_harness import AgentHarness

MEMORY = """
def context(event):
    calls.append(len(event.messages))
    note = {"role": "user", "content": [{"type": "text", "text": "NOTE: tabs, not spaces"}],
            "timestamp": 1}
    return {"messages": [note, *event.messages]}

calls = []
"""


def install(agent: AgentHarness, name: str, source: str) -> Path:
    folder = agent.workspace / ".pi" / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(source))
    agent.services.resources.reload()
    return path


def texts(messages) -> list[str]:
    found = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            found.append(content)
        else:
            found += [block.get("text", "") for block in content or [] if isinstance(block, dict)]
    return found


def extension(agent: AgentHarness, name: str):
    [found] = [item for item in agent.services.resources.extensions.extensions if item.name == name]
    return found.handler


async def test_a_context_hook_reaches_every_request_of_the_turn_and_is_never_stored(agent):
    install(agent, "memory.py", MEMORY)
    agent.model.script(
        replies.tool_calls([("call-1", "read", {"path": "app.py"})]), replies.text("Done.")
    )
    await agent.prompt("fix app.py")
    assert [texts(request.messages)[0] for request in agent.model.requests] == [
        "NOTE: tabs, not spaces"
    ] * 2  # the tool round's request too
    assert extension(agent, "memory").calls == [1, 3]
    assert "NOTE: tabs, not spaces" not in texts(agent.messages())
    assert "NOTE" not in agent.runtime.session.path.read_text()


async def test_requests_reuse_the_sessions_conversion_unless_a_hook_chooses_the_messages(agent):
    """What a ``context`` hook hands back may be changed in place later: converted afresh."""
    agent.model.script(replies.text("One."), replies.text("Two."))
    await agent.prompt("first")
    install(agent, "memory.py", MEMORY)
    await agent.prompt("second")
    first, second = agent.model.requests
    assert first.history is agent.runtime.converted_history
    assert second.history is None


async def test_before_agent_start_changes_the_system_prompt_of_the_turn(agent):
    install(
        agent,
        "prompt.py",
        """
        async def before_agent_start(event):
            return {"systemPrompt": event.system_prompt + f"\\nThe user asked: {event.prompt}"}
        """,
    )
    agent.model.script(replies.text("Hi."))
    await agent.prompt("hello there")
    assert agent.model.requests[0].system_prompt.endswith("\nThe user asked: hello there")


async def test_a_tool_result_hook_redacts_what_is_stored_and_sent(agent):
    (agent.workspace / "secrets.env").write_text("API_KEY=sk-12345\n")
    install(
        agent,
        "redact.py",
        """
        import re

        def tool_result(event):
            if event.tool_name != "read":
                return None
            content = [
                {**block, "text": re.sub(r"sk-\\w+", "[redacted]", block["text"])}
                if block["type"] == "text" else block
                for block in event.content
            ]
            return {"content": content}
        """,
    )
    agent.model.script(
        replies.tool_calls([("call-1", "read", {"path": "secrets.env"})]), replies.text("Done.")
    )
    await agent.prompt("read secrets.env")
    [stored] = [message for message in agent.messages() if message["role"] == "toolResult"]
    assert "API_KEY=[redacted]" in texts([stored])[0]
    assert "sk-12345" not in agent.runtime.session.path.read_text()
    assert "sk-12345" not in json.dumps(list(agent.model.requests[1].messages))
    [ended] = agent.events("tool_execution_end")
    assert "[redacted]" in json.dumps(ended.content)


STATEFUL = """
def session_start(event):
    global count
    count = sum(1 for entry in event.entries
                if entry["type"] == "custom" and entry["customType"] == "counter")

def before_agent_start(event):
    global count
    count += 1
    event.append_entry("counter", {"turn": count})
    return None
"""


async def test_session_start_sees_the_extensions_own_entries_when_the_session_is_opened_again(
    make_agent,
):
    agent = make_agent()
    install(agent, "stateful.py", STATEFUL)
    agent.model.script(replies.text("One."), replies.text("Two."))
    await agent.prompt("first")
    await agent.prompt("second")
    path = agent.runtime.session.path
    agent.close()
    again = AgentHarness(agent.workspace)
    runtime = again.services.sessions.open_path(path)
    again.model.script(replies.text("Three."))
    await again.agent.prompt(runtime, "third", [])
    assert extension(again, "stateful").count == 3  # 2 restored from the file, then this turn
    custom = [json.loads(line) for line in path.read_text().splitlines()]
    assert [entry["data"] for entry in custom if entry.get("customType") == "counter"] == [
        {"turn": 1},
        {"turn": 2},
        {"turn": 3},
    ]
    assert [message["role"] for message in again.messages()] == ["user", "assistant"] * 3
    again.close()


async def test_a_raising_hook_is_skipped_and_the_turn_goes_on(agent):
    install(
        agent,
        "broken.py",
        """
        def before_agent_start(event):
            raise RuntimeError("broken")

        def context(event):
            raise RuntimeError("broken")

        def tool_result(event):
            return "not a dict"
        """,
    )
    install(agent, "memory.py", MEMORY)
    agent.model.script(
        replies.tool_calls([("call-1", "read", {"path": "app.py"})]), replies.text("Done.")
    )
    result = await agent.prompt("fix app.py")
    assert result.stop_reason == "stop"
    assert texts(agent.model.requests[1].messages)[0] == "NOTE: tabs, not spaces"


def test_an_extension_that_fails_to_load_is_a_diagnostic_on_its_line(agent):
    path = install(agent, "bad.py", "import os\n\nraise ValueError('no config')\n")
    install(agent, "syntax.py", "def context(event:\n")
    diagnostics = {item.path: item for item in agent.services.resources.snapshot.diagnostics}
    assert diagnostics[str(path)].line == 3 and "ValueError: no config" in (
        diagnostics[str(path)].message
    )
    syntax = diagnostics[str(path.with_name("syntax.py"))]
    assert syntax.severity == "error" and "does not compile" in syntax.message
    assert not (path.parent / "__pycache__").exists()


async def test_an_edited_extension_is_reloaded_and_a_removed_one_dropped(agent):
    path = install(agent, "memory.py", MEMORY)
    first = extension(agent, "memory")
    agent.services.resources.reload()
    assert extension(agent, "memory") is first  # unchanged: the module is kept
    path.write_text(MEMORY.replace("tabs, not spaces", "spaces, not tabs") + "\n")
    changes = agent.services.resources.reload()
    assert [ref.kind for ref in changes.changed] == ["extension"]
    agent.model.script(replies.text("Ok."))
    await agent.prompt("hi")
    assert texts(agent.model.requests[0].messages)[0] == "NOTE: spaces, not tabs"
    assert first.__name__ not in sys.modules  # the old module is let go
    path.unlink()
    assert [ref.kind for ref in agent.services.resources.reload().removed] == ["extension"]
    assert agent.services.resources.extensions.extensions == []


def test_an_untrusted_workspace_does_not_load_the_project_extensions(tmp_path, monkeypatch):
    from pi_lsp.agent.resource_service import ResourceService

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    workspace = tmp_path / "project"
    (workspace / ".pi" / "extensions").mkdir(parents=True)
    (workspace / ".pi" / "extensions" / "memory.py").write_text(MEMORY)
    user_extensions = tmp_path / "agent" / "extensions"
    user_extensions.mkdir(parents=True)
    (user_extensions / "mine.py").write_text(MEMORY)
    resources = ResourceService(workspace, tmp_path / "agent", trusted=False)
    assert [item.name for item in resources.extensions.extensions] == []  # not loaded before use
    snapshot = resources.snapshot
    assert [item.name for item in resources.extensions.extensions] == ["mine"]
    assert any(".pi/extensions" in item.message for item in snapshot.diagnostics)


def test_settings_paths_load_in_order_and_a_missing_one_is_a_diagnostic(tmp_path, monkeypatch):
    from pi_lsp.agent.resource_service import ResourceService

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    workspace = tmp_path / "project"
    (workspace / ".pi" / "extensions").mkdir(parents=True)
    (workspace / ".pi" / "extensions" / "local.py").write_text(MEMORY)
    (workspace / "tools").mkdir()
    (workspace / "tools" / "named.py").write_text(MEMORY)
    package = workspace / "tools" / "packaged"
    package.mkdir()
    (package / "__init__.py").write_text("from .hooks import context\n")
    (package / "hooks.py").write_text(MEMORY)
    (workspace / ".pi" / "settings.json").write_text(
        json.dumps({"extensions": ["../tools/named.py", "../tools/packaged", "../missing.py"]})
    )
    resources = ResourceService(workspace, tmp_path / "agent", trusted=True)
    snapshot = resources.snapshot
    assert [item.name for item in resources.extensions.extensions] == ["named", "packaged", "local"]
    [missing] = [item for item in snapshot.diagnostics if "does not exist" in item.message]
    assert missing.path.endswith("settings.json")
    assert str(package) in snapshot.named_paths


TREE = """
def before_tree(event):
    global seen
    seen = event
    if event.instructions == "stay":
        return {"cancel": True}
    if event.user_wants_summary:
        return {"summary": {"summary": "The extension's summary", "details": {"notes": 1}}}
    return None
"""


async def test_before_tree_cancels_a_navigation_or_supplies_its_summary(agent):
    install(agent, "tree.py", TREE)
    agent.model.script(replies.text("One."), replies.text("Two."))
    await agent.prompt("first")
    first_answer = agent.runtime.session.leaf_id
    await agent.prompt("second")
    leaf = agent.runtime.session.leaf_id
    navigator, runtime = agent.services.navigator, agent.runtime
    with pytest.raises(CompactionCancelledError, match="cancelled by the extension tree"):
        await navigator.navigate(runtime, first_answer, summarize=True, instructions="stay")
    assert runtime.session.leaf_id == leaf
    requests = len(agent.model.requests)
    result = await navigator.navigate(runtime, first_answer, summarize=True)
    hook = extension(agent, "tree")
    assert hook.seen.old_leaf_id == leaf and hook.seen.target_id == first_answer
    assert [entry["type"] for entry in hook.seen.entries_to_summarize] == ["message", "message"]
    entry = runtime.session.by_id[result.summary_entry_id]
    assert entry["summary"] == "The extension's summary" and entry["fromHook"] is True
    assert entry["details"] == {"notes": 1} and len(agent.model.requests) == requests
