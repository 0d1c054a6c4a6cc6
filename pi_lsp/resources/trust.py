"""What an untrusted workspace does not load, and the diagnostic that says so.

Project settings, skills, templates, extensions and SYSTEM.md can run or steer the agent, so they
load only for trusted workspaces (pi 0.84.2's project trust); context files still load. The user
should see what was left out rather than wonder why a skill is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pi_lsp.resources.diagnostics import ResourceDiagnostic, warning

PROJECT_RESOURCE_PATHS = (
    ".pi/settings.json",
    ".pi/skills",
    ".pi/prompts",
    ".pi/SYSTEM.md",
    ".pi/APPEND_SYSTEM.md",
    ".pi/extensions",
)


def untrusted_workspace_diagnostic(
    workspace: Path, agents_skill_dirs: Sequence[Path] = ()
) -> ResourceDiagnostic | None:
    """One warning listing the project resources that
    exist but were skipped; None if there are none."""
    skipped = [relative for relative in PROJECT_RESOURCE_PATHS if (workspace / relative).exists()]
    skipped += [str(directory) for directory in agents_skill_dirs if directory.is_dir()]
    if not skipped:
        return None
    anchor = workspace / ".pi"
    message = (
        "The workspace is not trusted, so these project resources were not loaded: "
        + ", ".join(skipped)
    )
    return warning(str(anchor), 1, message)
