"""Project instructions and system-prompt files, found where pi 0.84.2 looks for them.

Context files: ``<agentDir>``'s first, then one per directory from the filesystem root down to the
workspace (never below it); in each directory the first existing candidate of
``CONTEXT_FILE_CANDIDATES`` wins. In a linked git worktree nested inside its main checkout, the
main checkout's file that the worktree's own file shadows is left out (``git_worktree.py``).
They need no trust: they only describe the project.

``SYSTEM.md`` (replaces the base prompt) and ``APPEND_SYSTEM.md`` (extends it) come from the
project's ``.pi/`` when the workspace is trusted, else from ``<agentDir>``.

``prompt_file_signature.py`` tells when one of these files changed since a snapshot read it, so a
snapshot taken while an editor was half-way through saving one (truncated, then written) can tell
it is stale without waiting for the file watcher.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from pi_lsp.resources.diagnostics import ResourceDiagnostic, warning
from pi_lsp.resources.git_worktree import shadowed_main_checkout

CONTEXT_FILE_CANDIDATES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
PROJECT_CONFIG_DIR = ".pi"
SYSTEM_PROMPT_FILE = "SYSTEM.md"
APPEND_SYSTEM_PROMPT_FILE = "APPEND_SYSTEM.md"


@attrs.frozen
class ContextFile:
    """A file whose text goes into the system prompt: a
    context file, SYSTEM.md or APPEND_SYSTEM.md."""

    path: str
    content: str = attrs.field(repr=False)


def load_context_files(
    workspace: Path, agent_dir: Path
) -> tuple[tuple[ContextFile, ...], tuple[ResourceDiagnostic, ...]]:
    """The global context file, then those of the workspace's ancestors from the root down."""
    found: list[ContextFile] = []
    diagnostics: list[ResourceDiagnostic] = []
    seen: set[str] = set()
    shadowed = _shadowed_context_file(workspace)
    for directory in [agent_dir, *reversed([workspace, *workspace.parents])]:
        context_file = _context_file_in(directory, diagnostics)
        if (
            context_file is not None
            and directory != agent_dir
            and shadowed is not None
            and Path(os.path.realpath(context_file.path)) == shadowed
        ):
            continue
        # The agent dir may itself lie on the walk; pi keeps the first occurrence.
        if context_file is not None and context_file.path not in seen:
            seen.add(context_file.path)
            found.append(context_file)
    return tuple(found), tuple(diagnostics)


def _shadowed_context_file(workspace: Path) -> Path | None:
    """The main checkout's context file a nested worktree's own one shadows (same file name)."""
    roots = shadowed_main_checkout(workspace)
    if roots is None:
        return None
    worktree, main = roots
    own = _context_file_in(worktree, [])
    return main / Path(own.path).name if own is not None else None


def _context_file_in(directory: Path, diagnostics: list[ResourceDiagnostic]) -> ContextFile | None:
    for name in CONTEXT_FILE_CANDIDATES:
        candidate = directory / name
        if not candidate.is_file():
            continue
        content = read_text(candidate, diagnostics)
        if content is not None:
            return ContextFile(str(candidate), content)
    return None


def find_system_prompt(
    workspace: Path, agent_dir: Path, *, trusted: bool
) -> tuple[ContextFile | None, tuple[ResourceDiagnostic, ...]]:
    """``SYSTEM.md``, which replaces the base prompt."""
    return _first_prompt_file(SYSTEM_PROMPT_FILE, workspace, agent_dir, trusted=trusted)


def find_append_system_prompt(
    workspace: Path, agent_dir: Path, *, trusted: bool
) -> tuple[ContextFile | None, tuple[ResourceDiagnostic, ...]]:
    """``APPEND_SYSTEM.md``, which is added after the base prompt."""
    return _first_prompt_file(APPEND_SYSTEM_PROMPT_FILE, workspace, agent_dir, trusted=trusted)


def _first_prompt_file(
    name: str, workspace: Path, agent_dir: Path, *, trusted: bool
) -> tuple[ContextFile | None, tuple[ResourceDiagnostic, ...]]:
    diagnostics: list[ResourceDiagnostic] = []
    candidates = [workspace / PROJECT_CONFIG_DIR / name] if trusted else []
    candidates.append(agent_dir / name)
    for candidate in candidates:
        if candidate.exists():
            content = read_text(candidate, diagnostics)
            return (ContextFile(str(candidate), content) if content is not None else None), tuple(
                diagnostics
            )
    return None, ()


def read_text(path: Path, diagnostics: list[ResourceDiagnostic]) -> str | None:
    """The file's UTF-8 text without a byte-order mark, or None with a diagnostic saying why."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as problem:
        diagnostics.append(warning(str(path), 1, f"cannot read {path.name}: {problem}"))
        return None
