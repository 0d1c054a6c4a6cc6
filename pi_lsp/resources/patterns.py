"""Include and exclude patterns in the ``skills`` and ``prompts`` arrays of pi's settings files,
as pi 0.84.2 applies them (``applyPatterns`` and ``isEnabledByOverrides`` in
``core/package-manager.ts``).

An entry starting with ``!`` excludes what its glob matches, ``+path`` force-includes an exact
path (beating exclusions) and ``-path`` force-excludes one (beating everything); any other entry
with ``*`` or ``?`` is an include glob, which limits the files of the settings file's own paths.
Globs are matched the way minimatch does against the path relative to the settings' base folder,
the file name and the absolute path; for a ``SKILL.md`` also against its folder.
Auto-discovered folders (``.pi/skills``, ``~/.agents/skills``, …) only heed the ``!``/``+``/``-``
entries of their scope's settings file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import attrs
from wcmatch import glob

OVERRIDE_PREFIXES = ("!", "+", "-")
GLOB_FLAGS = glob.GLOBSTAR | glob.BRACE | glob.EXTGLOB


def is_pattern(entry: str) -> bool:
    """A pattern rather than a path (pi's ``isPattern``)."""
    return entry.startswith(OVERRIDE_PREFIXES) or "*" in entry or "?" in entry


@attrs.frozen
class ResourcePatterns:
    """The patterns of one settings file's array, and the folder relative paths are taken from."""

    entries: tuple[str, ...] = ()
    base: Path | None = None
    heed_includes: bool = False
    """Include globs count for the paths the same file names, not for auto-discovered folders."""

    def enables(self, path: Path) -> bool:
        if not self.entries or self.base is None:
            return True
        includes = [entry for entry in self.entries if not entry.startswith(OVERRIDE_PREFIXES)]
        enabled = True
        if self.heed_includes and includes:
            enabled = _matches_glob(path, includes, self.base)
        if enabled and _matches_glob(path, self._with_prefix("!"), self.base):
            enabled = False
        if _matches_exact(path, self._with_prefix("+"), self.base):
            enabled = True
        if _matches_exact(path, self._with_prefix("-"), self.base):
            enabled = False
        return enabled

    def _with_prefix(self, prefix: str) -> list[str]:
        return [entry[1:] for entry in self.entries if entry.startswith(prefix)]


def patterns_of(entries: Sequence[str], base: Path, *, heed_includes: bool) -> ResourcePatterns:
    return ResourcePatterns(
        tuple(entry.strip() for entry in entries if is_pattern(entry.strip())), base, heed_includes
    )


def _candidates(path: Path, base: Path, *, with_names: bool) -> list[str]:
    """What a pattern is tried against: relative path,
    (name,) absolute path; a skill's folder too."""

    def forms(target: Path) -> list[str]:
        found = [Path(os.path.relpath(target, base)).as_posix()]
        if with_names:
            found.append(target.name)
        found.append(target.as_posix())
        return found

    candidates = forms(path)
    if path.name == "SKILL.md":
        candidates += forms(path.parent)
    return candidates


def _matches_glob(path: Path, patterns: Sequence[str], base: Path) -> bool:
    if not patterns:
        return False
    candidates = _candidates(path, base, with_names=True)
    return any(
        glob.globmatch(candidate, Path(pattern).as_posix(), flags=GLOB_FLAGS)
        for pattern in patterns
        for candidate in candidates
    )


def _matches_exact(path: Path, patterns: Sequence[str], base: Path) -> bool:
    if not patterns:
        return False
    candidates = set(_candidates(path, base, with_names=False))
    return any(pattern.removeprefix("./") in candidates for pattern in patterns)
