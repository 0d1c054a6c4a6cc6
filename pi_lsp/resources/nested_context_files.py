"""Context files below the workspace root, found when the agent works there.

pi loads AGENTS.md (or CLAUDE.md) only from the workspace and its ancestors. A monorepo's
``packages/api/AGENTS.md`` holds rules for that package alone; pi-lsp hands it to the model when a
tool touches something below ``packages/api/`` (see ``agent/nested_context.py``). Here is what
that needs and does not depend on a session: which directories between the workspace root
(exclusive) and a touched path hold a context file, which file wins in each (the same candidates,
in the same order, as for the root: ``AGENTS.override.md``, ``AGENTS.md``, …, ``CLAUDE.md``), its
text and fingerprint, and the message text that carries it.

The trust rule is the root's: context files describe the project and load in untrusted
workspaces too. Directories of third-party code (``node_modules``, ``.git``, virtual
environments) are never searched: a dependency's AGENTS.md speaks for the dependency, not for
this project.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import attrs

from pi_lsp.resources.context_files import CONTEXT_FILE_CANDIDATES, read_text

NESTED_CONTEXT_FILE_TYPE = "pi-lsp.context-file"
"""``customType`` of the ``custom_message`` entries that bring a nested context file's text."""

THIRD_PARTY_DIRECTORIES = frozenset(
    {".git", "node_modules", "site-packages", "__pypackages__", ".venv", "venv"}
)
"""Directory names below which no context file is loaded."""


@attrs.frozen
class NestedContextFile:
    """A context file below the workspace root, as read now."""

    path: str
    """Relative to the workspace, with ``/`` (``packages/api/AGENTS.md``)."""
    directory: str
    """The directory whose work it governs, relative to the workspace (``packages/api``)."""
    content: str = attrs.field(repr=False)
    fingerprint: str
    """The SHA-256 of ``content``, stored with the injection to notice when the file changes."""


def directories_below_root(path: Path, workspace: Path) -> list[Path]:
    """The directories from the workspace root (exclusive) down to ``path``'s directory, or to
    ``path`` itself when it is a directory; outermost first. Empty for a path outside the
    workspace or inside third-party code."""
    try:
        relative = path.relative_to(workspace)
    except ValueError:
        return []
    parts = relative.parts if path.is_dir() else relative.parts[:-1]
    if THIRD_PARTY_DIRECTORIES.intersection(parts) or ".." in parts:
        return []
    return [workspace.joinpath(*parts[: depth + 1]) for depth in range(len(parts))]


def context_file_path_in(directory: Path) -> Path | None:
    """The context file that governs ``directory``: the first existing candidate."""
    for name in CONTEXT_FILE_CANDIDATES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


def read_nested_context_file(path: Path, workspace: Path) -> NestedContextFile | None:
    """The file's text and fingerprint; None when it cannot be read (or is not below the root)."""
    content = read_text(path, [])
    if content is None:
        return None
    try:
        relative = path.relative_to(workspace)
    except ValueError:
        return None
    return NestedContextFile(
        path=relative.as_posix(),
        directory=relative.parent.as_posix(),
        content=content,
        fingerprint=fingerprint(content),
    )


def fingerprint(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def injection_text(context_file: NestedContextFile, *, replaces_earlier: bool) -> str:
    """The message that brings the file's text to the model; its first line names the file (it is
    what the session tree shows)."""
    if replaces_earlier:
        heading = (
            f"Updated instructions for files under {context_file.directory}/ "
            f"({context_file.path} changed; they replace the earlier version):"
        )
    else:
        heading = (
            f"Instructions for files under {context_file.directory}/, from {context_file.path}:"
        )
    return f"{heading}\n\n{context_file.content.strip()}"
