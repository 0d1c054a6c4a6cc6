"""``pi-lsp demo`` end to end: the command as a user
runs it, the real server, the scripted model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pi_lsp.demo import FIRST_ANSWER, FIXED_LINE
from pi_lsp.session.session import Session
from tests.e2e.conftest import server_environment

REPOSITORY = Path(__file__).resolve().parents[2]
STORY_ROLES = ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]


def run_demo(*arguments: str, cwd: Path) -> subprocess.CompletedProcess:
    environment = server_environment()
    # Run from outside the repository, as a user would, and still import this checkout.
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPOSITORY), environment.get("PYTHONPATH")])
    )
    return subprocess.run(
        [sys.executable, "-m", "pi_lsp", "demo", *arguments],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def printed_path(transcript: str, label: str) -> Path:
    line = next(line for line in transcript.splitlines() if line.startswith(label))
    return Path(line.removeprefix(label).strip())


def message_roles(path: Path) -> list[str]:
    with Session.open(path, writable=False) as session:
        return [entry.role for entry in session.entries if entry.type == "message"]


def test_the_demo_tells_the_whole_story_and_leaves_a_session_pi_can_open(tmp_path):
    workspace = tmp_path / "demo"
    completed = run_demo(str(workspace), cwd=tmp_path)
    transcript = completed.stdout
    assert completed.returncode == 0, completed.stderr
    assert "model: scripted" in transcript
    assert (
        FIXED_LINE in (workspace / "calc.py").read_text()
        and "+ 1" not in (workspace / "calc.py").read_text()
    )
    assert '[tool call] read {"path": "calc.py"}' in transcript and "[tool call] edit" in transcript
    assert "ok: Replaced 1 block in calc.py." in transcript
    assert FIRST_ANSWER in transcript, "the streamed text deltas add up to the whole answer"
    assert "pi/navigate" in transcript and "pi/fork" in transcript

    session_file = printed_path(transcript, "session file:")
    assert session_file.parent == workspace / ".pi" / "sessions"
    assert message_roles(session_file) == [*STORY_ROLES, "user", "assistant"]
    fork_file = printed_path(transcript, "fork:")
    assert message_roles(fork_file) == STORY_ROLES
    with Session.open(fork_file, writable=False) as fork:
        assert fork.header.get("parentSession") == str(session_file)


def test_the_demo_refuses_a_directory_that_is_not_empty(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    completed = run_demo(str(tmp_path), cwd=tmp_path)
    assert completed.returncode != 0
    assert completed.stderr.count("\n") == 1 and "is not empty" in completed.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.txt"]
