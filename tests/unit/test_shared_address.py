"""The shared server's place: the runtime directory and socket must be the user's own and closed
to others, a server serves only starts with its environment, and a shared start imports no more
than the standard library needs to forward stdio."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pi_lsp.transport import shared_address


def a_socket(path: Path, mode: int) -> Path:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as bound:
        bound.bind(str(path))
    path.chmod(mode)
    return path


def test_a_private_socket_passes(tmp_path):
    shared_address.check_private(a_socket(tmp_path / "s.sock", 0o600))


def test_a_socket_open_to_others_is_refused(tmp_path):
    with pytest.raises(shared_address.UnsafePlaceError, match="open to other users"):
        shared_address.check_private(a_socket(tmp_path / "s.sock", 0o666))


def test_another_users_socket_is_refused(tmp_path):
    path = a_socket(tmp_path / "s.sock", 0o600)
    with pytest.raises(shared_address.UnsafePlaceError, match="another user"):
        shared_address.check_private(path, uid=os.getuid() + 1)


def test_a_file_or_symlink_in_the_sockets_place_is_refused(tmp_path):
    (tmp_path / "file").write_text("")
    (tmp_path / "link").symlink_to(a_socket(tmp_path / "s.sock", 0o600))
    for name in ("file", "link"):
        with pytest.raises(shared_address.UnsafePlaceError, match="not a socket"):
            shared_address.check_private(tmp_path / name)


def test_the_runtime_directory_is_created_private_and_an_open_one_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    directory = shared_address.runtime_directory()
    assert directory == tmp_path / "pi-lsp" and (directory.stat().st_mode & 0o777) == 0o700
    directory.chmod(0o750)
    with pytest.raises(shared_address.UnsafePlaceError, match="open to other users"):
        shared_address.runtime_directory()


def test_the_key_ignores_window_variables_and_nothing_else():
    base = {"PATH": "/bin", "OPENAI_API_KEY": "k1"}
    key = shared_address.environment_key(base)
    window = {**base, "NVIM": "/run/nvim.1", "VSCODE_PID": "42", "PWD": "/elsewhere"}
    assert shared_address.environment_key(window) == key
    assert shared_address.environment_key({**base, "OPENAI_API_KEY": "k2"}) != key
    assert shared_address.environment_key({**base, "PATH": "/usr/bin"}) != key


@pytest.mark.parametrize(
    ("value", "expected"), [("1", True), ("yes", True), ("", False), ("0", False)]
)
def test_sharing_is_opt_in(value, expected):
    assert shared_address.enabled({"PI_LSP_SHARED": value}) is expected
    assert shared_address.enabled({}) is False


_FORWARDER_IMPORTS = """
import sys
from pi_lsp.transport import shared_forwarder
shared_forwarder.connect = lambda environment, options: "connection"
shared_forwarder.forward = lambda connection: print(sorted(
    name for name in sys.modules
    if name.split(".")[0] in ("pygls", "lsprotocol", "cattrs", "attrs", "attr", "litellm")
    or name.startswith(("pi_lsp.server", "pi_lsp.handlers", "pi_lsp.agent", "pi_lsp.llm"))
)) or 0
from pi_lsp.cli import main
sys.exit(main(["--shared"]))
"""


def test_a_shared_start_imports_no_server_module():
    result = subprocess.run(
        [sys.executable, "-c", _FORWARDER_IMPORTS],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "[]"


def test_a_runtime_directory_too_deep_for_a_socket_is_refused(tmp_path, monkeypatch):
    deep = tmp_path / ("d" * 100)
    deep.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    with pytest.raises(shared_address.UnsafePlaceError, match="too long"):
        shared_address.socket_path({"PATH": "/bin"})


@pytest.mark.parametrize(
    ("original", "argv", "start"),
    [
        # python -m pi_lsp --shared
        (
            ["py", "-m", "pi_lsp", "--shared"],
            ["/p/pi_lsp/__main__.py", "--shared"],
            ["-m", "pi_lsp"],
        ),
        # the pi-lsp script
        (
            ["py", "/venv/bin/pi-lsp", "--shared"],
            ["/venv/bin/pi-lsp", "--shared"],
            ["/venv/bin/pi-lsp"],
        ),
        # the VS Code bundle's launcher, which puts its libraries on sys.path itself
        (
            ["py", "-I", "/x/launch.py", "--log-file", "l"],
            ["pi-lsp", "--log-file", "l"],
            ["-I", "/x/launch.py"],
        ),
        # nothing to go by: the module
        ([], ["pi-lsp"], ["-m", "pi_lsp"]),
    ],
)
def test_the_shared_server_starts_the_way_this_process_started(monkeypatch, original, argv, start):
    from pi_lsp.transport import shared_forwarder

    monkeypatch.setattr(sys, "orig_argv", original)
    monkeypatch.setattr(sys, "argv", argv)
    assert shared_forwarder.server_command(["--log-file", "f"]) == [
        sys.executable,
        *start,
        "--serve-shared",
        "--log-file",
        "f",
    ]
