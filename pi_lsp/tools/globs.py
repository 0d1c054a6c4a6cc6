"""Glob patterns (``*``, ``?``, ``[...]``, ``{a,b}``, ``**``) and a loose ``.gitignore`` reader,
shared by ``find`` and the pure-Python ``grep``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

ALWAYS_SKIPPED_DIRS = frozenset({".git", "node_modules"})


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    n = len(pattern)
    depth = 0  # inside {...}
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                before_ok = i == 0 or pattern[i - 1] == "/"
                after = i + 2
                if before_ok and after < n and pattern[after] == "/":
                    out.append("(?:.*/)?")  # "**/": any number of folders, even none
                    i = after + 1
                    continue
                if before_ok and after == n:
                    out.append(".*")  # trailing "**": everything below
                    i = after
                    continue
                out.append("[^/]*")
                i = after
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = i + 1
            if end < n and pattern[end] in "!^":
                end += 1
            if end < n and pattern[end] == "]":
                end += 1
            while end < n and pattern[end] != "]":
                end += 1
            if end >= n:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    out.extend(")" * depth)
    return "".join(out)


@lru_cache(maxsize=256)
def compile_glob(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    """A regex matching whole ``/``-separated paths against ``pattern``."""
    return re.compile(_translate(pattern) + r"\Z", re.IGNORECASE if ignore_case else 0)


class GlobMatcher:
    """Matches relative paths the way ripgrep's ``--glob`` and fd's ``--glob`` do: a pattern
    without ``/`` matches the file name at any depth, one with ``/`` the whole relative path."""

    def __init__(self, pattern: str, ignore_case: bool = False) -> None:
        self.pattern = pattern
        self.negated = pattern.startswith("!")
        body = pattern[1:] if self.negated else pattern
        self.by_name = "/" not in body.rstrip("/")
        body = body.lstrip("/") if not self.by_name else body.rstrip("/")
        self._regex = compile_glob(body, ignore_case)

    def matches(self, relative: str) -> bool:
        target = relative.rsplit("/", 1)[-1] if self.by_name else relative
        return self._regex.match(target) is not None


class GitIgnore:
    """A loose reading of ``.gitignore`` files: the one in each folder applies below it; ``!``
    re-includes; a trailing ``/`` limits a pattern to folders; a leading or inner ``/`` anchors it
    to the folder of the ``.gitignore``. Enough for skipping build output and caches."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # rules per folder below the root (relative, "" for the root itself)
        self._rules: dict[str, list[_Rule]] = {}
        # rules of the folders above the root, up to the repository's top, outermost first, with
        # the root's path relative to each of them
        self._outer: list[tuple[str, list[_Rule]]] = []
        top = _repository_top(root)
        if top is not None and top != root:
            folder = root.parent
            prefix_parts = [root.name]
            while True:
                rules = _read_rules(folder)
                if rules:
                    self._outer.insert(0, ("/".join(prefix_parts), rules))
                if folder == top or folder.parent == folder:
                    break
                prefix_parts.insert(0, folder.name)
                folder = folder.parent

    def load(self, folder_rel: str, folder: Path) -> None:
        self._rules[folder_rel] = _read_rules(folder)

    def ignored(self, relative: str, is_dir: bool) -> bool:
        """Whether ``relative`` (to the search root) is
        ignored by the loaded ``.gitignore`` files."""
        verdict = False
        parts = relative.split("/")
        name = parts[-1]
        for prefix, rules in self._outer:
            verdict = _apply_rules(rules, f"{prefix}/{relative}", name, is_dir, verdict)
        for depth in range(len(parts)):
            nested_rules = self._rules.get("/".join(parts[:depth]))
            if nested_rules:
                verdict = _apply_rules(nested_rules, "/".join(parts[depth:]), name, is_dir, verdict)
        return verdict


_Rule = tuple[re.Pattern[str], bool, bool, bool]  # (regex, negated, dir_only, anchored)


def _apply_rules(rules: list[_Rule], rest: str, name: str, is_dir: bool, verdict: bool) -> bool:
    for regex, negated, dir_only, anchored in rules:
        if dir_only and not is_dir:
            continue
        if regex.match(rest if anchored else name):
            verdict = not negated
    return verdict


def _read_rules(folder: Path) -> list[_Rule]:
    try:
        text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    rules: list[_Rule] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        line = line.removeprefix("\\")
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        rules.append((compile_glob(line.lstrip("/")), negated, dir_only, anchored))
    return rules


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
