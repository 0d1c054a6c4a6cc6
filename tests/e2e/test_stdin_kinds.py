"""The server reads its stdin on the event loop when it is a pipe (as editors start it), and on
pygls's reader thread when it is a file: both serve a whole conversation, to its ``exit``."""

from __future__ import annotations

import json
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
