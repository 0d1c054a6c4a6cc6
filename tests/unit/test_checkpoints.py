"""The pure checkpoint package: blob store, checkpoint entries, restore planning, the ledger,
previews and garbage collection."""

from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path

import pytest

from pi_lsp.checkpoints.blobs import BlobStore, content_hash, store_root
from pi_lsp.checkpoints.gc import collect_garbage
from pi_lsp.checkpoints.ledger import Ledger, RestoredFile, RestoreRecord
from pi_lsp.checkpoints.plan import Content, Current, decide, plan_journey
from pi_lsp.checkpoints.preview import commands_naming, commands_on, unified_diff
from pi_lsp.checkpoints.records import (
    CHECKPOINT_TYPE,
    FileChange,
    absolute_path,
    changes_of,
    checkpoint_data,
    recorded_path,
)
from pi_lsp.checkpoints.store import unrestorable_reason
from pi_lsp.errors import CheckpointContentMissingError

CWD = "/work/project"
H1, H2, H3 = "1" * 64, "2" * 64, "3" * 64


# --------------------------------------------------------------------------------- blob store


def test_a_blob_is_stored_once_compressed_and_read_back(tmp_path):
    store = BlobStore(tmp_path / ".checkpoints")
    content = b"line\n" * 1000
    digest = store.put(content)
    assert digest == content_hash(content) and store.put(content) == digest
    [blob] = list(store.blobs())
    assert blob.path == tmp_path / ".checkpoints" / "objects" / digest[:2] / digest[2:]
    assert blob.stored_bytes < len(content) / 10
    assert zlib.decompress(blob.path.read_bytes()) == content
    assert store.get(digest) == content
    assert store.size().blobs == 1


def test_a_missing_or_damaged_blob_is_a_clear_error(tmp_path):
    store = BlobStore(tmp_path)
    with pytest.raises(CheckpointContentMissingError, match="missing"):
        store.get(H1)
    digest = store.put(b"text")
    store.path_of(digest).write_bytes(b"not zlib")
    with pytest.raises(CheckpointContentMissingError, match="damaged"):
        store.get(digest)


def test_what_cannot_be_kept_says_why():
    assert unrestorable_reason(b"plain text\n", 100) is None
    assert unrestorable_reason("é".encode(), 100) is None
    assert unrestorable_reason(b"\x89PNG\r\n\x1a\n\0\0", 100) == "binary content"
    assert unrestorable_reason(b"\xff\xfe latin", 100) == "binary content"
    assert unrestorable_reason(b"x" * 101, 100) == "larger than 0.0001 MB"
    assert unrestorable_reason(b"x" * 5_000_001, 5_000_000) == "larger than 5 MB"


# --------------------------------------------------------------------------------- entries


def test_checkpoint_data_round_trips_and_skips_damaged_items():
    changes = [FileChange("a.txt", H1, H2), FileChange("new.txt", None, H3)]
    changes.append(FileChange("logo.png", unrestorable="binary content"))
    data = checkpoint_data("call_1", "write", changes)
    assert data["files"][1] == {"path": "new.txt", "before": None, "after": H3}
    assert data["files"][2] == {"path": "logo.png", "unrestorable": "binary content"}
    data["files"].append({"path": 3})
    data["files"].append({"path": "x", "before": "not a hash"})
    entry = {"type": "custom", "customType": CHECKPOINT_TYPE, "data": data}
    assert changes_of(entry) == changes
    assert changes_of({"type": "custom", "customType": "other", "data": data}) == []
    assert changes_of({"type": "custom", "customType": CHECKPOINT_TYPE, "data": []}) == []


def test_paths_are_recorded_relative_to_the_session_directory_when_inside_it():
    assert recorded_path(f"{CWD}/sub/new.txt", CWD) == "sub/new.txt"
    assert recorded_path("/etc/hosts", CWD) == "/etc/hosts"
    assert recorded_path("/work/project-other/a", CWD) == "/work/project-other/a"
    assert absolute_path("sub/new.txt", CWD) == f"{CWD}/sub/new.txt"
    assert absolute_path("/etc/hosts", CWD) == "/etc/hosts"


# --------------------------------------------------------------------------------- planning


def message(entry_id: str, parent: str | None) -> dict:
    return {"type": "message", "id": entry_id, "parentId": parent, "message": {"role": "user"}}


def checkpoint(entry_id: str, parent: str | None, *changes: FileChange) -> dict:
    return {
        "type": "custom",
        "id": entry_id,
        "parentId": parent,
        "customType": CHECKPOINT_TYPE,
        "data": checkpoint_data("call", "write", changes),
    }


def branch(*entries: dict) -> list[dict]:
    return list(entries)


ROOT = message("root", None)
TURN_1 = checkpoint("c1", "root", FileChange("a.txt", H1, H2))
TURN_2 = checkpoint("c2", "c1", FileChange("a.txt", H2, H3), FileChange("sub/new.txt", None, H1))
OTHER = checkpoint("o1", "c1", FileChange("a.txt", H2, H1), FileChange("b.txt", H3, None))


def targets(journey) -> dict[str, tuple]:
    return {
        os.path.relpath(file.path, CWD): (file.target.digest, file.origin.digest)
        for file in journey.files
    }


def test_going_back_concerns_the_files_changed_on_the_branch_left():
    journey = plan_journey(branch(ROOT, TURN_1, TURN_2), branch(ROOT, TURN_1), CWD)
    # a.txt: after its last change on root→target (turn 1); sub/new.txt: before its first change.
    assert targets(journey) == {"a.txt": (H2, H3), "sub/new.txt": (None, H1)}
    assert [entry["id"] for entry in journey.left] == ["c2"] and journey.taken == ()


def test_going_back_to_the_start_restores_the_first_before():
    journey = plan_journey(branch(ROOT, TURN_1, TURN_2), branch(ROOT), CWD)
    assert targets(journey) == {"a.txt": (H1, H3), "sub/new.txt": (None, H1)}


def test_going_forward_takes_the_content_after_the_last_change():
    journey = plan_journey(branch(ROOT), branch(ROOT, TURN_1, TURN_2), CWD)
    assert targets(journey) == {"a.txt": (H3, H1), "sub/new.txt": (H1, None)}


def test_switching_between_sibling_branches():
    journey = plan_journey(branch(ROOT, TURN_1, TURN_2), branch(ROOT, TURN_1, OTHER), CWD)
    assert targets(journey) == {
        "a.txt": (H1, H3),
        "b.txt": (None, H3),  # the other branch deleted it
        "sub/new.txt": (None, H1),
    }


def test_a_file_whose_contents_were_not_kept_is_unknown():
    binary = checkpoint("c3", "c2", FileChange("logo.png", unrestorable="binary content"))
    journey = plan_journey(branch(ROOT, TURN_1, TURN_2, binary), branch(ROOT, TURN_1), CWD)
    [logo] = [file for file in journey.files if file.path.endswith("logo.png")]
    assert logo.target == Content(unknown="binary content")


def test_the_decision_for_one_file():
    clean = frozenset({H2})
    assert decide(Content(H1), Current(H2), clean, force=False, writable=True).action == "restored"
    assert decide(Content(None), Current(H2), clean, force=False, writable=True).action == "deleted"
    created = decide(Content(H1), Current(None), frozenset({None}), force=False, writable=True)
    assert created.action == "created"
    same = decide(Content(H1), Current(H1), clean, force=False, writable=True)
    assert (same.action, same.reason) == ("skipped", "already as it was there")
    conflict = decide(Content(H1), Current(H3), clean, force=False, writable=True)
    assert conflict.action == "conflict" and "changed since pi-lsp last wrote it" in conflict.reason
    forced = decide(Content(H1), Current(H3), clean, force=True, writable=True)
    assert forced.action == "restored" and "overwrote" in forced.reason
    denied = decide(Content(H1), Current(H2), clean, force=False, writable=False)
    assert (denied.action, denied.reason) == ("skipped", "permission denied")
    unknown = decide(
        Content(unknown="binary content"), Current(H2), clean, force=True, writable=True
    )
    assert (unknown.action, unknown.reason) == ("skipped", "not restorable: binary content")
    now_binary = decide(
        Content(H1),
        Current(problem="it holds binary content now"),
        clean,
        force=True,
        writable=True,
    )
    assert now_binary.action == "skipped" and "binary" in now_binary.reason
    not_known = decide(
        Content(H1), Current(H2), None, force=False, writable=True, unknown_reason="binary content"
    )
    assert not_known.action == "conflict" and "binary content" in not_known.reason


# --------------------------------------------------------------------------------- ledger


def test_the_ledger_knows_what_pi_lsp_last_left_in_each_file(tmp_path):
    ledger = Ledger(tmp_path)
    assert ledger.clean_contents("/p/a") is None
    ledger.record_agent_change(
        "s1", "t1", [("/p/a", H1, None), ("/p/logo", None, "binary content")]
    )
    assert ledger.clean_contents("/p/a").contents == {H1}
    assert ledger.clean_contents("/p/logo").unknown_reason == "binary content"
    record = RestoreRecord("s1", "leaf", "target", (RestoredFile("/p/a", H1, H2),))
    ledger.record_restore("t2", record)
    # A restore's replaced content still counts as clean (the editor's undo brings it back)...
    assert ledger.clean_contents("/p/a").contents == {H1, H2}
    assert ledger.last_restore("s1") == record and ledger.last_restore("s2") is None
    forced = RestoreRecord("s1", "target", "leaf", (RestoredFile("/p/a", H3, H1, forced=True),))
    ledger.record_restore("t3", forced)
    # ...but not what force overwrote: that was someone else's.
    assert ledger.clean_contents("/p/a").contents == {H1}


def test_the_ledger_reads_what_another_process_appends_and_survives_a_rewrite(tmp_path):
    mine, theirs = Ledger(tmp_path), Ledger(tmp_path)
    mine.record_agent_change("s1", "t1", [("/p/a", H1, None)])
    assert theirs.clean_contents("/p/a").contents == {H1}
    mine.record_agent_change("s1", "t2", [("/p/a", H2, None)])
    with open(theirs.path, "a") as handle:
        handle.write('not json\n{"kind":"agent","files":[{"path":"/p/b","content":null}]}\n{"kind"')
    assert theirs.clean_contents("/p/a").contents == {H2}
    assert theirs.clean_contents("/p/b").contents == {None}
    with mine.locked():
        mine.rewrite([{"kind": "state", "files": [{"path": "/p/a", "clean": [H3]}]}])
    assert theirs.clean_contents("/p/a").contents == {H3}
    assert theirs.clean_contents("/p/b") is None


# --------------------------------------------------------------------------------- previews


def test_unified_diffs_of_changed_created_and_deleted_files():
    assert unified_diff("one\ntwo\n", "one\nTWO\n", "a.txt") == (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
    )
    assert unified_diff(None, "new", "n.txt") == (
        "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n\\ No newline at end of file\n"
    )
    assert unified_diff("old\n", None, "o.txt").startswith("--- a/o.txt\n+++ /dev/null\n")


def test_commands_that_name_a_file_are_found_on_the_way():
    entries = [
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me look."},
                    {
                        "type": "toolCall",
                        "name": "bash",
                        "arguments": {"command": "sed -i s/a/b/ a.txt"},
                    },
                    {"type": "toolCall", "name": "read", "arguments": {"path": "a.txt"}},
                    {
                        "type": "toolCall",
                        "name": "bash",
                        "arguments": {"command": "cd sub && rm new.txt"},
                    },
                    {"type": "toolCall", "name": "bash", "arguments": {"command": "cat data.txt"}},
                ],
            },
        },
        {
            "type": "message",
            "message": {"role": "bashExecution", "command": f"cp {CWD}/a.txt /tmp"},
        },
        {"type": "custom", "data": {"command": "a.txt"}},
    ]
    commands = commands_on(entries)
    assert commands == [
        "sed -i s/a/b/ a.txt",
        "cd sub && rm new.txt",
        "cat data.txt",
        f"cp {CWD}/a.txt /tmp",
    ]
    assert commands_naming(commands, f"{CWD}/a.txt", CWD) == [
        "sed -i s/a/b/ a.txt",
        f"cp {CWD}/a.txt /tmp",
    ]
    assert commands_naming(commands, f"{CWD}/sub/new.txt", CWD) == ["cd sub && rm new.txt"]
    assert commands_naming(commands, f"{CWD}/ta.txt", CWD) == []


# --------------------------------------------------------------------------------- gc


def write_session(directory: Path, session_id: str, *entries: dict) -> Path:
    path = directory / f"2026-01-01T00-00-00-000Z_{session_id}.jsonl"
    header = {"type": "session", "version": 3, "id": session_id, "cwd": CWD}
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *entries]))
    return path


def test_gc_removes_only_blobs_nothing_refers_to(tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    store = BlobStore(store_root(sessions))
    in_session, in_ledger, replaced, garbage, young = (
        store.put(text) for text in (b"session", b"ledger", b"replaced", b"garbage", b"young")
    )
    write_session(sessions, "s1", checkpoint("c1", None, FileChange("a.txt", None, in_session)))
    ledger = Ledger(store_root(sessions))
    ledger.record_agent_change("s1", "t1", [(f"{CWD}/b.txt", in_ledger, None)])
    ledger.record_restore(
        "t2", RestoreRecord("s1", "x", "y", (RestoredFile(f"{CWD}/c.txt", replaced, None),))
    )
    ledger.record_restore(
        "t3", RestoreRecord("gone", "x", "y", (RestoredFile(f"{CWD}/d.txt", garbage, None),))
    )
    ledger.record_agent_change("s1", "t4", [(f"{CWD}/d.txt", None, None)])
    old = time.time() - 7200
    for digest in (in_session, in_ledger, replaced, garbage):
        os.utime(store.path_of(digest), (old, old))
    report = collect_garbage(sessions)
    assert not store.has(garbage)
    assert all(store.has(digest) for digest in (in_session, in_ledger, replaced, young))
    assert (report.removed.blobs, report.kept.blobs, report.kept_young, report.sessions) == (
        1,
        4,
        1,
        1,
    )
    assert report.kept.stored_bytes == store.size().stored_bytes
    # The condensed ledger still knows the state of every file and the last restore of s1.
    fresh = Ledger(store_root(sessions))
    assert fresh.clean_contents(f"{CWD}/b.txt").contents == {in_ledger}
    assert fresh.clean_contents(f"{CWD}/d.txt").contents == {None}
    assert fresh.last_restore("s1").files[0].replaced == replaced
    assert fresh.last_restore("gone") is None
    assert collect_garbage(sessions, min_age_seconds=0).removed.blobs == 1  # the young one
    assert collect_garbage(sessions, min_age_seconds=0).removed.blobs == 0


def test_gc_of_a_directory_without_a_store(tmp_path):
    report = collect_garbage(tmp_path)
    assert (report.removed.blobs, report.kept.blobs, report.sessions) == (0, 0, 0)
