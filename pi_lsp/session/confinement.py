"""Which session files the server may open: those inside the session directory, or inside a
directory the user allowed besides it (``allowedSessionDirs``).

A client names sessions by path or by id; either way the file must resolve, symlinks followed,
inside one of those directories, so no request can turn the server into a reader of arbitrary
files. A symlink in the session directory that points out of it is refused like any other path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pi_lsp.errors import InvalidParamsError, echoed


def is_inside(path: Path, directories: Iterable[Path]) -> bool:
    """Whether ``path``, every symlink resolved, lies in (or under) one of ``directories``."""
    resolved = Path(os.path.realpath(path))
    return any(resolved.is_relative_to(os.path.realpath(directory)) for directory in directories)


def require_inside(path: Path, session_dir: Path, allowed_dirs: Iterable[Path] = ()) -> None:
    """InvalidParams unless ``path`` resolves inside ``session_dir`` or an allowed directory."""
    if not is_inside(path, (session_dir, *allowed_dirs)):
        raise InvalidParamsError(
            f"{echoed(str(path))} is outside the session directory {session_dir}: pi-lsp "
            "opens only session files that resolve inside it (symlinks followed) or inside a "
            "directory listed in the allowedSessionDirs setting"
        )
