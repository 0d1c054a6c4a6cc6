"""Files as resources see them: identity for de-duplication (the same file reached through two
paths, a symlink, loads once) and a cache of parsed files, so a reload re-reads only files whose
signature (size, modification and change times, inode) changed since the last load."""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

Parsed = TypeVar("Parsed")


def file_identity(path: str | os.PathLike[str]) -> object:
    """(device, inode) of ``path``; one stat, much cheaper
    than ``realpath`` over hundreds of skills."""
    try:
        status = os.stat(path)
    except OSError:
        return os.path.abspath(path)
    return (status.st_dev, status.st_ino)


class ParsedFileCache:
    """What parsing each file gave, reused while the file is unchanged.

    ``sweep`` after a load forgets the files that load did not ask for (deleted or no longer in a
    resource folder), so the cache never grows past the resources that exist.
    """

    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[tuple[int, ...], Any]] = {}
        self._asked: set[Hashable] = set()
        self.parsed = 0
        """How many files were actually parsed (for tests and benchmarks)."""

    def get(
        self, path: str | os.PathLike[str], variant: Hashable, parse: Callable[[], Parsed]
    ) -> Parsed:
        key = (os.fspath(path), variant)
        self._asked.add(key)
        try:
            status = os.stat(path)
        except OSError:
            self._entries.pop(key, None)
            self.parsed += 1
            return parse()
        signature = (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)
        cached = self._entries.get(key)
        if cached is not None and cached[0] == signature:
            return cached[1]
        value = parse()
        self.parsed += 1
        self._entries[key] = (signature, value)
        return value

    def sweep(self) -> None:
        for key in self._entries.keys() - self._asked:
            del self._entries[key]
        self._asked.clear()


def uncached(
    path: str | os.PathLike[str], variant: Hashable, parse: Callable[[], Parsed]
) -> Parsed:
    """The cache's ``get`` for callers without a cache: always parse."""
    return parse()
