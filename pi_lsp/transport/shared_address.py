"""Where the shared server listens, and whether that place is safe to use.

The socket lives in the user runtime directory (``platformdirs``; ``$XDG_RUNTIME_DIR/pi-lsp`` on
Linux), which must belong to the user and be closed to everyone else (mode 0700); the socket itself
is the user's with mode 0600. Its name carries a key of the environment the server was started
with (pi-lsp's version, the Python that runs it and every environment variable but those that
only name an editor window), so a server only ever serves starts that would have run with the same
keys, settings and PATH, and a changed environment gets a server of its own.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path

from pi_lsp import __version__

ENABLE_VARIABLE = "PI_LSP_SHARED"
IDLE_VARIABLE = "PI_LSP_SHARED_IDLE_SECONDS"
DEFAULT_IDLE_SECONDS = 600.0
# Variables that differ between the windows of one editor, or between a shell's prompts, without
# changing what the server would do.
_WINDOW_VARIABLES = frozenset(
    {"NVIM", "NVIM_LISTEN_ADDRESS", "MYVIMRC", "PWD", "OLDPWD", "SHLVL", "_", "WINDOWID"}
)
_WINDOW_PREFIXES = ("VSCODE_", "ELECTRON_", "TERM_SESSION", "PI_LSP_SHARED")


class UnsafePlaceError(OSError):
    """The runtime directory or the socket could be reached by another user."""


def enabled(environment: Mapping[str, str]) -> bool:
    return environment.get(ENABLE_VARIABLE, "").strip().lower() in ("1", "true", "yes", "on")


def idle_seconds(environment: Mapping[str, str]) -> float:
    try:
        return max(float(environment.get(IDLE_VARIABLE, DEFAULT_IDLE_SECONDS)), 0.0)
    except ValueError:
        return DEFAULT_IDLE_SECONDS


def environment_key(environment: Mapping[str, str]) -> str:
    kept = sorted(
        (name, value)
        for name, value in environment.items()
        if name not in _WINDOW_VARIABLES and not name.startswith(_WINDOW_PREFIXES)
    )
    digest = hashlib.sha256(repr((__version__, sys.executable, kept)).encode("utf-8", "replace"))
    return digest.hexdigest()[:20]


def runtime_directory() -> Path:
    """The user's runtime directory for pi-lsp, created 0700 if missing, refused if unsafe."""
    import platformdirs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when it falls back from XDG
        directory = platformdirs.user_runtime_path("pi-lsp", appauthor=False)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    check_private(directory, directory=True)
    return directory


MAX_SOCKET_PATH_BYTES = (104 if sys.platform == "darwin" else 108) - 1
"""A Unix socket's path must fit ``sun_path`` with its final NUL."""


def socket_path(environment: Mapping[str, str]) -> Path:
    path = runtime_directory() / f"shared-{environment_key(environment)}.sock"
    if len(os.fsencode(path)) > MAX_SOCKET_PATH_BYTES:
        raise UnsafePlaceError(f"{path} is too long for a Unix socket")
    return path


def check_private(path: Path, *, directory: bool = False, uid: int | None = None) -> None:
    """Refuse ``path`` unless it is the user's own (not a symlink) and closed to others."""
    info = os.lstat(path)
    kind = stat.S_ISDIR if directory else stat.S_ISSOCK
    expected_uid = os.getuid() if uid is None else uid
    if not kind(info.st_mode):
        raise UnsafePlaceError(f"{path} is not a {'directory' if directory else 'socket'}")
    if info.st_uid != expected_uid:
        raise UnsafePlaceError(f"{path} belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o077:
        raise UnsafePlaceError(
            f"{path} is open to other users (mode {stat.S_IMODE(info.st_mode):o}); "
            f"pi-lsp needs {'0700' if directory else '0600'}"
        )


def peer_uid(connection) -> int | None:
    """The user id of the process at the other end of a Unix socket (Linux: ``SO_PEERCRED``)."""
    import socket
    import struct

    if not hasattr(socket, "SO_PEERCRED"):
        return None
    credentials = connection.getsockopt(
        socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
    )
    return struct.unpack("3i", credentials)[1]
