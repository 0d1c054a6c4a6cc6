"""Importing session files, moving them to the trash (``pi-lsp session delete`` too), and the
Markdown export, on files on disk."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys

import pytest

from pi_lsp.client import isolated_environment
from pi_lsp.errors import InvalidParamsError, SessionLockedError
from pi_lsp.project_memory.export import export_session, html_page
from pi_lsp.project_memory.session_files import import_session, move_to_trash


def session_text(session_id="0196f000-0000-7000-8000-000000000001", cwd="/elsewhere"):
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": session_id,
            "timestamp": "2025-03-01T10:00:00.000Z",
            "cwd": cwd,
        },
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2025-03-01T10:00:01.000Z",
            "message": {"role": "user", "content": "question </script><b>x</b>", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": "2025-03-01T10:00:02.000Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "answer"},
                    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}},
                ],
            },
        },
        {
            "type": "compaction",
            "id": "k1",
            "parentId": "a1",
            "timestamp": "2025-03-01T10:00:03.000Z",
            "summary": "the summary",
            "firstKeptEntryId": "a1",
            "tokensBefore": 10,
            "details": {"readFiles": ["a.py"], "modifiedFiles": ["b.py"]},
        },
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_an_import_keeps_the_id_and_cwd_and_never_overwrites(tmp_path):
    source = tmp_path / "source.jsonl"
    source.write_text(session_text())
    header, target = import_session(source, tmp_path / "sessions")
    assert (header.id, header.cwd) == ("0196f000-0000-7000-8000-000000000001", "/elsewhere")
    assert target.name == "2025-03-01T10-00-00-000Z_0196f000-0000-7000-8000-000000000001.jsonl"
    assert target.read_bytes() == source.read_bytes()
    with pytest.raises(InvalidParamsError, match="already"):
        import_session(source, tmp_path / "sessions")


@pytest.mark.parametrize("content", ['{"not": "a session"}\n', "", "garbage\n"])
def test_a_file_that_is_not_a_session_is_refused_and_nothing_copied(tmp_path, content):
    source = tmp_path / "source.jsonl"
    source.write_text(content)
    with pytest.raises(InvalidParamsError):
        import_session(source, tmp_path / "sessions")
    assert not (tmp_path / "sessions").exists()


def test_a_file_another_process_writes_is_not_trashed(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(session_text())
    descriptor = os.open(path, os.O_RDWR)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    try:
        with pytest.raises(SessionLockedError):
            move_to_trash(path)
    finally:
        os.close(descriptor)
    assert path.exists()


def test_pi_lsp_session_delete_moves_the_file_to_the_trash(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    path = tmp_path / "s.jsonl"
    path.write_text(session_text())
    command = [sys.executable, "-m", "pi_lsp", "session", "delete", str(path)]
    done = subprocess.run(
        command, env=isolated_environment(home), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"path": str(path), "trashed": True}
    assert not path.exists()
    assert (home / ".local" / "share" / "Trash" / "files" / "s.jsonl").exists()

    notes = tmp_path / "notes.jsonl"
    notes.write_text("{}\n")
    refused = subprocess.run(
        [*command[:-1], str(notes)],
        env=isolated_environment(home),
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode != 0 and notes.exists()


def test_where_no_trash_can_take_the_file_nothing_is_deleted(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    path = tmp_path / "s.jsonl"
    path.write_text(session_text())
    # No trash folder can be made under a regular file, as on a read-only home.
    environment = isolated_environment(home) | {"XDG_DATA_HOME": str(blocker / "share")}
    done = subprocess.run(
        [sys.executable, "-m", "pi_lsp", "session", "delete", str(path)],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "to the trash" in done.stderr and "nothing was deleted" in done.stderr
    assert path.read_text() == session_text()


def test_markdown_is_the_active_path_with_tool_calls_and_file_lists(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(session_text())
    text = export_session(path, "markdown").decode()
    assert "## User\n\nquestion" in text and "Tool call `read`" in text
    assert "## Compaction summary\n\nthe summary" in text and "- `b.py`" in text


def test_the_page_cannot_be_broken_out_of_by_the_session_text(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(session_text())
    page = export_session(path, "html").decode()
    assert "</script><b>" not in page and "\\u003c/script\\u003e" in page
    assert "http://" not in page.replace("http-equiv", "") and "https://" not in page
    assert html_page({"id": "x"}, [], "<b>name</b>").count("&lt;b&gt;name&lt;/b&gt;") == 2
