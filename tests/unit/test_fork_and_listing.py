"""Forking a path into a new session file, and listing a session directory."""

import json
import os

from pi_lsp import protocol
from pi_lsp.session.fork import fork_session
from pi_lsp.session.listing import list_sessions
from pi_lsp.session.session import Session
from tests.builders import assistant_message, user_text


def test_a_fork_holds_one_path_rechained_with_its_labels_recreated(tmp_path):
    with Session.create(tmp_path, "/w") as source:
        first = source.append_message(user_text("one"))
        source.append_label(first, "start")  # a label in the middle of the path
        second = source.append_message(assistant_message("two"))
        source.move_leaf(first)
        source.append_message(assistant_message("elsewhere"))
        source.append_label(second, "answer")
        with fork_session(source, second) as fork:
            assert fork.is_persisted and fork.path.parent == source.path.parent
            lines = [json.loads(line) for line in fork.path.read_text().splitlines()]
    header, *entries = lines
    assert (
        header["parentSession"] == str(source.path)
        and header["cwd"] == "/w"
        and header["id"] != source.id
    )
    assert [entry["type"] for entry in entries] == ["message", "message", "label", "label"]
    assert (
        entries[1]["id"] == second and entries[1]["parentId"] == first
    )  # re-chained over the dropped label
    assert [(entry["targetId"], entry["label"]) for entry in entries[2:]] == [
        (first, "start"),
        (second, "answer"),
    ]
    assert entries[2]["parentId"] == second and entries[3]["parentId"] == entries[2]["id"]
    assert len(source.entries) == 5  # the source is untouched


def test_a_fork_without_conversation_is_not_written_until_its_first_message(tmp_path):
    with Session.create(tmp_path, "/w") as source:
        change = source.append_model_change("openai", "gpt-4o")
        source.append_message(user_text("hi"))
        with fork_session(source, change) as fork:
            assert not fork.is_persisted and not fork.path.exists()
            fork.append_message(user_text("now"))
            assert [json.loads(line)["type"] for line in fork.path.read_text().splitlines()] == [
                "session",
                "model_change",
                "message",
            ]


def test_listing_gives_pis_session_info_newest_first_and_skips_foreign_files(tmp_path):
    older = Session.create(tmp_path, "/w")
    older.append_message({**user_text("first question"), "timestamp": 1_000})
    older.append_message({**assistant_message("answer"), "timestamp": 2_000})
    older.append_session_info("Older one")
    older.close()
    newer = Session.create(tmp_path, "/w")
    newer.append_message({**user_text("second"), "timestamp": 5_000})
    newer.close()
    (tmp_path / "notes.jsonl").write_text('{"hello":"world"}\n')
    (tmp_path / "ignored.txt").write_text("x")
    infos = list_sessions(tmp_path)
    assert [info.id for info in infos] == [newer.id, older.id]
    assert protocol.to_json(infos[1]) == {
        "path": str(older.path),
        "id": older.id,
        "cwd": "/w",
        "name": "Older one",
        "parentSessionPath": None,
        "created": older.header["timestamp"],
        "modified": "1970-01-01T00:00:02.000Z",
        "messageCount": 2,
        "firstMessage": "first question",
    }
    assert list_sessions(tmp_path / "missing") == []


def test_a_session_without_messages_lists_with_a_placeholder(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
    )
    os.utime(path, (0, 0))
    [info] = list_sessions(tmp_path)
    assert info.first_message == "(no messages)" and info.message_count == 0
    assert info.modified == "2026-01-01T00:00:00.000Z"
