"""Entries of kinds a later pi may write: kept and shown, never in the context, never blocking.

A session holding them opens writable, continues normally (new entries chain onto them), keeps
their lines byte for byte, shows them in the tree by their type, and the server logs one notice
per kind.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from pi_lsp.agent.registry import SessionRegistry
from pi_lsp.session.session import Session
from pi_lsp.session.tree_view import render_tree_text, tree_view

HEADER = {
    "type": "session",
    "version": 3,
    "id": "s-unknown",
    "timestamp": "2026-11-20T10:00:00.000Z",
    "cwd": "/w",
}


def write_session(path: Path) -> list[str]:
    lines = [
        HEADER,
        {
            "type": "message",
            "id": "a1",
            "parentId": None,
            "timestamp": "2026-11-20T10:00:01.000Z",
            "message": {"role": "user", "content": "hello", "timestamp": 1},
        },
        {
            "type": "hologram",
            "id": "a2",
            "parentId": "a1",
            "timestamp": "2026-11-20T10:00:02.000Z",
            "payload": {"n": 1.50, "z": 1e21},
        },
        {"type": "hologram", "id": "a3", "parentId": "a2", "timestamp": "2026-11-20T10:00:03.000Z"},
        {
            "type": "usage",
            "id": "a4",
            "parentId": "a3",
            "timestamp": "2026-11-20T10:00:04.000Z",
            "kind": "cache_warm",
            "provider": "p",
            "model": "m",
            "usage": {},
        },
        {
            "type": "time_travel",
            "id": "a5",
            "parentId": "a4",
            "timestamp": "2026-11-20T10:00:05.000Z",
        },
    ]
    text = [json.dumps(line, separators=(",", ":")) for line in lines]
    text[2] = text[2].replace('"n":1.5', '"n":1.50')  # bytes JSON.stringify would not write
    path.write_text("\n".join(text) + "\n")
    return text


def test_unknown_kinds_are_kept_shown_and_left_out_of_the_context(tmp_path):
    path = tmp_path / "s.jsonl"
    original = write_session(path)
    with Session.open(path) as session:
        assert session.writable
        assert session.report.unknown_entry_types == {"hologram": 2, "time_travel": 1}
        assert [m["content"] for m in session.build_context().messages] == ["hello"]
        rows = tree_view(session).entries
        assert [(row.id, row.type) for row in rows][1:3] == [
            ("a2", "hologram"),
            ("a3", "hologram"),
        ]
        assert "a2 hologram" in render_tree_text(session)
        answer = session.append_message({"role": "user", "content": "still going", "timestamp": 2})
        assert session.get_entry(answer).parent_id == "a5"
        assert [m["content"] for m in session.build_context().messages] == [
            "hello",
            "still going",
        ]
    lines = path.read_text().splitlines()
    assert lines[: len(original)] == original  # untouched, odd number formatting included
    assert json.loads(lines[-1])["parentId"] == "a5"


def test_the_server_logs_one_notice_per_unknown_kind(tmp_path, caplog):
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    write_session(first)
    write_session(second)
    second.write_text(second.read_text().replace('"s-unknown"', '"s-other"'))
    registry = SessionRegistry(tmp_path, "/w", lambda event: None)
    with caplog.at_level(logging.INFO, logger="pi_lsp.agent.registry"):
        registry.open_path(first)
        registry.open_path(second)
    notices = [r.getMessage() for r in caplog.records if "does not know" in r.getMessage()]
    assert len(notices) == 2
    assert "2 entries of kind 'hologram'" in notices[0]
    assert "1 entry of kind 'time_travel'" in notices[1]
    registry.close_all()
