"""Walking a folder the way ``rg``/``fd`` do for ``find`` and the pure-Python ``grep``: glob filters
(wcmatch) and the ``.gitignore`` files of the folders walked and of those above, up to the
repository's top (pathspec, git's own rules: the deepest file that matches a path decides)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pathspec
from wcmatch import glob

ALWAYS_SKIPPED_DIRS = frozenset({".git", "node_modules"})
GLOB_FLAGS = glob.GLOBSTAR | glob.BRACE | glob.DOTMATCH


class GlobMatcher:
    """Matches relative paths the way ripgrep's ``--glob`` and fd's ``--glob`` do: a pattern
    without ``/`` matches the file name at any depth, one with ``/`` the whole relative path;
    ``!pattern`` is a negated filter (``negated``), matched like ``pattern``."""

    def __init__(self, pattern: str, ignore_case: bool = False) -> None:
        self.pattern = pattern
        self.negated = pattern.startswith("!")
        body = pattern[1:] if self.negated else pattern
        self.by_name = "/" not in body.rstrip("/")
        self._glob = body.rstrip("/") if self.by_name else body.lstrip("/")
        self._flags = GLOB_FLAGS | (glob.IGNORECASE if ignore_case else 0)

    def matches(self, relative: str) -> bool:
        target = relative.rsplit("/", 1)[-1] if self.by_name else relative
        return glob.globmatch(target, self._glob, flags=self._flags)


class GitIgnore:
    """The ``.gitignore`` files that apply below ``root``: those of the folders above it, up to
    the repository's top, and those of the folders walked (``load`` them on the way down)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, pathspec.GitIgnoreSpec] = {}
        """Each walked folder's rules, by its path relative to the root ("" for the root)."""
        self._outer: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        """The folders above the root, outermost first, with the root's path relative to each."""
        top = _repository_top(root)
        if top is None or top == root:
            return
        prefix = root.name
        for folder in root.parents:
            spec = _read_spec(folder)
            if spec is not None:
                self._outer.insert(0, (prefix, spec))
            if folder == top:
                break
            prefix = f"{folder.name}/{prefix}"

    def load(self, folder_rel: str, folder: Path) -> None:
        spec = _read_spec(folder)
        if spec is not None:
            self._specs[folder_rel] = spec

    def ignored(self, relative: str, is_dir: bool) -> bool:
        """Whether ``relative`` (to the root) is ignored by the ``.gitignore`` files loaded."""
        suffix = "/" if is_dir else ""
        verdict = False
        for prefix, spec in self._outer:
            verdict = _decide(spec, f"{prefix}/{relative}{suffix}", verdict)
        parts = relative.split("/")
        for depth in range(len(parts)):
            folder_spec = self._specs.get("/".join(parts[:depth]))
            if folder_spec is not None:
                verdict = _decide(folder_spec, "/".join(parts[depth:]) + suffix, verdict)
        return verdict


def _decide(spec: pathspec.GitIgnoreSpec, path: str, verdict: bool) -> bool:
    include = spec.check_file(path).include
    return verdict if include is None else include


def _read_spec(folder: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
    return spec if len(spec) else None


def _repository_top(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds a ``.git`` entry."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def walk(
    root: Path,
    *,
    include_dirs: bool,
    skip_dirs: frozenset[str] = ALWAYS_SKIPPED_DIRS,
    use_gitignore: bool = True,
    stop: object = None,
) -> Iterator[tuple[str, Path, bool]]:
    """Walk ``root`` in sorted order (by path component), yielding ``(relative, path, is_dir)``.

    Skips ``.git`` and ``node_modules`` and what ``.gitignore`` files ignore; hidden files are
    included. Symbolic links are listed but not followed. ``stop`` may be a
    :class:`threading.Event` checked once per folder.
    """
    ignore = GitIgnore(root) if use_gitignore else None

    def visit(folder: Path, folder_rel: str) -> Iterator[tuple[str, Path, bool]]:
        if stop is not None and stop.is_set():  # type: ignore[attr-defined]
            return
        if ignore is not None:
            ignore.load(folder_rel, folder)
        try:
            with os.scandir(folder) as entries:
                items = sorted(entries, key=lambda e: e.name)
        except OSError:
            return
        for entry in items:
            relative = f"{folder_rel}/{entry.name}" if folder_rel else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir and entry.name in skip_dirs:
                continue
            if ignore is not None and ignore.ignored(relative, is_dir):
                continue
            if is_dir:
                if include_dirs:
                    yield relative, Path(entry.path), True
                yield from visit(Path(entry.path), relative)
            else:
                yield relative, Path(entry.path), False

    yield from visit(root, "")
