"""What ``pi-lsp --shared`` runs: connect stdio to the shared server, starting it if needed.

Standard library only (and ``platformdirs`` for the runtime directory): this is the whole start-up
of a later editor window, so it must not import pygls or pi-lsp's server. It connects to the
socket ``shared_address`` names for this environment; if nothing listens there, it starts the server
(``pi-lsp --serve-shared``, detached, in a session of its own) and waits for it to listen. It
checks the socket and the process behind it are the user's own, sends one handshake line (its
working directory and process id), then copies stdin to the socket and the socket to stdout
until either ends. Anything unsafe or failing returns ``None``, and the caller serves the editor
in this process as without ``--shared``, saying why on stderr.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from pi_lsp.transport import shared_address

START_TIMEOUT_SECONDS = 60.0
"""How long a first start may take to listen (its imports take seconds on a loaded machine)."""
POLL_SECONDS = 0.02
BUFFER = 65536


def connect(environment: Mapping[str, str], server_options: list[str]) -> socket.socket | None:
    """A connection to this environment's shared server, starting it if none listens; ``None``
    (with the reason on stderr) when the place is unsafe or the server does not come up."""
    try:
        path = shared_address.socket_path(environment)
        connection = _try_connect(path)
        if connection is None:
            server = _start_server(server_options)
            deadline = time.monotonic() + START_TIMEOUT_SECONDS
            while connection is None and time.monotonic() < deadline:
                if server.poll():  # 0: another start's server took the place first
                    raise OSError(f"the shared server exited with status {server.returncode}")
                time.sleep(POLL_SECONDS)
                connection = _try_connect(path)
        if connection is None:
            raise OSError(f"no shared server listened on {path}")
        return connection
    except OSError as error:
        print(f"pi-lsp: not sharing a server: {error}", file=sys.stderr, flush=True)
        return None


def _try_connect(path: Path) -> socket.socket | None:
    try:
        shared_address.check_private(path)
    except FileNotFoundError:
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        connection.close()  # a socket left behind by a server that is gone: start a new one
        return None
    uid = shared_address.peer_uid(connection)
    if uid is not None and uid != os.getuid():
        connection.close()
        raise shared_address.UnsafePlaceError(f"the process listening on {path} is another user's")
    return connection


def server_command(server_options: list[str]) -> list[str]:
    """The shared server's command line: this process's own up to its arguments, so the server
    starts as this one did (``pi-lsp``, ``python -m pi_lsp``, or the VS Code bundle's
    ``python -I launch.py``, which puts its libraries on ``sys.path`` itself), then
    ``--serve-shared``."""
    original = list(getattr(sys, "orig_argv", ()))
    arguments = len(sys.argv) - 1
    if len(original) >= 2 and 0 <= arguments <= len(original) - 2:
        start = original[1 : len(original) - arguments]
        return [sys.executable, *start, "--serve-shared", *server_options]
    return [sys.executable, "-m", "pi_lsp", "--serve-shared", *server_options]


def _start_server(server_options: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        server_command(server_options),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # not the editor's child: it outlives this window
        close_fds=True,
    )


def forward(connection: socket.socket) -> int:
    """Send the handshake, then copy stdin → socket and socket → stdout until the server closes."""
    handshake = {"cwd": os.getcwd(), "pid": os.getpid()}
    connection.sendall(json.dumps(handshake).encode() + b"\n")
    threading.Thread(target=_copy_input, args=(connection,), daemon=True).start()
    output = sys.stdout.buffer
    while True:
        data = connection.recv(BUFFER)
        if not data:
            break
        output.write(data)
        output.flush()
    return 0


def _copy_input(connection: socket.socket) -> None:
    descriptor = sys.stdin.fileno()
    with contextlib.suppress(OSError):
        while True:
            data = os.read(descriptor, BUFFER)  # whatever has arrived, without waiting for more
            if not data:
                break
            connection.sendall(data)
    # The editor closed our stdin: tell the server, which then ends this client's connection.
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_WR)
