"""What the demo prints: step titles, details (left out by ``--quiet``) and checks, plus the views
of a session tree, a turn's tool results and a summary that the steps print."""

from __future__ import annotations

import sys
from typing import Any

STEP_LINE_LENGTH = 72
RESULT_LINE_LENGTH = 72


class Transcript:
    """The demo's output. Checks are the facts a step promises; a failed one is printed with ✗ and
    counted, so the command can fail when the scripted story did not happen as written."""

    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet
        self.failed_checks: list[str] = []
        self.check_count = 0

    def title(self, text: str) -> None:
        print(f"\n== {text} ".ljust(STEP_LINE_LENGTH, "="), flush=True)

    def say(self, text: str = "") -> None:
        if not self.quiet:
            print(text, flush=True)

    def lines(self, lines: list[str], indent: str = "  ") -> None:
        for line in lines:
            self.say(indent + line if line else indent.rstrip())

    def write(self, text: str) -> None:
        """Streamed text, as it arrives (not in quiet mode)."""
        if not self.quiet:
            sys.stdout.write(text)
            sys.stdout.flush()

    def check(self, holds: bool, fact: str) -> None:
        self.check_count += 1
        if not holds:
            self.failed_checks.append(fact)
        print(f"  {'✓' if holds else '✗'} {fact}", flush=True)


def tokens_text(context_usage: dict[str, Any] | None) -> str:
    """A ``pi/state`` ``contextUsage`` in words."""
    if not context_usage:
        return "unknown (no model)"
    tokens = context_usage.get("tokens")
    if tokens is None:
        return "unknown until the model answers again (pi/state says null, as pi does)"
    return f"{tokens:,} tokens of {context_usage['contextWindow']:,}"


def message_line(message: dict[str, Any], width: int = 60) -> str:
    """One request message as its role and the start of its text."""
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    text = " ".join(str(content or "").split())
    if not text and message.get("tool_calls"):
        text = (
            "(tool calls: "
            + ", ".join(call["function"]["name"] for call in message["tool_calls"])
            + ")"
        )
    if len(text) > width:
        text = text[: width - 1] + "…"
    return f"{message.get('role', '?'):<9} {text}"


# ------------------------------------------------------------------------------------ the tree view


def render_tree(document: dict[str, Any]) -> list[str]:
    """The lines of a ``pi/tree`` result, indented like pi's ``/tree``: one step per branch point.

    A chain of single children stays in one column (as in pi), so long sessions do not drift right.
    """
    entries = {entry["id"]: entry for entry in document["entries"]}
    children: dict[str, list[str]] = document["children"]
    active = set(document["activePath"])
    lines = []
    stack = [(root, 0) for root in reversed(document["roots"])]
    while stack:
        entry_id, indent = stack.pop()
        lines.append(
            _tree_line(
                entries[entry_id], indent, entry_id == document["leafId"], entry_id in active
            )
        )
        below = children.get(entry_id, [])
        child_indent = indent + 1 if len(below) > 1 else indent
        stack.extend((child, child_indent) for child in reversed(below))
    return lines


def _tree_line(entry: dict[str, Any], indent: int, is_leaf: bool, is_active: bool) -> str:
    marker = "@" if is_leaf else ("*" if is_active else " ")
    kind = entry.get("role") or entry["type"]
    label = f" [{entry['label']}]" if entry.get("label") else ""
    line = f"{marker} {'  ' * indent}{entry['id']} {kind}{label}: {entry['preview']}"
    return line if len(line) <= STEP_LINE_LENGTH + 8 else line[: STEP_LINE_LENGTH + 7] + "…"


def tool_result_line(event: dict[str, Any]) -> str:
    """One short line saying what a tool returned: its
    first line of text and how many lines there were."""
    text = "\n".join(
        block.get("text", "") for block in event.get("content") or [] if block.get("type") == "text"
    )
    lines = text.splitlines()
    first = next((line.strip() for line in lines if line.strip()), "(no text)")
    if len(first) > RESULT_LINE_LENGTH:
        first = first[: RESULT_LINE_LENGTH - 1] + "…"
    return first if len(lines) <= 1 else f"{first}  ({len(lines)} lines)"
