"""Prompt templates: ``*.md`` files whose name is a slash command, and their expansion, following
pi 0.84.2's ``core/prompt-templates.ts``.

Only files directly in a prompts directory count (no recursion), less what the folder's
``.gitignore``/``.ignore``/``.fdignore`` exclude and what settings patterns disable. ``/name args``
expands when a template ``name`` exists: the arguments are split like a shell would (quotes may open
mid-word, empty quoted arguments vanish) and substituted in one pass, so an argument that itself
looks like ``$1`` is never substituted again.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from pi_lsp.protocol import Scope
from pi_lsp.resources.diagnostics import ResourceDiagnostic, warning
from pi_lsp.resources.files import ParsedFileCache, file_identity, uncached
from pi_lsp.resources.frontmatter import parse_frontmatter
from pi_lsp.resources.ignore_rules import IgnoreRules
from pi_lsp.resources.locations import FirstNameWins, ResourceLocation

DESCRIPTION_FALLBACK_LENGTH = 60
TEMPLATE_COMMAND = re.compile(r"^/(\S+)(?:\s+([\s\S]*))?\Z")
# One combined pattern, as in pi 0.84.2: defaults, then slices, then simple placeholders.
PLACEHOLDER = re.compile(
    r"\$\{([0-9]+|ARGUMENTS|@):-([^}]*)\}|\$\{@:([0-9]+)(?::([0-9]+))?\}|\$(ARGUMENTS|@|[0-9]+)"
)


@attrs.frozen
class PromptTemplate:
    name: str
    description: str
    content: str = attrs.field(repr=False)
    file_path: str
    source: Scope
    argument_hint: str | None = None


@attrs.frozen
class TemplateLocation(ResourceLocation):
    """A directory of templates (or one template file named in settings), in precedence order."""


@attrs.frozen
class TemplateLoad:
    templates: tuple[PromptTemplate, ...]
    diagnostics: tuple[ResourceDiagnostic, ...]


def load_templates(
    locations: Sequence[TemplateLocation], cache: ParsedFileCache | None = None
) -> TemplateLoad:
    """Every template of ``locations``; the first of two templates with one name wins.

    With a ``cache``, template files unchanged since the last load are not read again.
    """
    read = cache.get if cache is not None else uncached
    chosen = FirstNameWins[PromptTemplate]('prompt template "/{}"')
    seen_files: set[object] = set()
    diagnostics: list[ResourceDiagnostic] = []
    for location in locations:
        for path in template_files(location):
            if not location.patterns.enables(path):
                continue
            identity = file_identity(path)
            if identity in seen_files:
                continue
            seen_files.add(identity)
            template, problem = read(
                path, location.source, functools.partial(load_template_file, path, location.source)
            )
            if problem is not None:
                diagnostics.append(problem)
            if template is not None:
                chosen.offer(template.name, template.file_path, template)
    return TemplateLoad(chosen.kept(), tuple(diagnostics + chosen.collisions))


def template_files(location: TemplateLocation) -> list[Path]:
    path = location.path
    if path.is_file():
        return [path] if location.explicit and path.suffix == ".md" else []
    try:
        entries = sorted(os.scandir(path), key=lambda entry: entry.name)
    except OSError:
        return []
    ignore = IgnoreRules(path)
    ignore.enter(path, [entry.name for entry in entries])
    # pi skips dot-files in its own prompts directories, not in directories named in settings.
    return [
        Path(entry.path)
        for entry in entries
        if entry.name.endswith(".md")
        and _is_file(entry)
        and (location.explicit or not entry.name.startswith("."))
        and not ignore.ignores(Path(entry.path), is_directory=False)
    ]


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def load_template_file(
    path: Path, source: Scope
) -> tuple[PromptTemplate | None, ResourceDiagnostic | None]:
    """The template in ``path``; pi skips a file it cannot read or parse, and we say why."""
    file_path = str(path)
    try:
        content = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        return None, warning(file_path, 1, f"cannot read prompt template: {problem}")
    parsed = parse_frontmatter(content, file_path)
    if parsed.diagnostic is not None:
        return None, parsed.diagnostic
    frontmatter = parsed.mapping or {}
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description:
        description = _first_line_description(parsed.body)
    hint = frontmatter.get("argument-hint")
    template = PromptTemplate(
        name=path.name.removesuffix(".md"),
        description=description,
        content=parsed.body,
        file_path=file_path,
        source=source,
        argument_hint=hint if isinstance(hint, str) and hint else None,
    )
    return template, None


def _first_line_description(body: str) -> str:
    first = next((line for line in body.split("\n") if line.strip()), "")
    if len(first) > DESCRIPTION_FALLBACK_LENGTH:
        return first[:DESCRIPTION_FALLBACK_LENGTH] + "..."
    return first


def parse_command_args(text: str) -> list[str]:
    """Shell-like splitting: whitespace separates, quotes group (also mid-word), no escapes."""
    args: list[str] = []
    current = ""
    quote = ""
    for char in text:
        if quote:
            if char == quote:
                quote = ""
            else:
                current += char
        elif char in "\"'":
            quote = char
        elif char.isspace():
            if current:
                args.append(current)
                current = ""
        else:
            current += char
    if current:
        args.append(current)
    return args


def substitute_args(content: str, args: Sequence[str]) -> str:
    """Replace ``$1``, ``$@``, ``$ARGUMENTS``, ``${@:N}``,
    ``${@:N:L}`` and ``${X:-default}`` in one pass."""
    all_args = " ".join(args)

    def positional(number: str) -> str | None:
        index = int(number) - 1
        return args[index] if 0 <= index < len(args) else None

    def replace(match: re.Match[str]) -> str:
        default_target, default_value, slice_start, slice_length, simple = match.groups()
        if default_target:
            value = all_args if default_target in ("@", "ARGUMENTS") else positional(default_target)
            return value or default_value
        if slice_start:
            start = max(int(slice_start) - 1, 0)  # ${@:0} means all, as in bash
            end = start + int(slice_length) if slice_length else None
            return " ".join(args[start:end])
        if simple in ("ARGUMENTS", "@"):
            return all_args
        return positional(simple) or ""

    return PLACEHOLDER.sub(replace, content)


def expand_template(text: str, templates: Iterable[PromptTemplate]) -> str:
    """``/name args`` → the template with its arguments substituted; anything else unchanged."""
    if not text.startswith("/"):
        return text
    match = TEMPLATE_COMMAND.match(text)
    if not match:
        return text
    template = next((candidate for candidate in templates if candidate.name == match[1]), None)
    if template is None:
        return text
    return substitute_args(template.content, parse_command_args(match[2] or ""))
