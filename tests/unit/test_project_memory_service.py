"""The background index service: initial build, appends noticed, sweeps, progress, rebuilds."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from pi_lsp.project_memory.locations import index_path, pi_session_dir
from pi_lsp.project_memory.service import ProjectMemory
from tests.builders import write_dialogue_session


@pytest.fixture
def memory(tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    write_dialogue_session(sessions / "one.jsonl", "one", ["the retry policy"])
    service = ProjectMemory(tmp_path / "index.sqlite3", lambda: [sessions], sweep_seconds=3600)
    service.start()
    assert service.wait_until_current(30)
    yield service, sessions
    service.close()


def test_the_index_is_built_at_start_and_reports_it(memory):
    service, _ = memory
    result = service.search("retry")
    assert [hit.entry_id for hit in result.page.hits] == ["one-0"]
    assert result.progress.complete
    assert (result.progress.indexed_files, result.progress.known_files) == (1, 1)


def test_a_noticed_file_is_indexed(memory):
    service, sessions = memory
    write_dialogue_session(sessions / "two.jsonl", "two", ["another retry"])
    service.notice(sessions / "two.jsonl")
    assert service.wait_until_current(30)
    assert {hit.session_id for hit in service.search("retry").page.hits} == {"one", "two"}


def test_the_watchs_report_of_an_own_write_is_skipped_but_not_a_later_change(memory):
    service, sessions = memory
    mine = sessions / "mine.jsonl"
    write_dialogue_session(mine, "mine", ["first words"])
    service.notice_own_write(mine)
    assert service.wait_until_current(30)

    service.notice_reported(mine)  # the watch, reporting this server's own append
    assert service.progress().complete  # nothing queued: it is indexed already

    with mine.open("a") as file:  # pi appends to it after this server
        file.write(json.dumps({"type": "label", "id": "x", "parentId": None}) + "\n")
    service.notice_reported(mine)
    assert not service.progress().complete
    assert service.wait_until_current(30)


def test_appends_are_indexed_once_the_files_are_quiet(tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    busy = sessions / "busy.jsonl"
    write_dialogue_session(busy, "busy", ["opening"])
    service = ProjectMemory(
        tmp_path / "index.sqlite3", lambda: [sessions], sweep_seconds=3600, settle_seconds=0.2
    )
    service.start()
    try:
        assert service.wait_until_current(30)
        texts = ["opening"]
        for number in range(5):  # a burst of appends, as a turn makes
            texts.append(f"burst word{number}")
            write_dialogue_session(busy, "busy", texts)
            service.notice_own_write(busy)
        assert service.wait_until_current(30)
        assert len(service.search("burst").page.hits) == 5
    finally:
        service.close()


def test_a_file_outside_the_session_directories_is_not_indexed(memory, tmp_path):
    service, _ = memory
    write_dialogue_session(tmp_path / "elsewhere.jsonl", "elsewhere", ["retry"])
    service.notice(tmp_path / "elsewhere.jsonl")
    assert service.wait_until_current(30)
    assert {hit.session_id for hit in service.search("retry").page.hits} == {"one"}


def test_a_sweep_finds_changes_nobody_reported(tmp_path):
    sessions = tmp_path / "sessions"
    service = ProjectMemory(tmp_path / "index.sqlite3", lambda: [sessions], sweep_seconds=0.05)
    service.start()
    try:
        assert service.wait_until_current(30)
        sessions.mkdir()  # the directory appears after the start (pi creates its own lazily)
        write_dialogue_session(sessions / "late.jsonl", "late", ["retry later"])
        sweeps = service.sweeps
        deadline = time.monotonic() + 30
        while service.sweeps < sweeps + 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert service.wait_until_current(30)
        assert [hit.session_id for hit in service.search("later").page.hits] == ["late"]
    finally:
        service.close()


def test_a_rebuild_indexes_everything_again(memory):
    service, _ = memory
    service.rebuild()
    assert service.wait_until_current(30)
    assert [hit.entry_id for hit in service.search("retry").page.hits] == ["one-0"]


def test_the_index_survives_a_restart(tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    write_dialogue_session(sessions / "one.jsonl", "one", ["the retry policy"])
    for _ in range(2):
        service = ProjectMemory(tmp_path / "index.sqlite3", lambda: [sessions])
        service.start()
        assert service.wait_until_current(30)
        assert service.search("retry").page.total == 1
        service.close()


def test_locations(tmp_path, monkeypatch):
    agent = tmp_path / "agent"
    workspace = tmp_path / "my project"
    expected = f"--{str(workspace.resolve()).lstrip('/').replace('/', '-')}--"
    assert pi_session_dir(workspace, agent) == agent.resolve() / "sessions" / expected
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert index_path(workspace).is_relative_to(tmp_path / "state" / "pi-lsp")
    assert index_path(workspace) != index_path(tmp_path / "other")


def test_two_windows_share_one_index_without_rebuilding_it(tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for number in range(20):
        write_dialogue_session(sessions / f"s{number}.jsonl", f"s{number}", ["shared retry"] * 50)
    database = tmp_path / "index.sqlite3"
    windows = [ProjectMemory(database, lambda: [sessions], settle_seconds=0) for _ in range(2)]
    for window in windows:
        window.start()
    try:
        for window in windows:
            assert window.wait_until_current(60)
        rows = sqlite3.connect(database).execute("SELECT count(*) FROM entries").fetchone()[0]
        assert rows == 20 * 50  # each entry once, and nothing thrown away
        for window in windows:
            assert window.search("shared").page.total == 20 * 50
    finally:
        for window in windows:
            window.close()
