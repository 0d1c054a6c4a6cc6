"""The ``pi-lsp session`` command: output shapes for
people and tools, one-line errors for bad input."""

import json
import subprocess
import sys

import pytest

from pi_lsp.cli import main
from pi_lsp.session.session import Session
from tests.builders import assistant_message, user_text


@pytest.fixture
def session_file(tmp_path):
    with Session.create(tmp_path / "sessions", "/w") as session:
        first = session.append_message(user_text("hello there"))
        session.append_message(assistant_message("hi"))
        session.move_leaf(first)
        session.append_message(assistant_message("another answer"))
        session.append_label(first, "start")
        session.append_session_info("Demo")
        return session.path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_context_prints_pis_context_document(capsys, session_file):
    code, out, _ = run(capsys, "session", "context", str(session_file))
    document = json.loads(out)
    assert code == 0 and list(document) == ["messages", "thinkingLevel", "model"]
    assert [message["content"][0]["text"] for message in document["messages"]] == [
        "hello there",
        "another answer",
    ]
    assert document["model"] == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}


def test_tree_text_marks_the_active_path_the_leaf_and_labels(capsys, session_file):
    code, out, _ = run(capsys, "session", "tree", str(session_file))
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("session ") and "'Demo'" in lines[0]
    assert lines[1].startswith("* ") and "[start]" in lines[1] and "hello there" in lines[1]
    assert lines[2].startswith("    ") and "assistant: hi" in lines[2]  # the branch left behind
    assert lines[3].startswith("*   ") and "another answer" in lines[3]
    assert lines[-1].startswith("@ ") and "session_info" in lines[-1]


def test_tree_json_lists_entries_with_roles_previews_and_the_active_path(capsys, session_file):
    _, out, _ = run(capsys, "session", "tree", str(session_file), "--json")
    document = json.loads(out)
    first = document["entries"][0]
    assert (
        first["role"] == "user" and first["preview"] == "hello there" and first["label"] == "start"
    )
    assert document["activePath"][-1] == document["leafId"] and document["roots"] == [first["id"]]
    assert len(document["children"][first["id"]]) == 2


def test_list_and_fork(capsys, session_file, tmp_path):
    _, out, _ = run(capsys, "session", "list", str(session_file.parent))
    [info] = json.loads(out)
    assert info["name"] == "Demo" and info["messageCount"] == 3
    entries = json.loads(run(capsys, "session", "tree", str(session_file), "--json")[1])["entries"]
    code, out, _ = run(capsys, "session", "fork", str(session_file), "--at", entries[1]["id"])
    fork = json.loads(out)
    assert code == 0 and fork["written"] is True
    forked = Session.open(fork["path"], writable=False)
    assert [entry.type for entry in forked.entries] == ["message", "message", "label"]
    assert forked.header["parentSession"] == str(session_file)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["session", "context", "{missing}"], "no session file at"),
        (["session", "context", "{foreign}"], "not a pi session file"),
        (["session", "context", "{file}", "--leaf", "nope"], "entry nope not found"),
        (
            ["session", "plan-branch-summary", "{file}", "--from", "nope", "--to", "nope"],
            "entry nope not found",
        ),
        (["session", "fork", "{file}", "--at", "nope"], "entry nope not found"),
    ],
)
def test_bad_input_exits_non_zero_with_one_line_on_stderr(
    capsys, session_file, tmp_path, argv, message
):
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"role":"user"}\n')
    before = foreign.read_bytes()
    paths = {"missing": tmp_path / "missing.jsonl", "foreign": foreign, "file": session_file}
    code, out, err = run(capsys, *[argument.format(**paths) for argument in argv])
    assert code == 1 and out == "" and message in err and err.count("\n") == 1
    assert foreign.read_bytes() == before


def test_bad_numbers_are_argument_errors():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pi_lsp",
            "session",
            "plan-compaction",
            "x.jsonl",
            "--keep-recent-tokens",
            "-5",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2 and "expected a number >= 0" in result.stderr


def test_gc_removes_unreferenced_checkpoint_contents_and_reports_the_store(capsys, tmp_path):
    from pi_lsp.checkpoints.blobs import BlobStore, store_root
    from pi_lsp.checkpoints.records import CHECKPOINT_TYPE, FileChange, checkpoint_data

    directory = tmp_path / "sessions"
    store = BlobStore(store_root(directory))
    kept, dropped = store.put(b"kept\n" * 100), store.put(b"dropped\n")
    with Session.create(directory, "/w") as session:
        session.append_message(user_text("change it"))
        session.append_custom(
            CHECKPOINT_TYPE, checkpoint_data("c1", "write", [FileChange("a.txt", None, kept)])
        )
    code, out, _ = run(capsys, "session", "gc", str(directory), "--min-age", "0")
    report = json.loads(out)
    assert code == 0 and not store.has(dropped) and store.has(kept)
    assert report["removedBlobs"] == 1 and report["keptBlobs"] == 1 and report["sessions"] == 1
    assert report["keptBytes"] == store.size().stored_bytes > 0
    assert report["store"] == str(store_root(directory))
    code, _, err = run(capsys, "session", "gc", str(tmp_path / "nowhere"))
    assert code == 1 and "no session directory" in err
