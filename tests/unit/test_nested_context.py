"""Nested AGENTS.md: found below the workspace root when a tool touches something there, brought to
the model once per branch, again when the file changes or a compaction summarized it away."""

from __future__ import annotations

import json

import pytest

from pi_lsp.agent.nested_context import NestedContextFiles
from pi_lsp.llm.double import replies
from pi_lsp.resources.nested_context_files import (
    NESTED_CONTEXT_FILE_TYPE,
    directories_below_root,
    read_nested_context_file,
)
from pi_lsp.session.projection import project_path
from tests.builders import NESTED_RULE, api_package

MARKER = NESTED_RULE


def sent_text(agent, request_index: int) -> str:
    return json.dumps(agent.model.requests[request_index].messages)


def injections(agent) -> list[dict]:
    return [
        entry
        for entry in agent.runtime.session.branch()
        if entry.type == "custom_message" and entry["customType"] == NESTED_CONTEXT_FILE_TYPE
    ]


# ------------------------------------------------------------------ finding them


def test_the_directories_between_the_root_and_a_path_outermost_first(tmp_path):
    api_package(tmp_path)
    file = tmp_path / "packages" / "api" / "src" / "server.py"
    assert directories_below_root(file, tmp_path) == [
        tmp_path / "packages",
        tmp_path / "packages" / "api",
        tmp_path / "packages" / "api" / "src",
    ]
    assert directories_below_root(tmp_path / "packages" / "api", tmp_path)[-1] == (
        tmp_path / "packages" / "api"
    )  # a directory counts itself
    assert directories_below_root(tmp_path / "app.py", tmp_path) == []  # the root is pi's
    assert directories_below_root(tmp_path.parent / "elsewhere" / "x.py", tmp_path) == []
    assert directories_below_root(tmp_path / "node_modules" / "lib" / "AGENTS.md", tmp_path) == []


def test_a_context_file_is_read_with_its_workspace_path_and_fingerprint(tmp_path):
    package = api_package(tmp_path)
    found = read_nested_context_file(package / "AGENTS.md", tmp_path)
    assert found is not None
    assert (found.path, found.directory) == ("packages/api/AGENTS.md", "packages/api")
    assert found.content == MARKER + "\n" and len(found.fingerprint) == 64


def test_claude_md_serves_where_there_is_no_agents_md(tmp_path):
    package = api_package(tmp_path)
    (package / "AGENTS.md").unlink()
    (package / "CLAUDE.md").write_text("claude rules\n")
    nested = NestedContextFiles(tmp_path)
    path = [_assistant_entry("read", "packages/api/src/server.py")]
    [injection] = nested.due(path)
    assert injection.context_file.path == "packages/api/CLAUDE.md"
    (package / "AGENTS.md").write_text("agents rules\n")
    [injection] = nested.due(path)
    assert injection.context_file.path == "packages/api/AGENTS.md"


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "read",
            {"path": "packages/api/src/server.py"},
            ["packages/AGENTS.md", "packages/api/AGENTS.md"],
        ),
        (
            "edit",
            {"path": "packages/api/src/server.py", "edits": []},
            ["packages/AGENTS.md", "packages/api/AGENTS.md"],
        ),
        (
            "write",
            {"path": "packages/api/new.py", "content": ""},
            ["packages/AGENTS.md", "packages/api/AGENTS.md"],
        ),
        ("ls", {"path": "packages/api"}, ["packages/AGENTS.md", "packages/api/AGENTS.md"]),
        ("find", {"pattern": "*.py", "path": "packages"}, ["packages/AGENTS.md"]),
        (
            "grep",
            {"pattern": "api", "path": "packages/api/src"},
            ["packages/AGENTS.md", "packages/api/AGENTS.md"],
        ),
        ("grep", {"pattern": "api"}, []),  # the workspace root: nothing nested
        ("bash", {"command": "cat packages/api/src/server.py"}, []),
        ("read", {"path": "../outside/AGENTS.md"}, []),
    ],
)
def test_which_tool_calls_bring_which_files(tmp_path, tool, arguments, expected):
    api_package(tmp_path)
    (tmp_path / "packages" / "AGENTS.md").write_text("packages rules\n")
    nested = NestedContextFiles(tmp_path)
    entry = {
        "type": "message",
        "id": "a1",
        "parentId": None,
        "message": {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c", "name": tool, "arguments": arguments}],
        },
    }
    assert [injection.context_file.path for injection in nested.due([entry])] == expected


def _assistant_entry(tool: str, path: str) -> dict:
    return {
        "type": "message",
        "id": "a1",
        "parentId": None,
        "message": {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c", "name": tool, "arguments": {"path": path}}],
        },
    }


def _injection_entry(tmp_path, path: str) -> dict:
    context_file = read_nested_context_file(tmp_path / path, tmp_path)
    assert context_file is not None
    return {
        "type": "custom_message",
        "id": f"i-{path}",
        "parentId": None,
        "customType": NESTED_CONTEXT_FILE_TYPE,
        "content": "rules",
        "display": True,
        "details": {"path": path, "fingerprint": context_file.fingerprint},
    }


def test_a_growing_projection_is_read_as_a_whole_one_would_be(tmp_path):
    """Only the new entries are read from one request to the next; another projection (a
    branch, a compaction) is read whole. Each step agrees with a reader that starts afresh."""
    api_package(tmp_path)
    (tmp_path / "packages" / "AGENTS.md").write_text("packages rules\n")
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "AGENTS.md").write_text("web rules\n")
    entries = [
        _assistant_entry("read", "packages/api/src/server.py"),
        _injection_entry(tmp_path, "packages/AGENTS.md"),
        _assistant_entry("ls", "web"),
        _injection_entry(tmp_path, "web/AGENTS.md"),
        _injection_entry(tmp_path, "packages/api/AGENTS.md"),
    ]
    kept = NestedContextFiles(tmp_path)

    def due(files: NestedContextFiles, projected: list) -> list[str]:
        return [injection.context_file.path for injection in files.due_in_projection(projected)]

    projected: list = []
    for entry in entries:
        projected.extend(project_path([entry]))  # in place, as the session extends its own
        assert due(kept, projected) == due(NestedContextFiles(tmp_path), projected)
    assert due(kept, projected) == []
    another_branch = project_path([entries[2]] * len(entries))  # as long, but other entries
    assert due(kept, another_branch) == ["web/AGENTS.md"]
    (tmp_path / "web" / "AGENTS.md").write_text("new web rules\n")
    [changed] = kept.due_in_projection(projected)
    assert changed.context_file.path == "web/AGENTS.md" and changed.replaces_earlier


# ------------------------------------------------------------------ in the turn loop


async def test_a_read_below_it_brings_the_file_before_the_next_request_once(agent):
    api_package(agent.workspace)
    agent.model.script(
        replies.tool_calls([("c1", "read", {"path": "packages/api/src/server.py"})]),
        replies.tool_calls([("c2", "read", {"path": "packages/api/src/server.py"})]),
        replies.text("Done."),
    )
    await agent.prompt("look at the api server")
    assert MARKER not in sent_text(agent, 0)
    assert MARKER in sent_text(agent, 1) and MARKER in sent_text(agent, 2)
    assert sent_text(agent, 2).count(MARKER) == 1  # once per branch
    [entry] = injections(agent)
    assert entry["display"] is True
    assert entry["details"]["path"] == "packages/api/AGENTS.md"
    assert entry["content"].startswith("Instructions for files under packages/api/")
    parent = agent.runtime.session.require_entry(entry.parent_id)
    assert parent["message"]["role"] == "toolResult"  # right after the result of the read
    ends = [event for event in agent.events("message_end") if event.entry_id == entry.id]
    assert ends and ends[0].message["role"] == "custom"
    loaded = agent.agent.nested_context.loaded(agent.runtime.session.branch())
    assert [(item.path, item.entry_id, item.current) for item in loaded] == [
        ("packages/api/AGENTS.md", entry.id, True)
    ]


async def test_a_changed_file_comes_again_marked_as_replacing_the_earlier_text(agent):
    package = api_package(agent.workspace)
    agent.model.script(
        replies.tool_calls([("c1", "read", {"path": "packages/api/src/server.py"})]),
        replies.text("Read it."),
    )
    await agent.prompt("look")
    (package / "AGENTS.md").write_text("NESTED-RULE-v2: use spaces after all\n")
    assert not agent.agent.nested_context.loaded(agent.runtime.session.branch())[0].current
    agent.model.script(replies.text("Noted."))
    await agent.prompt("and now?")
    sent = sent_text(agent, 2)
    assert "NESTED-RULE-v2" in sent and MARKER in sent  # the old one is history, the new one wins
    _first, second = injections(agent)
    assert second["content"].startswith("Updated instructions for files under packages/api/")
    agent.model.script(replies.text("Still noted."))
    await agent.prompt("once more")
    assert len(injections(agent)) == 2  # unchanged since: nothing new


async def test_another_branch_gets_the_file_when_it_touches_the_package(agent):
    api_package(agent.workspace)
    agent.model.script(
        replies.tool_calls([("c1", "read", {"path": "packages/api/src/server.py"})]),
        replies.text("Read it."),
    )
    await agent.prompt("look")
    first_user = next(entry for entry in agent.runtime.session.branch() if entry.type == "message")
    await agent.services.navigator.navigate(agent.runtime, first_user.id)  # back before the prompt
    agent.model.script(replies.text("Plain answer."))
    await agent.prompt("something else")
    assert MARKER not in sent_text(agent, 2) and injections(agent) == []
    agent.model.script(
        replies.tool_calls([("c9", "ls", {"path": "packages/api"})]), replies.text("Listed.")
    )
    await agent.prompt("list the api package")
    assert MARKER in sent_text(agent, 4) and len(injections(agent)) == 1


async def test_a_compaction_that_summarized_it_away_brings_it_back_when_needed(make_agent):
    agent = make_agent(options={"compaction": {"keepRecentTokens": 30, "reserveTokens": 100}})
    api_package(agent.workspace)
    agent.model.script(
        replies.tool_calls([("c1", "read", {"path": "packages/api/src/server.py"})]),
        replies.text("Read it. " + "padding " * 60),
    )
    await agent.prompt("look " + "context " * 60)
    agent.model.script(replies.text("## Goal\nsummary"), replies.text("## Original Request\nlook"))
    await agent.agent.compact(agent.runtime, None)
    assert injections(agent) and not agent.agent.nested_context.loaded(
        agent.runtime.session.branch()
    )  # summarized away, and its touch with it
    agent.model.script(replies.text("Plain."))
    await agent.prompt("unrelated")
    assert MARKER not in sent_text(agent, -1)  # nothing touches the package any more
    agent.model.script(
        replies.tool_calls([("c2", "edit", {"path": "packages/api/src/server.py", "edits": []})]),
        replies.text("Edited."),
    )
    await agent.prompt("edit the api server")
    assert MARKER in sent_text(agent, -1) and len(injections(agent)) == 2


async def test_the_setting_turns_it_off(make_agent):
    agent = make_agent(options={"nestedContextFiles": False})
    api_package(agent.workspace)
    agent.model.script(
        replies.tool_calls([("c1", "read", {"path": "packages/api/src/server.py"})]),
        replies.text("Done."),
    )
    await agent.prompt("look")
    assert MARKER not in sent_text(agent, 1) and injections(agent) == []
