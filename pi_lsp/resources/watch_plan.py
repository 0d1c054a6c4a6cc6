"""Which folders the resource watcher watches, and how: only the places resources live.

Session files live in ``.pi/sessions`` (pi's own in ``<agentDir>/sessions``): a watch that recursed
into ``.pi`` or the agent directory woke at every session append, only to drop the change. So only
the folders that hold resources at any depth are watched recursively (``skills``, ``prompts`` and
``extensions`` of ``.pi`` and of the agent directory, ``.agents/skills``, and the folders the
settings name), and the folders that hold resource files directly are watched for their own
entries only: the agent directory (settings, ``models.json``, ``auth.json``, ``mcp.json``,
AGENTS.md, ``SYSTEM.md``…), ``.pi`` (settings, ``mcp.json``, ``SYSTEM.md``,
``APPEND_SYSTEM.md``), the workspace and its ancestors (their AGENTS.md and CLAUDE.md),
``.agents``, and the folders of files the settings name.
A session append changes nothing in any of them, so it wakes no watch.

A resource folder that does not exist yet is seen appearing by the watch of its parent (``.pi``
for ``.pi/skills``, the workspace for ``.pi``): every wanted folder, existing or not, is a *place*,
and one appearing or going away calls for a new plan.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import attrs

from pi_lsp.resources.auth_file import AUTH_FILE
from pi_lsp.resources.context_files import (
    APPEND_SYSTEM_PROMPT_FILE,
    CONTEXT_FILE_CANDIDATES,
    PROJECT_CONFIG_DIR,
    SYSTEM_PROMPT_FILE,
)
from pi_lsp.resources.extension_files import EXTENSIONS_FOLDER
from pi_lsp.resources.mcp_config import MCP_FILE
from pi_lsp.resources.models_file import MODELS_FILE
from pi_lsp.resources.settings import SETTINGS_FILE

AGENTS_FOLDER = ".agents"
RESOURCE_FOLDERS = ("skills", "prompts", EXTENSIONS_FOLDER)
"""Subfolders of ``.pi`` and of the agent directory whose whole tree holds resources."""
AGENT_DIR_FILES = (
    SETTINGS_FILE,
    MODELS_FILE,
    AUTH_FILE,
    MCP_FILE,
    SYSTEM_PROMPT_FILE,
    APPEND_SYSTEM_PROMPT_FILE,
)
PROJECT_FILES = (SETTINGS_FILE, MCP_FILE, SYSTEM_PROMPT_FILE, APPEND_SYSTEM_PROMPT_FILE)
CONTEXT_FILE_NAMES = frozenset(name.upper() for name in CONTEXT_FILE_CANDIDATES)
"""Upper-cased: a case-insensitive file system reports the name as it was written."""


@attrs.frozen
class WatchPlan:
    recursive: tuple[Path, ...]
    """Existing folders watched with everything inside them."""
    shallow: tuple[Path, ...]
    """Existing folders watched for their own entries only."""
    files: frozenset[str]
    """The resource files of the ``shallow`` folders (context files count by name instead)."""
    places: frozenset[str]
    """Every folder the plan wants to watch, existing or not: one that appears or goes away
    changes the plan."""

    def is_shallow_resource(self, path: str) -> bool:
        """Whether a change to this entry of a ``shallow`` folder matters."""
        return (
            path in self.files
            or path in self.places
            or Path(path).name.upper() in CONTEXT_FILE_NAMES
        )


def watch_plan(
    workspace: Path, agent_dir: Path, home: Path, named_paths: Iterable[Path] = ()
) -> WatchPlan:
    """The plan for ``workspace``; ``named_paths``: the skill, template and extension paths the
    settings files name (absolute)."""
    project = workspace / PROJECT_CONFIG_DIR
    walk = [workspace, *workspace.parents]
    agents_folders = list(dict.fromkeys(folder / AGENTS_FOLDER for folder in [*walk, home]))
    deep = [agent_dir / name for name in RESOURCE_FOLDERS]
    deep += [project / name for name in RESOURCE_FOLDERS]
    deep += [folder / "skills" for folder in agents_folders]
    own_entries = [agent_dir, project, *walk, *agents_folders]
    files = {str(agent_dir / name) for name in AGENT_DIR_FILES}
    files |= {str(project / name) for name in PROJECT_FILES}
    for named in named_paths:
        if named.is_dir():
            deep.append(named)
        else:  # a file, or not there yet: its folder shows it being written or created
            files.add(str(named))
            own_entries.append(named.parent)
    wanted = [*deep, *own_entries]
    # A missing place is seen appearing from its parent's watch.
    own_entries += [place.parent for place in wanted if not place.is_dir()]
    recursive = _outermost([place for place in dict.fromkeys(deep) if place.is_dir()])
    shallow = [
        folder
        for folder in dict.fromkeys(own_entries)
        if folder.is_dir() and not _inside_any(folder, recursive)
    ]
    return WatchPlan(
        tuple(recursive),
        tuple(shallow),
        frozenset(files),
        frozenset(str(place) for place in wanted),
    )


def _outermost(folders: list[Path]) -> list[Path]:
    """The folders not inside another of them (its recursive watch covers them)."""
    return [
        folder
        for folder in folders
        if not any(folder != other and folder.is_relative_to(other) for other in folders)
    ]


def _inside_any(folder: Path, roots: list[Path]) -> bool:
    return any(folder.is_relative_to(root) for root in roots)
