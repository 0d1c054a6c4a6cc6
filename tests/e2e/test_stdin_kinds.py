"""The server reads its stdin on the event loop when it is a pipe (as editors start it), and on
pygls's reader thread when it is a file: both serve a whole conversation, to its ``exit``. Typed
bare in a terminal, it says on stderr what it is waiting for, and Ctrl-D ends it."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

from pi_lsp.client import isolated_environment
from tests.reliability.raw_lsp import frame


def messages(workspace: Path) -> bytes:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}},
    }
    initialized = {"jsonrpc": "2.0", "method": "initialized", "params": {}}
    shutdown = {"jsonrpc": "2.0", "id": 3, "method": "shutdown"}
    exit_notification = {"jsonrpc": "2.0", "method": "exit"}
    ordered = (initialize, initialized, shutdown, exit_notification)
    return b"".join(frame(json.dumps(message).encode()) for message in ordered)


def answered_ids(output: bytes) -> list[int]:
    ids = []
    for part in output.split(b"Content-Length: ")[1:]:
        body = json.loads(part.split(b"\r\n\r\n", 1)[1])
        if "id" in body and "method" not in body:
            ids.append(body["id"])
    return ids


def test_a_file_and_a_pipe_as_stdin_are_both_served_to_the_exit(tmp_path: Path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    environment = isolated_environment(tmp_path / "home")
    input_file = tmp_path / "input"
    input_file.write_bytes(messages(workspace))
    with input_file.open("rb") as stdin:
        from_file = subprocess.run(
            [sys.executable, "-m", "pi_lsp"],
            stdin=stdin,
            check=False,
            capture_output=True,
            env=environment,
            timeout=60,
        )
    from_pipe = subprocess.run(
        [sys.executable, "-m", "pi_lsp"],
        input=messages(workspace),
        check=False,
        capture_output=True,
        env=environment,
        timeout=60,
    )
    for finished in (from_file, from_pipe):
        assert answered_ids(finished.stdout) == [1, 3]
        assert finished.returncode == 0, finished.stderr.decode()
        assert WAITING not in finished.stderr


WAITING = b"pi-lsp: waiting for an editor's LSP messages on stdin"
GUARD_SECONDS = 120  # only against a hang: every wait below ends on a condition


def stderr_line(process: subprocess.Popen) -> bytes:
    assert process.stderr is not None
    ready, _, _ = select.select([process.stderr], [], [], GUARD_SECONDS)
    assert ready, "nothing on stderr"
    return process.stderr.readline()


def test_in_a_terminal_it_says_what_it_waits_for_and_ctrl_d_ends_it(tmp_path: Path):
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "pi_lsp"],
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=isolated_environment(tmp_path / "home"),
        )
        os.close(terminal)
        try:
            line = stderr_line(process)
            assert line.startswith(WAITING), line
            assert b"Ctrl-D" in line and b"pi-lsp --help" in line
            os.write(controller, b"\x04")  # Ctrl-D: the end of the terminal's input
            process.wait(timeout=GUARD_SECONDS)
        finally:
            process.kill()
            output, _ = process.communicate()
    finally:
        os.close(controller)
    assert output == b"", "stdout carries LSP frames only"
