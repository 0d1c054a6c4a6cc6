"""The system prompt of a turn: what the agent is, its tools, and the project's own instructions.

The wording is pi-lsp's own; the layout is pi 0.84.2's: the base prompt (or the project's or
agent directory's ``SYSTEM.md`` instead), ``APPEND_SYSTEM.md``, the project context (the global
``<agentDir>/AGENTS.md`` first, then each directory's AGENTS.md or CLAUDE.md from the filesystem
root down to the workspace, each under a heading with its path), the skills index when the
``read`` tool is available, then the date and the working directory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from pi_lsp.resources.skills import format_skills_for_prompt
from pi_lsp.resources.snapshot import ResourceSnapshot

BASE_PROMPT = """\
You are a coding agent working inside the user's editor, in the project shown below.
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


def build_system_prompt(
    workspace: Path, tool_specs: Sequence[dict[str, Any]], snapshot: ResourceSnapshot
) -> str:
    """Base prompt (or SYSTEM.md), APPEND_SYSTEM.md, project context, skills, date and directory."""
    tools = (
        "\n".join(f"- {spec['name']}: {spec['description'].splitlines()[0]}" for spec in tool_specs)
        or "(none)"
    )
    parts = [
        snapshot.system_prompt.content.strip()
        if snapshot.system_prompt
        else BASE_PROMPT.format(tools=tools)
    ]
    if snapshot.append_system_prompt:
        parts.append(snapshot.append_system_prompt.content.strip())
    if snapshot.context_files:
        sections = [f"## {item.path}\n\n{item.content.strip()}" for item in snapshot.context_files]
        parts.append(
            "# Project Context\n\nProject-specific instructions and guidelines:\n\n"
            + "\n\n".join(sections)
        )
    if any(spec["name"] == "read" for spec in tool_specs):
        skills = format_skills_for_prompt(snapshot.skills)
        if skills:
            parts.append(skills)
    parts.append(f"Current date: {date.today().isoformat()}")
    parts.append(f"Current working directory: {workspace.as_posix()}")
    return "\n\n".join(parts)
