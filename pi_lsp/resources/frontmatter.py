"""Frontmatter of skill and prompt-template files: the YAML block between a leading ``---`` and the
next ``\\n---``, split off the way pi 0.84.2's ``utils/frontmatter.ts`` does.

PyYAML is not a dependency, so the block is read by ``yaml_subset``, which understands what
frontmatter uses (scalars, quoted strings, ``|``/``>`` block scalars, lists, nested mappings).
A block it cannot read becomes one diagnostic on its line instead of an exception.
"""

from __future__ import annotations

from typing import Any

import attrs

from pi_lsp.resources.diagnostics import ResourceDiagnostic, error
from pi_lsp.resources.yaml_subset import YamlSubsetError, parse_yaml_mapping

FENCE = "---"
FIRST_YAML_LINE = 2
"""The YAML starts on the line after the opening fence."""


@attrs.frozen
class ParsedFrontmatter:
    mapping: dict[str, Any] | None
    """None when the file has no (terminated) frontmatter or it could not be read."""
    body: str
    diagnostic: ResourceDiagnostic | None = None
    key_lines: dict[str, int] = attrs.Factory(dict)
    """The 1-based file line of each top-level key, so validation problems point at their key."""

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, 1)


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_frontmatter(content: str, path: str = "") -> ParsedFrontmatter:
    """Split ``content`` into its frontmatter mapping and body; never raises."""
    normalized = normalize_newlines(content.removeprefix("\ufeff"))
    if not normalized.startswith(FENCE):
        return ParsedFrontmatter(None, normalized)
    end = normalized.find("\n" + FENCE, len(FENCE))
    if end == -1:
        return ParsedFrontmatter(None, normalized)
    yaml_text = normalized[len(FENCE) + 1 : end]
    # pi trims the body only when a frontmatter block was split off.
    body = normalized[end + len(FENCE) + 1 :].strip()
    if not yaml_text.strip():
        return ParsedFrontmatter({}, body)
    try:
        mapping, key_lines = parse_yaml_mapping(yaml_text, first_line=FIRST_YAML_LINE)
    except YamlSubsetError as problem:
        return ParsedFrontmatter(
            None, body, error(path, problem.line, f"invalid frontmatter: {problem.message}")
        )
    return ParsedFrontmatter(mapping, body, None, key_lines)


def strip_frontmatter(content: str) -> str:
    return parse_frontmatter(content).body
