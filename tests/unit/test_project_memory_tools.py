"""The agent's session-search tools on a real index: excerpts from the other sessions only, an
entry read with its neighbours on its branch, and clear errors for what does not exist."""

from __future__ import annotations

import asyncio

import pytest

from pi_lsp.project_memory.service import ProjectMemory
from pi_lsp.project_memory.tools import ReadSessionEntryTool, SearchSessionsTool
from pi_lsp.tools.base import ToolContext
from pi_lsp.tools.truncate import DEFAULT_MAX_BYTES, format_size
from tests.builders import write_dialogue_session


@pytest.fixture
def memory(tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    texts = [
        "first question",
        "first answer",
        "the retry policy?",
        "exponential backoff",
        "and the cap?",
        "thirty seconds",
    ]
    write_dialogue_session(sessions / "old.jsonl", "old", texts, alternate=True)
    write_dialogue_session(
        sessions / "now.jsonl", "now", ["what was the retry policy?"], alternate=True
    )
    service = ProjectMemory(tmp_path / "index.sqlite3", lambda: [sessions], settle_seconds=0)
    service.start()
    assert service.wait_until_current(30)
    yield service
    service.close()


def run(tool, arguments, session_id="now"):
    context = ToolContext(cwd=".", session_id=session_id)
    return asyncio.run(tool.execute(arguments, context))


def test_search_sessions_leaves_out_the_session_it_runs_in(memory):
    result = run(SearchSessionsTool(memory), {"query": "retry policy"})
    assert not result.is_error
    assert "session old" in result.text and "entry old-2" in result.text
    assert "session now" not in result.text


def test_read_session_entry_shows_its_neighbours_on_the_branch(memory):
    result = run(ReadSessionEntryTool(memory), {"session_id": "old", "entry_id": "old-2"})
    assert not result.is_error
    shown = [line for line in result.text.splitlines() if line.startswith("[")]
    assert [line.split()[1] for line in shown] == ["old-0", "old-1", "old-2", "old-3", "old-4"]
    assert "old-2 2025-01-01T00:00:02.000Z] <- this entry" in result.text


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"session_id": "gone", "entry_id": "x"}, "No session gone"),
        ({"session_id": "old", "entry_id": "missing"}, "No entry missing"),
    ],
)
def test_what_does_not_exist_is_a_clear_error(memory, arguments, problem):
    result = run(ReadSessionEntryTool(memory), arguments)
    assert result.is_error and problem in result.text


def test_a_blank_query_is_an_error_for_the_model(memory):
    result = run(SearchSessionsTool(memory), {"query": "  "})
    assert result.is_error and "empty" in result.text


def test_a_long_read_follows_the_output_limits_of_the_other_tools(memory, tmp_path):
    sessions = tmp_path / "sessions"
    write_dialogue_session(
        sessions / "long.jsonl",
        "long",
        [f"{n} " + "verbose " * 800 for n in range(21)],
        alternate=True,
    )
    memory.notice(sessions / "long.jsonl")
    assert memory.wait_until_current(30)
    arguments = {"session_id": "long", "entry_id": "long-10", "context": 10}
    result = run(ReadSessionEntryTool(memory), arguments)
    assert not result.is_error
    assert len(result.text.encode()) <= DEFAULT_MAX_BYTES + 100
    assert result.text.endswith(f"[Output cut at the {format_size(DEFAULT_MAX_BYTES)} limit]")
    assert result.details["truncation"]["truncated"] is True
    assert "long-0 " in result.text and "long-20 " not in result.text  # whole lines, from the top
