"""The ``.gitignore``, ``.ignore`` and ``.fdignore`` rules that resource scans honour, as pi 0.84.2
gathers them (``core/skills.ts``, ``core/package-manager.ts``).

A scan starts at a resource folder and adds each directory's ignore files as it enters it, every
pattern prefixed with that directory's path relative to the scan's root (a leading ``/`` anchors
to the directory, ``!`` re-includes). Matching follows git's rules through ``pathspec``;
directories are asked with a trailing ``/``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pathspec

IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".fdignore")


class IgnoreRules:
    """The rules met so far in one scan below ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._patterns: list[str] = []
        self._spec: pathspec.GitIgnoreSpec | None = None

    def enter(self, directory: Path, names: Iterable[str] | None = None) -> None:
        """Add the ignore files of ``directory`` (a folder inside the scan, or its root).

        ``names``, the directory's listing when the caller has it, saves trying to open ignore
        files that are not there (three failed opens per folder add up over hundreds of skills).
        """
        present = (
            IGNORE_FILE_NAMES
            if names is None
            else [name for name in IGNORE_FILE_NAMES if name in set(names)]
        )
        if not present:
            return
        relative = os.path.relpath(directory, self.root)
        prefix = "" if relative == "." else Path(relative).as_posix() + "/"
        added = False
        for name in present:
            try:
                text = (directory / name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for line in text.splitlines():
                pattern = _prefixed(line, prefix)
                if pattern:
                    self._patterns.append(pattern)
                    added = True
        if added:
            self._spec = pathspec.GitIgnoreSpec.from_lines(self._patterns)

    def ignores(self, path: Path, *, is_directory: bool) -> bool:
        if self._spec is None:
            return False
        relative = Path(os.path.relpath(path, self.root)).as_posix()
        return self._spec.match_file(relative + "/" if is_directory else relative)


def _prefixed(line: str, prefix: str) -> str | None:
    """pi's ``prefixIgnorePattern``: the line as a pattern relative to the scan's root."""
    stripped = line.strip()
    if not stripped or (stripped.startswith("#") and not stripped.startswith("\\#")):
        return None
    pattern, negated = line, False
    if pattern.startswith("!"):
        negated, pattern = True, pattern[1:]
    elif pattern.startswith("\\!"):
        pattern = pattern[1:]
    pattern = pattern.removeprefix("/")
    prefixed = prefix + pattern
    return "!" + prefixed if negated else prefixed
