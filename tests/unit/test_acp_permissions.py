"""The ACP permission asker: a question as ``session/request_permission``, the answers as
:class:`Answer`, and a ``cancelled`` answer as the end of the turn."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from pi_lsp.acp.permissions import (
    OPTIONS,
    AcpPermissionAsker,
    AskedSession,
    answer_of,
    permission_tool_call,
)
from pi_lsp.agent.permission_policy import PermissionQuestion
from pi_lsp.agent.permissions import Answer


def selected(option_id: str) -> RequestPermissionResponse:
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=option_id)
    )


CANCELLED = RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


def test_the_options_map_to_the_answers_of_every_channel():
    assert [(option.option_id, option.kind, option.name) for option in OPTIONS] == [
        ("allow_once", "allow_once", "Allow once"),
        ("allow_always", "allow_always", "Allow for this session"),
        ("reject", "reject_once", "Reject"),
    ]
    assert answer_of(selected("allow_once")) is Answer.ALLOW
    assert answer_of(selected("allow_always")) is Answer.ALLOW_FOR_SESSION
    assert answer_of(selected("reject")) is Answer.DENY
    assert answer_of(selected("something-else")) is None
    assert answer_of(CANCELLED) is None


def test_a_bash_question_shows_the_tool_call_pending_with_why_it_asks():
    question = PermissionQuestion(
        "bash",
        "make test",
        reason="the workspace is not trusted",
        tool_call_id="call-7",
        arguments={"command": "make test", "timeout": 60},
    )
    tool_call = permission_tool_call(question, Path("/work/project"))
    assert tool_call.tool_call_id == "call-7"
    assert (tool_call.title, tool_call.kind, tool_call.status) == (
        "bash make test",
        "execute",
        "pending",
    )
    assert tool_call.raw_input == {"command": "make test", "timeout": 60}
    assert tool_call.locations is None
    assert [block.content.text for block in tool_call.content] == ["the workspace is not trusted"]


def test_an_edit_question_shows_its_replacements_as_diffs():
    question = PermissionQuestion(
        "edit",
        "app.py",
        summary="−1 +1 lines",
        tool_call_id="call-1",
        arguments={"path": "app.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]},
    )
    tool_call = permission_tool_call(question, Path("/work/project"))
    diff, why = tool_call.content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == (
        "diff",
        "/work/project/app.py",
        "a - b",
        "a + b",
    )
    assert why.content.text == "−1 +1 lines"
    assert [location.path for location in tool_call.locations] == ["/work/project/app.py"]
    assert tool_call.kind == "edit"


def test_a_write_question_diffs_the_file_as_it_is_against_the_new_text(tmp_path: Path):
    (tmp_path / "notes.md").write_text("old\n")
    for name, old_text in (("notes.md", "old\n"), ("new.md", None)):
        question = PermissionQuestion(
            "write", name, tool_call_id="c", arguments={"path": name, "content": "new\n"}
        )
        (diff,) = permission_tool_call(question, tmp_path).content
        assert (diff.path, diff.old_text, diff.new_text) == (
            str(tmp_path / name),
            old_text,
            "new\n",
        )


class FakeConnection:
    def __init__(self, response: RequestPermissionResponse) -> None:
        self.response = response
        self.requests: list[dict[str, Any]] = []

    async def request_permission(self, **params: Any) -> RequestPermissionResponse:
        self.requests.append(params)
        return self.response


QUESTION = PermissionQuestion(
    "bash", "ls", session_id="pi-1", tool_call_id="c1", arguments={"command": "ls"}
)


def asker_for(response: RequestPermissionResponse, events: list[str]) -> tuple[Any, Any]:
    connection = FakeConnection(response)

    async def flush() -> None:
        events.append("flush")

    sessions = {"pi-1": AskedSession("acp-1", flush, lambda: events.append("cancel turn"))}
    return AcpPermissionAsker(lambda: connection, sessions.get, Path("/p")), connection


async def test_the_question_goes_to_the_acp_session_showing_the_turn_after_its_updates():
    events: list[str] = []
    asker, connection = asker_for(selected("allow_always"), events)
    assert await asker.ask(QUESTION) is Answer.ALLOW_FOR_SESSION
    (request,) = connection.requests
    assert request["session_id"] == "acp-1"
    assert request["tool_call"].tool_call_id == "c1"
    assert events == ["flush"]


async def test_a_session_no_client_shows_is_refused_without_asking():
    asker, connection = asker_for(selected("allow_once"), [])
    assert await asker.ask(PermissionQuestion("bash", "ls", session_id="pi-other")) is None
    assert connection.requests == []


async def test_a_cancelled_answer_ends_the_turn():
    events: list[str] = []
    asker, _ = asker_for(CANCELLED, events)
    assert await asker.ask(QUESTION) is None
    assert events == ["flush", "cancel turn"]


async def test_a_question_withdrawn_while_the_client_thinks_stops_waiting():
    class SlowConnection(FakeConnection):
        async def request_permission(self, **params: Any) -> RequestPermissionResponse:
            await asyncio.sleep(60)
            raise AssertionError("never answered")

    sessions = {"pi-1": AskedSession("acp-1", lambda: asyncio.sleep(0), lambda: None)}
    connection = SlowConnection(CANCELLED)
    asker = AcpPermissionAsker(lambda: connection, sessions.get, Path("/p"))
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asker.ask(QUESTION), 0.05)
