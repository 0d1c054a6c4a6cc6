"""The system prompt of a turn: what the agent is, its tools, and the project's own instructions.

The wording is pi-lsp's own; the layout is pi 0.84.2's: the base prompt (or the project's or
agent directory's ``SYSTEM.md`` instead), ``APPEND_SYSTEM.md``, the project context (the global
``<agentDir>/AGENTS.md`` first, then each directory's AGENTS.md or CLAUDE.md from the filesystem
root down to the workspace, each under a heading with its path), the skills index when the
``read`` tool is available, then the working directory.

Nothing in it changes by itself: the prompt opens every request's cached prefix, so a part that
changed daily (pi-lsp used to add the date, pi 0.84.2 no longer does) would make the first
request of each day re-write the whole conversation to the provider's cache.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

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


@attrs.frozen
class PromptSection:
    """One part of the system prompt: ``kind`` says what it is, ``path`` the file it comes from."""

    kind: Literal["base", "systemFile", "appendSystem", "contextFile", "skills", "environment"]
    label: str
    text: str
    path: str | None = None


def build_system_prompt(
    workspace: Path, tool_specs: Sequence[dict[str, Any]], snapshot: ResourceSnapshot
) -> str:
    """Base prompt (or SYSTEM.md), APPEND_SYSTEM.md, project context, skills and directory."""
    return "\n\n".join(
        section.text for section in system_prompt_sections(workspace, tool_specs, snapshot)
    )


def system_prompt_sections(
    workspace: Path, tool_specs: Sequence[dict[str, Any]], snapshot: ResourceSnapshot
) -> list[PromptSection]:
    """The sections ``build_system_prompt`` joins, each context file one of its own."""
    tools = (
        "\n".join(f"- {spec['name']}: {spec['description'].splitlines()[0]}" for spec in tool_specs)
        or "(none)"
    )
    if snapshot.system_prompt:
        sections = [
            PromptSection(
                "systemFile",
                "SYSTEM.md",
                snapshot.system_prompt.content.strip(),
                str(snapshot.system_prompt.path),
            )
        ]
    else:
        sections = [PromptSection("base", "Base prompt", BASE_PROMPT.format(tools=tools))]
    if snapshot.append_system_prompt:
        append = snapshot.append_system_prompt
        sections.append(
            PromptSection(
                "appendSystem", "APPEND_SYSTEM.md", append.content.strip(), str(append.path)
            )
        )
    if snapshot.context_files:
        sections.append(
            PromptSection(
                "base",
                "Project context heading",
                "# Project Context\n\nProject-specific instructions and guidelines:",
            )
        )
        sections.extend(
            PromptSection(
                "contextFile",
                str(item.path),
                f"## {item.path}\n\n{item.content.strip()}",
                str(item.path),
            )
            for item in snapshot.context_files
        )
    if any(spec["name"] == "read" for spec in tool_specs):
        skills = format_skills_for_prompt(snapshot.skills)
        if skills:
            sections.append(PromptSection("skills", "Skills index", skills))
    sections.append(
        PromptSection(
            "environment", "Working directory", f"Current working directory: {workspace.as_posix()}"
        )
    )
    return sections
