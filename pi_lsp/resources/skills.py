"""Skills: discovery, Agent Skills validation, the system-prompt index and ``/skill:name``
expansion, following pi 0.84.2 (``core/skills.ts`` and ``core/package-manager.ts``).

A directory holding ``SKILL.md`` is a skill root and is not searched further; other directories
are searched recursively, skipping dot-directories, ``node_modules`` and whatever the
``.gitignore``/``.ignore``/``.fdignore`` files met on the way exclude; the ``!``/``+``/``-``
patterns of the location's settings file may disable single skills (``patterns.py``). ``.pi``-style
skill directories (and directories named in settings) also take loose ``*.md`` files at their top;
``.agents``-style ones take only ``SKILL.md``. Invalid names and over-long descriptions are
warnings; a missing description or unreadable frontmatter skips the skill; on a name collision
the first location wins (callers pass project locations before user ones).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import attrs

from pi_lsp.protocol import Scope
from pi_lsp.resources.diagnostics import ResourceDiagnostic, warning
from pi_lsp.resources.files import ParsedFileCache, file_identity, uncached
from pi_lsp.resources.frontmatter import ParsedFrontmatter, parse_frontmatter
from pi_lsp.resources.ignore_rules import IgnoreRules
from pi_lsp.resources.locations import FirstNameWins, ResourceLocation

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
SKILL_FILE = "SKILL.md"
VALID_NAME = re.compile(r"^[a-z0-9-]+$")
SKILL_COMMAND = "/skill:"

ScanMode = Literal["pi", "agents"]
"""``pi``: loose ``*.md`` files at the top count; ``agents``: only ``SKILL.md`` folders count."""


@attrs.frozen
class Skill:
    name: str
    description: str
    file_path: str
    base_dir: str
    disable_model_invocation: bool
    source: Scope
    body: str = attrs.field(default="", repr=False)
    """The file without its frontmatter, trimmed; what ``/skill:name`` inlines."""


@attrs.frozen
class SkillLocation(ResourceLocation):
    """One place to look for skills, in precedence order."""

    mode: ScanMode = "pi"
    declared_in: str | None = None
    """The settings file that names an ``explicit`` location (where a missing path is reported)."""
    declared_line: int = 1


@attrs.frozen
class SkillLoad:
    skills: tuple[Skill, ...]
    diagnostics: tuple[ResourceDiagnostic, ...]


def load_skills(
    locations: Sequence[SkillLocation], cache: ParsedFileCache | None = None
) -> SkillLoad:
    """Every skill of ``locations``; the first of two skills with one name wins.

    With a ``cache``, skill files unchanged since the last load are not read again.
    """
    read = cache.get if cache is not None else uncached
    chosen = FirstNameWins[Skill]('skill name "{}"')
    seen_files: set[object] = set()
    diagnostics: list[ResourceDiagnostic] = []
    for location in locations:
        for skill in _skills_at(location, diagnostics, read):
            identity = file_identity(skill.file_path)
            if identity in seen_files:
                continue  # the same file reached twice (e.g. through a symlink)
            if chosen.offer(skill.name, skill.file_path, skill):
                seen_files.add(identity)
    return SkillLoad(chosen.kept(), tuple(diagnostics + chosen.collisions))


def _skills_at(
    location: SkillLocation, diagnostics: list[ResourceDiagnostic], read
) -> Iterable[Skill]:
    path = location.path
    if location.explicit and not path.exists():
        diagnostics.append(
            warning(
                location.declared_in or str(path),
                location.declared_line,
                f"skill path does not exist: {path}",
            )
        )
        return
    if path.is_file():
        if not location.explicit or path.suffix != ".md":
            return
        files: list[Path] = [path]
    else:
        files = skill_files(path, location.mode)
    for file in files:
        if not location.patterns.enables(file):
            continue
        skill, problems = read(
            file, location.source, functools.partial(load_skill_file, file, location.source)
        )
        diagnostics.extend(problems)
        if skill is not None:
            yield skill


def skill_files(directory: Path, mode: ScanMode = "pi") -> list[Path]:
    """The skill files under ``directory``, in a stable (sorted) order."""
    return _scan(Path(directory), mode, IgnoreRules(Path(directory)), is_root=True)


def _scan(directory: Path, mode: ScanMode, ignore: IgnoreRules, *, is_root: bool) -> list[Path]:
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError:
        return []
    ignore.enter(directory, [entry.name for entry in entries])
    skill_file = directory / SKILL_FILE
    has_skill_file = any(entry.name == SKILL_FILE and _is_file(entry) for entry in entries)
    if has_skill_file and not ignore.ignores(skill_file, is_directory=False):
        return [
            skill_file
        ]  # an ignored SKILL.md does not make a skill root: its folder is searched on
    found: list[Path] = []
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        path = Path(entry.path)
        if _is_dir(entry):
            if not ignore.ignores(path, is_directory=True):
                found.extend(_scan(path, mode, ignore, is_root=False))
        elif (
            mode == "pi"
            and is_root
            and entry.name.endswith(".md")
            and _is_file(entry)
            and not ignore.ignores(path, is_directory=False)
        ):
            found.append(path)
    return found


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()  # follows symlinks; a broken one is simply not a file
    except OSError:
        return False


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def load_skill_file(path: Path, source: Scope) -> tuple[Skill | None, list[ResourceDiagnostic]]:
    """The skill in ``path`` (None when pi would skip it) and what is wrong with it."""
    file_path = str(path)
    try:
        content = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        return None, [warning(file_path, 1, f"cannot read skill file: {problem}")]
    parsed = parse_frontmatter(content, file_path)
    if parsed.diagnostic is not None:
        return None, [parsed.diagnostic]
    frontmatter = parsed.mapping or {}
    folder = path.parent.name
    diagnostics = _description_problems(parsed, file_path)
    name = _skill_name(parsed, folder, file_path, diagnostics)
    diagnostics.extend(_name_problems(name, folder, parsed, file_path))
    disable = _disable_model_invocation(parsed, file_path, diagnostics)
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        return None, diagnostics
    skill = Skill(name, description, file_path, str(path.parent), disable, source, parsed.body)
    return skill, diagnostics


def _description_problems(parsed: ParsedFrontmatter, file_path: str) -> list[ResourceDiagnostic]:
    description = (parsed.mapping or {}).get("description")
    line = parsed.line_of("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        return [warning(file_path, line, "description is required; the skill is not loaded")]
    if not isinstance(description, str):
        return [warning(file_path, line, "description must be a string; the skill is not loaded")]
    if len(description) > MAX_DESCRIPTION_LENGTH:
        return [
            warning(
                file_path,
                line,
                f"description exceeds {MAX_DESCRIPTION_LENGTH} characters ({len(description)})",
            )
        ]
    return []


def _skill_name(
    parsed: ParsedFrontmatter, folder: str, file_path: str, diagnostics: list[ResourceDiagnostic]
) -> str:
    name = (parsed.mapping or {}).get("name")
    if name is None or name == "":
        return folder  # pi falls back to the folder's name
    if not isinstance(name, str):
        diagnostics.append(
            warning(
                file_path, parsed.line_of("name"), "name must be a string; using the folder's name"
            )
        )
        return folder
    return name


def _name_problems(
    name: str, folder: str, parsed: ParsedFrontmatter, file_path: str
) -> list[ResourceDiagnostic]:
    line = parsed.line_of("name")
    problems = []
    if len(name) > MAX_NAME_LENGTH:
        problems.append(f"name exceeds {MAX_NAME_LENGTH} characters ({len(name)})")
    if not VALID_NAME.match(name):
        problems.append(
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
        )
    if name.startswith("-") or name.endswith("-"):
        problems.append("name must not start or end with a hyphen")
    if "--" in name:
        problems.append("name must not contain consecutive hyphens")
    if Path(file_path).name == SKILL_FILE and name != folder:
        # The Agent Skills spec asks for it; pi 0.84.2 no longer checks, so it stays a warning.
        problems.append(f'name "{name}" does not match its folder "{folder}"')
    return [warning(file_path, line, problem) for problem in problems]


def _disable_model_invocation(
    parsed: ParsedFrontmatter, file_path: str, diagnostics: list[ResourceDiagnostic]
) -> bool:
    value = (parsed.mapping or {}).get("disable-model-invocation")
    if value is not None and not isinstance(value, bool):
        line = parsed.line_of("disable-model-invocation")
        diagnostics.append(
            warning(
                file_path, line, "disable-model-invocation must be true or false; treated as false"
            )
        )
    return value is True


def format_skills_for_prompt(skills: Iterable[Skill]) -> str:
    """The skills index for the system prompt, or "" when no skill may be invoked by the model."""
    visible = [skill for skill in skills if not skill.disable_model_invocation]
    if not visible:
        return ""
    lines = [
        "Skills hold detailed instructions for particular kinds of tasks.",
        (
            "When a task matches a skill's description, read that "
            "skill's file with the read tool before you start."
        ),
        (
            "Relative paths inside a skill file are relative to the skill's directory "
            "(the folder of its file); turn them into "
            "absolute paths before using them in tool calls."
        ),
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines.append("  <skill>")
        lines.append(f"    <name>{escape_xml(skill.name)}</name>")
        lines.append(f"    <description>{escape_xml(skill.description)}</description>")
        lines.append(f"    <location>{escape_xml(skill.file_path)}</location>")
        lines.append("  </skill>")
    lines.append("</available_skills>")
    return "\n".join(lines)


def escape_xml(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def expand_skill_command(text: str, skills: Iterable[Skill]) -> str:
    """``/skill:name args`` → the skill's body in a
    ``<skill>`` block, then the args; else ``text``."""
    if not text.startswith(SKILL_COMMAND):
        return text
    # pi splits at the first space only (not at tabs or newlines).
    name, space, rest = text[len(SKILL_COMMAND) :].partition(" ")
    skill = next((candidate for candidate in skills if candidate.name == name), None)
    if skill is None:
        return text
    block = (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"References are relative to {skill.base_dir}.\n\n{skill.body}\n</skill>"
    )
    args = rest.strip() if space else ""
    return f"{block}\n\n{args}" if args else block
