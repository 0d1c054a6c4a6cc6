"""One consistent view of every resource, loaded from pi 0.84.2's locations, and the difference
between two such views (what a later ``pi/resourcesChanged`` reports).

Skill locations, in precedence order (the first skill of a name wins): the project settings'
``skills`` paths, ``<workspace>/.pi/skills``, ``.agents/skills`` in the workspace and each ancestor
up to the git root, the user settings' ``skills`` paths, ``<agentDir>/skills``,
``~/.agents/skills``. Templates likewise: project settings' ``prompts``, ``.pi/prompts``, user
settings' ``prompts``, ``<agentDir>/prompts``. Project locations are skipped when the workspace is
not trusted.

pi's ``models.json`` and ``auth.json`` come from ``<agentDir>`` only (pi never reads a project's
copy): custom providers and models, and the stored credentials ``llm/`` resolves keys from.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from pi_lsp.protocol import ResourceChange, ResourcesChanged
from pi_lsp.resources.auth_file import AUTH_FILE, AuthFile, load_auth_file
from pi_lsp.resources.context_files import (
    PROJECT_CONFIG_DIR,
    ContextFile,
    find_append_system_prompt,
    find_system_prompt,
    load_context_files,
)
from pi_lsp.resources.diagnostics import ResourceDiagnostic
from pi_lsp.resources.extension_files import (
    ExtensionFile,
    ExtensionScope,
    NamedExtensionPath,
    discover_extension_files,
)
from pi_lsp.resources.files import ParsedFileCache
from pi_lsp.resources.mcp_config import McpConfig, load_mcp_config
from pi_lsp.resources.models_file import MODELS_FILE, ModelsFile, load_models_file
from pi_lsp.resources.patterns import ResourcePatterns, is_pattern, patterns_of
from pi_lsp.resources.prompt_file_signature import (
    PromptFilesSignature,
    prompt_file_folders,
    prompt_files_signature,
)
from pi_lsp.resources.settings import SettingsFile, SettingsLoad, key_line, load_settings
from pi_lsp.resources.skills import Scope, Skill, SkillLocation, load_skills
from pi_lsp.resources.templates import PromptTemplate, TemplateLocation, load_templates
from pi_lsp.resources.trust import untrusted_workspace_diagnostic

# Settings entries with these prefixes are packages or include/exclude patterns, resolved elsewhere.
NON_PATH_PREFIXES = ("!", "+", "-", "npm:", "git:", "github:", "http:", "https:", "ssh:")


@attrs.frozen
class ResourceSnapshot:
    context_files: tuple[ContextFile, ...]
    system_prompt: ContextFile | None
    """``SYSTEM.md``: replaces the base prompt."""
    append_system_prompt: ContextFile | None
    """``APPEND_SYSTEM.md``: extends the base prompt."""
    skills: tuple[Skill, ...]
    templates: tuple[PromptTemplate, ...]
    settings: SettingsLoad
    diagnostics: tuple[ResourceDiagnostic, ...]
    named_paths: tuple[str, ...] = ()
    """The skill, template and extension paths the settings files name (watched like the usual
    folders)."""
    models: ModelsFile | None = None
    """``<agentDir>/models.json``: pi's custom providers and models."""
    auth: AuthFile | None = None
    """``<agentDir>/auth.json``: pi's stored credentials (secrets: never shown)."""
    extension_files: tuple[ExtensionFile, ...] = ()
    """Python extensions to load, in load order (``pi_lsp/extensions`` imports them)."""
    prompt_files_signature: PromptFilesSignature = ()
    """The context and system-prompt files as they were when this snapshot started reading them
    (``prompt_file_signature.check_prompt_files`` compares it with the files now)."""
    mcp: McpConfig = attrs.Factory(McpConfig)
    """pi 1.6's ``mcp.json`` servers (the project's only in a trusted workspace)."""


def load_resources(
    workspace: Path,
    agent_dir: Path,
    *,
    trusted: bool,
    previous: ResourceSnapshot | None = None,
    home: Path | None = None,
    cache: ParsedFileCache | None = None,
) -> ResourceSnapshot:
    """Everything pi would load for ``workspace``; a broken settings file keeps ``previous``'s
    content.

    With a ``cache`` (kept from one reload to the next), only skill and template files that changed
    are read and parsed again; every folder is still listed, so additions and deletions show.
    """
    workspace, agent_dir = Path(os.path.abspath(workspace)), Path(os.path.abspath(agent_dir))
    home = Path(os.path.abspath(home or Path.home()))
    # Taken before the files are read: a write landing during the load shows as a change later.
    signature = prompt_files_signature(prompt_file_folders(workspace, agent_dir))
    settings = load_settings(
        workspace, agent_dir, trusted=trusted, previous=previous.settings if previous else None
    )
    model_problems: list[ResourceDiagnostic] = []
    models = load_models_file(
        agent_dir / MODELS_FILE, previous.models if previous else None, model_problems
    )
    auth = load_auth_file(
        agent_dir / AUTH_FILE, previous.auth if previous else None, model_problems
    )
    mcp = load_mcp_config(workspace, agent_dir, trusted=trusted)
    context_files, context_problems = load_context_files(workspace, agent_dir)
    system_prompt, system_problems = find_system_prompt(workspace, agent_dir, trusted=trusted)
    append_prompt, append_problems = find_append_system_prompt(
        workspace, agent_dir, trusted=trusted
    )
    agents_dirs = agents_skill_dirs(workspace, home)
    skill_places = skill_locations(
        workspace, agent_dir, home, settings, trusted=trusted, agents_dirs=agents_dirs
    )
    template_places = template_locations(workspace, agent_dir, settings, trusted=trusted)
    skills = load_skills(skill_places, cache)
    templates = load_templates(template_places, cache)
    places: list[SkillLocation | TemplateLocation] = [*skill_places, *template_places]
    named_extensions = extension_paths(workspace, agent_dir, settings)
    extension_files, extension_problems = discover_extension_files(
        workspace, agent_dir, named_extensions, trusted=trusted
    )
    named_paths = tuple(
        dict.fromkeys(
            [
                *(str(place.path) for place in places if place.explicit),
                *(
                    str(place.path)
                    for place in named_extensions
                    if trusted or place.scope == "user"
                ),
            ]
        )
    )
    if cache is not None:
        cache.sweep()
    trust_problem = None if trusted else untrusted_workspace_diagnostic(workspace, agents_dirs)
    diagnostics = (
        *settings.diagnostics,
        *model_problems,
        *context_problems,
        *system_problems,
        *append_problems,
        *skills.diagnostics,
        *templates.diagnostics,
        *extension_problems,
        *mcp.diagnostics,
        *([trust_problem] if trust_problem else []),
    )
    return ResourceSnapshot(
        context_files,
        system_prompt,
        append_prompt,
        skills.skills,
        templates.templates,
        settings,
        diagnostics,
        named_paths,
        models,
        auth,
        extension_files,
        signature,
        mcp,
    )


def extension_paths(
    workspace: Path, agent_dir: Path, settings: SettingsLoad
) -> list[NamedExtensionPath]:
    """The local paths the settings files list under ``extensions`` (project paths are relative
    to ``.pi/``, user paths to the agent directory)."""
    scopes: tuple[tuple[SettingsFile | None, Path, ExtensionScope], ...] = (
        (settings.project_file, workspace / PROJECT_CONFIG_DIR, "project"),
        (settings.global_file, agent_dir, "user"),
    )
    return [
        NamedExtensionPath(path, scope, file.path, line)
        for file, base, scope in scopes
        if file is not None
        for _entry, path, line in _settings_paths(file, "extensions", base)
    ]


def git_root(start: Path) -> Path | None:
    for directory in [start, *start.parents]:
        if (directory / ".git").exists():
            return directory
    return None


def agents_skill_dirs(workspace: Path, home: Path) -> list[Path]:
    """``.agents/skills`` of the workspace and its ancestors
    up to the git root (or the filesystem root)."""
    root = git_root(workspace)
    user_dir = home / ".agents" / "skills"
    directories = []
    for directory in [workspace, *workspace.parents]:
        candidate = directory / ".agents" / "skills"
        if candidate != user_dir:  # the user's own directory counts as a user location
            directories.append(candidate)
        if directory == root:
            break
    return directories


def skill_locations(
    workspace: Path,
    agent_dir: Path,
    home: Path,
    settings: SettingsLoad,
    *,
    trusted: bool,
    agents_dirs: list[Path],
) -> list[SkillLocation]:
    locations: list[SkillLocation] = []
    project, user = settings.project_file, settings.global_file
    if trusted:
        project_base = workspace / PROJECT_CONFIG_DIR
        locations += _settings_skill_paths(project, project_base, "project")
        locations.append(
            SkillLocation(
                project_base / "skills",
                "project",
                patterns=_overrides(project, "skills", project_base),
            )
        )
        locations += [
            SkillLocation(
                directory,
                "project",
                mode="agents",
                patterns=_overrides(project, "skills", directory.parent),
            )
            for directory in agents_dirs
        ]
    locations += _settings_skill_paths(user, agent_dir, "user")
    locations.append(
        SkillLocation(agent_dir / "skills", "user", patterns=_overrides(user, "skills", agent_dir))
    )
    user_agents = home / ".agents"
    locations.append(
        SkillLocation(
            user_agents / "skills",
            "user",
            mode="agents",
            patterns=_overrides(user, "skills", user_agents),
        )
    )
    return locations


def _overrides(file: SettingsFile | None, key: str, base: Path) -> ResourcePatterns:
    """The ``!``/``+``/``-`` entries of a settings array, for an auto-discovered folder."""
    return patterns_of(file.valid.get(key, []) if file else [], base, heed_includes=False)


def _own_patterns(file: SettingsFile | None, key: str, base: Path) -> ResourcePatterns:
    """Every pattern of a settings array, for the paths that same array names."""
    return patterns_of(file.valid.get(key, []) if file else [], base, heed_includes=True)


def _settings_skill_paths(
    file: SettingsFile | None, base: Path, scope: Scope
) -> Iterator[SkillLocation]:
    patterns = _own_patterns(file, "skills", base)
    for _entry, path, line in _settings_paths(file, "skills", base):
        yield SkillLocation(
            path,
            scope,
            mode="pi",
            explicit=True,
            declared_in=file.path if file else None,
            declared_line=line,
            patterns=patterns,
        )


def template_locations(
    workspace: Path, agent_dir: Path, settings: SettingsLoad, *, trusted: bool
) -> list[TemplateLocation]:
    locations: list[TemplateLocation] = []
    project, user = settings.project_file, settings.global_file
    if trusted:
        project_base = workspace / PROJECT_CONFIG_DIR
        own = _own_patterns(project, "prompts", project_base)
        locations += [
            TemplateLocation(path, "project", explicit=True, patterns=own)
            for _, path, _ in _settings_paths(project, "prompts", project_base)
        ]
        locations.append(
            TemplateLocation(
                project_base / "prompts",
                "project",
                patterns=_overrides(project, "prompts", project_base),
            )
        )
    own = _own_patterns(user, "prompts", agent_dir)
    locations += [
        TemplateLocation(path, "user", explicit=True, patterns=own)
        for _, path, _ in _settings_paths(user, "prompts", agent_dir)
    ]
    locations.append(
        TemplateLocation(
            agent_dir / "prompts", "user", patterns=_overrides(user, "prompts", agent_dir)
        )
    )
    return locations


def _settings_paths(
    file: SettingsFile | None, key: str, base: Path
) -> Iterator[tuple[str, Path, int]]:
    """(entry, resolved path, line) of each plain local path in a settings file's ``key`` array."""
    if file is None:
        return
    for raw_entry in file.valid.get(key, []):
        entry = raw_entry.strip()
        if not entry or entry.startswith(NON_PATH_PREFIXES) or is_pattern(entry):
            continue
        path = Path(os.path.expanduser(entry))
        resolved = Path(os.path.abspath(path if path.is_absolute() else base / path))
        yield entry, resolved, _entry_line(file, key, entry)


def _entry_line(file: SettingsFile, key: str, entry: str) -> int:
    key_position_line = key_line(file.text, (key,))
    lines = file.text.split("\n")
    quoted = json.dumps(entry)
    for number in range(key_position_line, len(lines) + 1):
        if quoted in lines[number - 1]:
            return number
    return key_position_line


def diff_snapshots(old: ResourceSnapshot | None, new: ResourceSnapshot) -> ResourcesChanged:
    """What was added, changed (same identity, different
    value) and removed between two snapshots."""
    before = _by_identity(old) if old is not None else {}
    after = _by_identity(new)
    return ResourcesChanged(
        added=[ref for key, (ref, _) in after.items() if key not in before],
        changed=[
            ref for key, (ref, value) in after.items() if key in before and before[key][1] != value
        ],
        removed=[ref for key, (ref, _) in before.items() if key not in after],
    )


def _by_identity(snapshot: ResourceSnapshot) -> dict[tuple[str, str], tuple[ResourceChange, Any]]:
    # A skill or template keeps its identity (kind, name) when its file moves: that is a change.
    return {(ref.kind, ref.name): (ref, value) for ref, value in _identified(snapshot)}


def _identified(snapshot: ResourceSnapshot) -> Iterable[tuple[ResourceChange, Any]]:
    for context_file in snapshot.context_files:
        yield (
            ResourceChange("contextFile", context_file.path, context_file.path),
            context_file.content,
        )
    for kind, prompt_file in (
        ("systemPrompt", snapshot.system_prompt),
        ("appendSystemPrompt", snapshot.append_system_prompt),
    ):
        if prompt_file is not None:
            yield ResourceChange(kind, prompt_file.path, prompt_file.path), prompt_file.content
    for skill in snapshot.skills:
        yield ResourceChange("skill", skill.name, skill.file_path), skill
    for template in snapshot.templates:
        yield ResourceChange("promptTemplate", template.name, template.file_path), template
    for extension in snapshot.extension_files:
        yield ResourceChange("extension", extension.path, extension.path), extension.version
    for settings_file in (snapshot.settings.global_file, snapshot.settings.project_file):
        if settings_file is not None and settings_file.raw:
            yield (
                ResourceChange("settings", settings_file.path, settings_file.path),
                settings_file.raw,
            )
    if snapshot.models is not None and snapshot.models.providers:
        yield ResourceChange("models", snapshot.models.path, snapshot.models.path), snapshot.models
    if snapshot.auth is not None and snapshot.auth.credentials:
        # Compared as a whole (keys included), reported by path only.
        yield ResourceChange("credentials", snapshot.auth.path, snapshot.auth.path), snapshot.auth
    for server in snapshot.mcp.servers:
        yield ResourceChange("mcpServer", server.name, server.source), server
