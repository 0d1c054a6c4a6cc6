"""The session file on disk: format, lazy creation,
locking, damaged and foreign files, migrations."""

import gc
import json
import os
import re
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

from pi_lsp.errors import (
    NotASessionError,
    SessionLockedError,
    SessionReadOnlyError,
    SessionWriteError,
)
from pi_lsp.session.session import Session
from tests.big_session import BRANCH_IDS, BRANCH_POINT, write_big_session
from tests.builders import assistant_message, user_text

FILE_NAME = re.compile(
    r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.jsonl$"
)
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


PRICED_ANSWER = {
    "api": "openai-completions",
    "provider": "openai",
    "model": "gpt-4o",
    # JavaScript writes these as 0.00003 and 1, Python as 3e-05 and 1.0
    "usage_": {
        "input": 10,
        "output": 5,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 15,
        "cost": {
            "input": 0.00003,
            "output": 1.0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": 1.00003,
        },
    },
}


def write_lines(path: Path, *lines: str, trailing_newline: bool = True) -> None:
    path.write_text("\n".join(lines) + ("\n" if trailing_newline else ""), encoding="utf-8")


HEADER = (
    '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'
)
USER_LINE = (
    '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    '"message":{"role":"user","content":"hi","timestamp":1}}'
)


def test_nothing_is_written_until_the_first_user_message(tmp_path):
    with Session.create(tmp_path, "/work") as session:
        session.append_model_change("openai", "gpt-4o")
        session.append_thinking_level_change("high")
        assert not session.path.exists() and not session.is_persisted
        session.append_message(user_text("hello"))
        lines = session.path.read_text().splitlines()
    assert [json.loads(line)["type"] for line in lines] == [
        "session",
        "model_change",
        "thinking_level_change",
        "message",
    ]


def test_lines_are_compact_json_in_pis_key_order_with_unique_short_ids(tmp_path):
    with Session.create(tmp_path, "/work") as session:
        first = session.append_message(user_text("héllo 😀"))
        session.append_message(assistant_message("hi", **PRICED_ANSWER))
        session.append_label(first, "start")
        path = session.path
    assert FILE_NAME.match(path.name)
    text = path.read_text(encoding="utf-8")
    header, *entries = [json.loads(line) for line in text.splitlines()]
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"] and header["version"] == 3
    assert path.name.endswith(f"_{header['id']}.jsonl")
    assert all(list(entry)[:4] == ["type", "id", "parentId", "timestamp"] for entry in entries)
    assert all(
        re.fullmatch(r"[0-9a-f]{8}", entry["id"]) and ISO.match(entry["timestamp"])
        for entry in entries
    )
    assert len({entry["id"] for entry in entries}) == len(entries)
    assert [entry["parentId"] for entry in entries] == [None, entries[0]["id"], entries[1]["id"]]
    assert '"text":"héllo 😀"' in text and ", " not in text and '": ' not in text
    # JavaScript writes 1.0 as 1 and 0.00003 as 0.00003 (Python would write 1.0 and 3e-05).
    assert '"cost":{"input":0.00003,"output":1,' in text


def test_reopening_restores_entries_leaf_labels_and_name(tmp_path):
    with Session.create(tmp_path, "/work") as session:
        first = session.append_message(user_text("one"))
        second = session.append_message(assistant_message("two", **PRICED_ANSWER))
        session.move_leaf(first)
        session.append_message(assistant_message("other branch", **PRICED_ANSWER))
        session.append_label(second, "keep")
        session.append_session_info("  Refactor\r\nauth  ")
        written = [entry.raw for entry in session.entries]
        leaf = session.leaf_id
        path = session.path
    reopened = Session.open(path, writable=False)
    assert [entry.raw for entry in reopened.entries] == written
    assert reopened.leaf_id == leaf  # the last line, here a session_info entry
    assert reopened.labels == {second: "keep"}
    assert reopened.name == "Refactor auth"
    assert [entry.id for entry in reopened.children(first)] == [second, reopened.entries[2].id]


def test_blank_and_unparseable_lines_are_skipped_and_counted(tmp_path):
    path = tmp_path / "s.jsonl"
    write_lines(path, HEADER, "", "not json {", USER_LINE, "   ", '{"type":"message"', "[1,2]")
    session = Session.open(path, writable=False)
    assert [entry.id for entry in session.entries] == ["a1"]
    assert session.report.blank_lines == 2
    assert session.report.unparseable_lines == [3, 6, 7]


def test_a_torn_last_line_is_skipped_and_repaired_before_the_next_append(tmp_path):
    path = tmp_path / "s.jsonl"
    write_lines(path, HEADER, USER_LINE, '{"type":"message","id":"b2","par', trailing_newline=False)
    with Session.open(path) as session:
        assert session.report.torn_last_line and session.report.unparseable_lines == [3]
        assert session.leaf_id == "a1"
        new_id = session.append_message(assistant_message("after the crash", **PRICED_ANSWER))
    lines = path.read_text().split("\n")
    assert (
        lines[2] == '{"type":"message","id":"b2","par'
    )  # the torn bytes stay: the file is append-only
    assert json.loads(lines[3])["id"] == new_id and json.loads(lines[3])["parentId"] == "a1"
    assert lines[4] == ""
    assert Session.open(path, writable=False).leaf_id == new_id


def test_a_complete_last_line_without_newline_is_kept_and_a_newline_added(tmp_path):
    path = tmp_path / "s.jsonl"
    write_lines(path, HEADER, USER_LINE, trailing_newline=False)
    with Session.open(path) as session:
        assert session.leaf_id == "a1"
        session.append_message(assistant_message("ok", **PRICED_ANSWER))
    assert [json.loads(line)["type"] for line in path.read_text().splitlines()] == [
        "session",
        "message",
        "message",
    ]


@pytest.mark.parametrize(
    "content",
    [
        '{"role":"user","content":"foreign jsonl"}\n',
        "just some text\n",
        '{"type":"session","version":3}\n',  # a header without an id is no header
        "\n\n" + USER_LINE + "\n",
    ],
)
def test_a_file_that_is_not_a_session_is_refused_and_never_modified(tmp_path, content):
    path = tmp_path / "foreign.jsonl"
    path.write_text(content)
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    for writable in (True, False):
        with pytest.raises(NotASessionError, match="not a pi session"):
            Session.open(path, writable=writable)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_an_empty_file_becomes_a_session_at_its_first_message(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.touch()
    with Session.open(path, cwd="/w") as session:
        session.append_thinking_level_change("low")
        assert path.read_bytes() == b""
        session.append_message(user_text("first"))
    header, *rest = [json.loads(line) for line in path.read_text().splitlines()]
    assert header["type"] == "session" and header["cwd"] == "/w" and len(rest) == 2


def test_one_writer_per_file_and_readers_are_never_blocked(tmp_path):
    with Session.create(tmp_path, "/w") as writer:
        writer.append_message(user_text("mine"))
        with pytest.raises(SessionLockedError, match="another process is writing"):
            Session.open(writer.path)
        reader = Session.open(writer.path, writable=False)
        assert reader.leaf_id == writer.leaf_id
        with pytest.raises(SessionReadOnlyError):
            reader.append_message(user_text("not allowed"))
    with Session.open(writer.path) as next_writer:  # closing released the lock
        next_writer.append_message(assistant_message("now mine", **PRICED_ANSWER))


def test_the_lock_is_held_against_another_process(tmp_path):
    with Session.create(tmp_path, "/w") as writer:
        writer.append_message(user_text("mine"))
        script = (
            "import sys\n"
            "from pi_lsp.session.session import Session\n"
            "from pi_lsp.errors import SessionLockedError\n"
            "try:\n    Session.open(sys.argv[1])\n"
            "except SessionLockedError:\n    sys.exit(3)\n"
        )
        result = subprocess.run([os.sys.executable, "-c", script, str(writer.path)], check=False)
        assert result.returncode == 3


@contextmanager
def read_only_directory(directory: Path):
    if os.geteuid() == 0:  # root ignores permission bits; the immutable attribute stops root too
        if (
            not shutil.which("chattr")
            or subprocess.run(["chattr", "+i", str(directory)], check=False).returncode
        ):
            pytest.skip("cannot make a directory read-only for root here")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(directory)], check=True)
    else:
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)


def test_a_read_only_directory_gives_a_clear_error_and_loses_nothing_in_memory(tmp_path):
    directory = tmp_path / "sessions"
    directory.mkdir()
    session = Session.create(directory, "/w")
    session.append_model_change("openai", "gpt-4o")
    with (
        read_only_directory(directory),
        pytest.raises(SessionWriteError, match="could not write session file"),
    ):
        session.append_message(user_text("hello"))
    assert [entry.type for entry in session.entries] == ["model_change"]
    assert not session.is_persisted and list(directory.iterdir()) == []
    session.append_message(user_text("hello again"))  # once writable, nothing was lost
    assert [json.loads(line)["type"] for line in session.path.read_text().splitlines()] == [
        "session",
        "model_change",
        "message",
    ]


def test_duplicate_ids_are_reported_and_the_later_entry_wins(tmp_path):
    path = tmp_path / "s.jsonl"
    second = USER_LINE.replace('"hi"', '"again"')
    write_lines(path, HEADER, USER_LINE, second)
    session = Session.open(path, writable=False)
    assert session.report.duplicate_ids == ["a1"]
    assert session.get_entry("a1")["message"]["content"] == "again"


def test_parent_cycles_and_dangling_parents_never_hang_a_walk(tmp_path):
    path = tmp_path / "s.jsonl"
    write_lines(
        path,
        HEADER,
        '{"type":"message","id":"x","parentId":"y","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"x","timestamp":1}}',
        '{"type":"message","id":"y","parentId":"x","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"y","timestamp":2}}',
        '{"type":"message","id":"z","parentId":"gone","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"z","timestamp":3}}',
        '{"type":"custom","customType":"c","id":"self","parentId":"self","timestamp":"2026-01-01T00:00:04.000Z"}',
    )
    session = Session.open(path, writable=False)
    assert [entry.id for entry in session.branch("y")] == ["x", "y"]
    assert [entry.id for entry in session.branch("self")] == ["self"]
    assert [message["content"] for message in session.build_context("y").messages] == ["x", "y"]
    assert {node.entry["id"] for node in session.tree()} == {"z", "self"}  # orphans are roots


def test_unknown_and_newer_entry_types_are_kept_byte_for_byte(tmp_path):
    path = tmp_path / "s.jsonl"
    usage = (
        '{"type":"usage","id":"u1","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z",'
        '"kind":"cache_warm","usage":{"cost":{"total":1.0}}}'
    )
    edit = (
        '{"type":"context_edit","id":"e1","parentId":"u1","timestamp":"2026-01-01T00:00:03.000Z",'
        '"targetId":"a1","replacement":null,"1":"x"}'
    )
    write_lines(path, HEADER, USER_LINE, usage, edit)
    with Session.open(path) as session:
        assert [entry.type for entry in session.entries] == ["message", "usage", "context_edit"]
        session.append_message(assistant_message("next", **PRICED_ANSWER))
    lines = path.read_text().splitlines()
    assert lines[2] == usage and lines[3] == edit and json.loads(lines[4])["parentId"] == "e1"


def test_branch_with_summary_records_the_leaf_being_left(tmp_path):
    with Session.create(tmp_path, "/w") as session:
        first = session.append_message(user_text("one"))
        left = session.append_message(assistant_message("two", **PRICED_ANSWER))
        summary_id = session.branch_with_summary(
            first, "what happened", details={"readFiles": [], "modifiedFiles": ["a"]}
        )
        summary = session.get_entry(summary_id)
        assert (
            summary["parentId"] == first
            and summary["fromId"] == left
            and session.leaf_id == summary_id
        )
        assert list(summary)[:6] == ["type", "id", "parentId", "timestamp", "fromId", "summary"]
        session.reset_leaf()
        root_summary = session.get_entry(session.branch_with_summary(None, "from nowhere"))
        assert root_summary["parentId"] is None and root_summary["fromId"] == "root"


def test_moving_the_leaf_to_an_unknown_entry_is_an_error(tmp_path):
    from pi_lsp.errors import EntryNotFoundError

    session = Session.create(None, "/w")
    with pytest.raises(EntryNotFoundError):
        session.move_leaf("nope")
    with pytest.raises(EntryNotFoundError):
        session.append_label("nope", "x")


V1_SESSION = [
    '{"type":"session","id":"legacy","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w","provider":"anthropic","modelId":"m","thinkingLevel":"off"}',
    '{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"old","timestamp":1}}',
    '{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"reply"}],"provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}',
    '{"type":"message","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"hookMessage","customType":"x","content":"hook","display":true,"timestamp":3}}',
    '{"type":"compaction","timestamp":"2025-01-01T00:00:04.000Z","summary":"sum","firstKeptEntryIndex":2,"tokensBefore":100}',
]


def test_a_v1_session_is_migrated_by_an_atomic_rewrite(tmp_path):
    path = tmp_path / "legacy.jsonl"
    write_lines(path, *V1_SESSION)
    inode_before = path.stat().st_ino
    with Session.open(path) as session:
        assert session.report.migrated_from_version == 1
        ids = [entry.id for entry in session.entries]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert path.stat().st_ino != inode_before  # replaced by rename, not rewritten in place
    assert not list(tmp_path.glob(".*migrating"))
    assert lines[0]["version"] == 3 and list(lines[0])[-1] == "version"
    assert [line["id"] for line in lines[1:]] == ids
    assert [line["parentId"] for line in lines[1:]] == [None, *ids[:-1]]
    assert lines[3]["message"]["role"] == "custom"
    assert lines[4]["firstKeptEntryId"] == ids[1] and "firstKeptEntryIndex" not in lines[4]
    reopened = Session.open(path, writable=False)
    assert (
        reopened.report.migrated_from_version is None
        and [entry.id for entry in reopened.entries] == ids
    )


def test_a_read_only_open_migrates_in_memory_only(tmp_path):
    path = tmp_path / "legacy.jsonl"
    write_lines(path, *V1_SESSION)
    before = path.read_bytes()
    session = Session.open(path, writable=False)
    assert session.report.migrated_from_version == 1 and len(session.entries) == 4
    assert [message["role"] for message in session.build_context().messages] == [
        "compactionSummary",
        "assistant",
        "custom",
    ]
    assert path.read_bytes() == before


def test_a_v2_session_only_renames_hook_messages(tmp_path):
    path = tmp_path / "v2.jsonl"
    write_lines(
        path,
        '{"type":"session","version":2,"id":"v2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}',
        '{"type":"message","id":"h1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"x","content":"hook","display":true,"timestamp":3}}',
    )
    with Session.open(path):
        pass
    lines = path.read_text().splitlines()
    assert lines == [
        '{"type":"session","version":3,"id":"v2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}',
        '{"type":"message","id":"h1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"custom","customType":"x","content":"hook","display":true,"timestamp":3}}',
    ]


def test_opening_a_big_session_leaves_no_per_entry_objects_for_the_garbage_collector(tmp_path):
    # Each collection traces every tracked object: a container per entry (as a list of children
    # per parent was) made the collections after opening a 100k-entry session land, 20-30 ms
    # each, on the editors' first view. The entries themselves are not tracked.
    path = tmp_path / "big.jsonl"
    write_big_session(path, tmp_path, 5_000)
    gc.collect()
    before = len(gc.get_objects())
    with Session.open(path, writable=False) as session:
        assert len(session.entries) > 5_000
        assert len(gc.get_objects()) - before < 1_000
        assert BRANCH_IDS[0] in [entry.id for entry in session.children(BRANCH_POINT)]
        assert len(session.children(BRANCH_POINT)) == 2
        assert session.only_child(BRANCH_IDS[0]) is not None
