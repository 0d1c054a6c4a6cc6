"""Frontmatter of skill and prompt-template files: the YAML block between a leading ``---`` and the
next ``\\n---``, split off the way pi 0.84.2's ``utils/frontmatter.ts`` does, and read the way its
``yaml`` package reads it (``yaml_reader.py``, imported only when a file has a block).

A block that does not parse becomes one diagnostic on the line the YAML parser reports instead of
an exception; a block that is not a mapping (a lone scalar or a list) gives no keys, as pi reads no
field from it.
"""

from __future__ import annotations

from typing import Any

import attrs

from pi_lsp.resources.diagnostics import ResourceDiagnostic, error

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
    from pi_lsp.resources.yaml_reader import YamlProblem, read_yaml_mapping

    try:
        mapping, key_lines = read_yaml_mapping(yaml_text)
    except YamlProblem as problem:
        # A problem found at the end of the block is reported on its last line.
        line = FIRST_YAML_LINE + min(problem.line, yaml_text.count("\n"))
        diagnostic = error(path, line, f"invalid frontmatter: {problem.message}")
        return ParsedFrontmatter(None, body, diagnostic)
    lines = {key: FIRST_YAML_LINE + line for key, line in key_lines.items()}
    return ParsedFrontmatter(mapping, body, None, lines)
