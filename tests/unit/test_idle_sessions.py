"""Sessions nothing needs any more are closed as others open (``pi_lsp.agent.idle_sessions``),
and a request that names one opens it again from its file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pi_lsp.agent.prompt_queue import QueuedPrompt
from pi_lsp.agent.registry import SessionRegistry
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.errors import SessionWriteError


def registry_of(tmp_path: Path, **options) -> SessionRegistry:
    return SessionRegistry(tmp_path, str(tmp_path), lambda event: None, **options)


def written_session(registry: SessionRegistry, text: str) -> SessionRuntime:
    runtime = registry.create()
    runtime.session.append_message({"role": "user", "content": text, "timestamp": 1})
    return runtime


def open_ids(registry: SessionRegistry) -> set[str]:
    return {runtime.id for runtime in registry.open_runtimes}


def test_the_current_session_and_the_two_last_used_stay_open(tmp_path: Path):
    registry = registry_of(tmp_path, idle_seconds=0)
    first, second, third, fourth, fifth = (
        written_session(registry, f"question {index}") for index in range(5)
    )
    assert open_ids(registry) == {third.id, fourth.id, fifth.id}
    assert registry.current() is fifth
    # Asked for again, the first is opened from its file, with what it held.
    reopened = registry.get(first.id)
    assert reopened is not first
    assert [entry["message"]["content"] for entry in reopened.session.branch()[1:]] == [
        "question 0"
    ]
    assert reopened.read_only_reason is None  # its writer was closed, so it opens writable
    assert open_ids(registry) == {first.id, fourth.id, fifth.id}
    assert second.id not in open_ids(registry)
    registry.close_all()


def test_recently_used_sessions_are_not_closed(tmp_path: Path):
    registry = registry_of(tmp_path)  # the default: idle for a minute first
    runtimes = [written_session(registry, f"question {index}") for index in range(5)]
    assert open_ids(registry) == {runtime.id for runtime in runtimes}
    registry.close_all()


async def test_a_session_something_still_needs_stays_open(tmp_path: Path):
    registry = registry_of(tmp_path, idle_seconds=0, idle_sessions_kept=0)
    loop = asyncio.get_running_loop()
    running = written_session(registry, "a")
    running.turn = loop.create_future()
    queued = written_session(registry, "b")
    queued.queue.add("followUp", QueuedPrompt("b", {}, loop.create_future()))  # type: ignore[typeddict-item]
    pinned = written_session(registry, "c")
    registry.pin(pinned)
    never_written = registry.create()
    last = written_session(registry, "d")
    assert open_ids(registry) == {running.id, queued.id, pinned.id, never_written.id, last.id}
    running.turn.cancel()
    await asyncio.sleep(0)
    written_session(registry, "e")
    assert running.id not in open_ids(registry)
    registry.close_all()


def test_a_session_closed_as_idle_is_not_the_one_a_request_gets(tmp_path: Path):
    registry = registry_of(tmp_path, idle_seconds=0, idle_sessions_kept=0)
    first = written_session(registry, "first")
    written_session(registry, "second")
    with pytest.raises(SessionWriteError):
        first.session.append_message({"role": "user", "content": "late", "timestamp": 2})
    assert registry.get(first.id).session.append_message(
        {"role": "user", "content": "late", "timestamp": 2}
    )
    registry.close_all()


def test_a_session_opened_again_goes_on_above_its_tree_version(tmp_path: Path):
    """An editor that still holds the closed session's tree (at version 2) sees a gap in the
    next event and fetches the tree again, as after any missed event."""
    registry = registry_of(tmp_path, idle_seconds=0, idle_sessions_kept=0)
    first = written_session(registry, "first")
    first.tree_changed()
    first.tree_changed()
    assert first.tree_changes.version == 2
    written_session(registry, "second")
    reopened = registry.get(first.id)
    assert reopened is not first
    assert reopened.tree_changes.next_event().version == 4
    registry.close_all()


def test_a_session_the_client_closes_is_closed_and_unpinned(tmp_path: Path):
    """``session/close`` over ACP: a pinned session is closed at once; asked for again, it is
    opened from its file and closed as idle like any other."""
    registry = registry_of(tmp_path, idle_seconds=0, idle_sessions_kept=0)
    held = written_session(registry, "held")
    registry.pin(held)
    other = written_session(registry, "other")
    registry.close(held)
    assert open_ids(registry) == {other.id}
    with pytest.raises(SessionWriteError):
        held.session.append_message({"role": "user", "content": "late", "timestamp": 2})
    reopened = registry.get(held.id)
    assert reopened is not held
    written_session(registry, "newer")
    assert held.id not in open_ids(registry), "no longer pinned"
    registry.close_all()


def test_a_session_no_client_holds_any_more_closes_when_idle(tmp_path: Path):
    """ACP's ``/new`` leaves a pinned session: unpinned, it closes as idle like any other."""
    registry = registry_of(tmp_path, idle_seconds=0, idle_sessions_kept=0)
    left = written_session(registry, "left by /new")
    registry.pin(left)
    written_session(registry, "second")
    assert left.id in open_ids(registry), "pinned"
    registry.unpin(left)
    written_session(registry, "third")
    assert left.id not in open_ids(registry)
    registry.close_all()
