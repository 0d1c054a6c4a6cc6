"""File identity for de-duplication: the same file reached through two paths (a symlink) loads once."""

from __future__ import annotations

import os


def file_identity(path: str | os.PathLike[str]) -> object:
    """(device, inode) of ``path``; one stat, much cheaper than ``realpath`` over hundreds of skills."""
    try:
        status = os.stat(path)
    except OSError:
        return os.path.abspath(path)
    return (status.st_dev, status.st_ino)
