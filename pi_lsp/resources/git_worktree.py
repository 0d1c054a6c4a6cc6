"""Git metadata for context-file discovery: a linked worktree nested inside its main repository.

``git worktree add feature`` inside a repository gives a directory whose ancestors include the
main checkout. Its own AGENTS.md and the main checkout's describe the same repository, so pi
0.84.2 (``findShadowedContextFile`` in ``core/resource-loader.ts``) skips the main checkout's
file that the worktree's own copy shadows. Ordinary repositories, sibling worktrees, bare layouts
and submodules shadow nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs


@attrs.frozen
class GitPaths:
    repository: Path
    """The working tree holding ``.git`` (a directory, or a file in a linked worktree)."""
    common_git_dir: Path
    """The git directory shared by every worktree of the repository."""


def find_git_paths(start: Path) -> GitPaths | None:
    """pi's ``findGitPaths``: the nearest ``.git`` at or above ``start``."""
    for directory in (start, *start.parents):
        marker = directory / ".git"
        if marker.is_dir():
            return GitPaths(directory, marker) if (marker / "HEAD").exists() else None
        if marker.is_file():
            return _linked_worktree(directory, marker)
    return None


def _linked_worktree(directory: Path, marker: Path) -> GitPaths | None:
    try:
        content = marker.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not content.startswith("gitdir: "):
        return None
    git_dir = Path(os.path.normpath(directory / content[len("gitdir: ") :].strip()))
    if not (git_dir / "HEAD").exists():
        return None
    common = git_dir / "commondir"
    if common.exists():
        try:
            git_dir_common = Path(
                os.path.normpath(git_dir / common.read_text(encoding="utf-8").strip())
            )
        except (OSError, UnicodeDecodeError):
            return None
        return GitPaths(directory, git_dir_common)
    return GitPaths(directory, git_dir)


def shadowed_main_checkout(workspace: Path) -> tuple[Path, Path] | None:
    """(worktree root, main checkout root), real paths,
    when the workspace is a nested linked worktree."""
    paths = find_git_paths(workspace)
    if paths is None:
        return None
    common = Path(os.path.realpath(paths.common_git_dir))
    worktree = Path(os.path.realpath(paths.repository))
    main = common.parent
    if not worktree.is_relative_to(main) or worktree == main:
        return None  # an ordinary repository, or a sibling worktree
    if Path(os.path.realpath(main / ".git")) != common:
        return None  # a bare layout or a submodule: the parent folder checks nothing out
    return worktree, main
