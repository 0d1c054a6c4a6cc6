"""Where an ACP session id leads after ``/new`` or ``/fork`` (``pi_lsp.acp.threads``)."""

from __future__ import annotations

from pathlib import Path

from pi_lsp.acp.threads import FILE_NAME, Threads


def test_an_id_leads_to_where_it_moved_and_a_later_reader_sees_it(tmp_path: Path):
    Threads(tmp_path).move("thread-a", "pi-b")
    Threads(tmp_path).move("thread-c", "pi-d")
    later = Threads(tmp_path)
    assert (later.current("thread-a"), later.current("thread-c")) == ("pi-b", "pi-d")
    assert later.current("pi-b") == "pi-b"
    later.move("thread-a", "thread-a")  # back where it started: no move left
    assert later.moves() == {"thread-c": "pi-d"}
    assert [path.name for path in tmp_path.iterdir()] == [FILE_NAME], "no temporary file left"


def test_an_unreadable_file_means_no_moves_and_is_replaced_whole(tmp_path: Path):
    (tmp_path / FILE_NAME).write_text("{torn")
    threads = Threads(tmp_path)
    assert threads.current("thread-a") == "thread-a"
    threads.move("thread-a", "pi-b")
    assert threads.moves() == {"thread-a": "pi-b"}


def test_a_move_that_cannot_be_written_is_logged_and_lost(tmp_path: Path, caplog):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    threads = Threads(blocked / "sessions")
    threads.move("thread-a", "pi-b")  # no exception: the /new that moved it still succeeds
    assert threads.current("thread-a") == "thread-a"
    assert "could not be written" in caplog.text
