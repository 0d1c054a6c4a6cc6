"""The system prompt of a turn: what the agent is, its tools, and the project's own instructions.

The wording is pi-lsp's own. The project context follows pi's layout: the global
``<agentDir>/AGENTS.md`` first, then the AGENTS.md (or CLAUDE.md) of each directory from the
filesystem root down to the workspace, each under a heading with its path. The full resource
loader (skills, templates, watching) builds on this.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

CONTEXT_FILE_NAMES = ("AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")

BASE_PROMPT = """You are a coding agent working inside the user's editor, in the project shown below.
You help by reading code, running commands, and making careful, minimal changes with your tools.

Tools you can call:
{tools}

How to work:
- Read a file before you change it; edits replace exact text, so copy it precisely.
- Prefer small, reviewable edits over rewriting whole files.
- Run the project's tests or checks after a change when they exist.
- Refer to files by their paths relative to the project.
- Keep answers short and concrete; say what you changed and why."""


def agent_dir(environ: dict[str, str] | os._Environ = os.environ) -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    configured = environ.get("PI_CODING_AGENT_DIR")
    return Path(os.path.expanduser(configured)) if configured else Path.home() / ".pi" / "agent"


def context_files(workspace: Path, global_dir: Path) -> list[tuple[Path, str]]:
    """(path, text) of each project instruction file, global first, then root → workspace."""
    found: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    directories = [global_dir, *reversed([workspace, *workspace.parents])]
    for directory in directories:
        for name in CONTEXT_FILE_NAMES:
            candidate = directory / name
            if candidate.is_file():
                resolved = candidate.resolve()
                if resolved not in seen:
                    seen.add(resolved)
                    found.append((candidate, _read(candidate)))
                break
    return found


def build_system_prompt(workspace: Path, tool_specs: Sequence[dict[str, Any]], global_dir: Path | None = None) -> str:
    tools = "\n".join(f"- {spec['name']}: {spec['description'].splitlines()[0]}" for spec in tool_specs) or "(none)"
    parts = [BASE_PROMPT.format(tools=tools)]
    files = context_files(workspace, global_dir or agent_dir())
    if files:
        sections = [f"## {path}\n\n{text.strip()}" for path, text in files]
        parts.append("# Project Context\n\nProject-specific instructions and guidelines:\n\n" + "\n\n".join(sections))
    parts.append(f"Current date: {date.today().isoformat()}")
    parts.append(f"Current working directory: {workspace.as_posix()}")
    return "\n\n".join(parts)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return ""
