"""Whether a tool call may run at once, or what to ask the user about it.

The defaults follow the workspace's trust: in a trusted workspace every tool runs (pi's
behaviour); in an untrusted one ``bash``, ``write`` and ``edit`` ask, and so do MCP tools
(``mcp__<server>__<tool>``) unless their server marks them ``readOnlyHint``. A ``permissions`` rule
(``resources/permission_settings.py``) overrides the default per tool, and its allow-patterns let
matching calls through. A ``write`` or ``edit`` outside the workspace root (symlinks followed)
always asks unless an absolute allow-pattern (``/tmp/**``, ``~/notes/**``) matches it.

``bash`` patterns match the whole command, ``*`` standing for any text. A command chained with
``;``, ``&&``, ``||``, ``|``, ``&`` or a newline runs only if every part matches; one with
command substitution (``$(…)``, backquotes) or a redirection (``>``, ``<``) always asks, since a
pattern cannot say what it would run or write. Path patterns are globs (``**`` crosses folders)
against the path relative to the workspace root.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
from wcmatch import glob

from pi_lsp.resources.permission_settings import (
    ASKING_WHEN_UNTRUSTED,
    READ_ONLY_GROUP,
    READ_ONLY_TOOLS,
    PermissionSettings,
    ToolRule,
)
from pi_lsp.tools.paths import resolve_to_cwd

GLOB_FLAGS = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE
_CHAIN = re.compile(r"\|\||&&|[;|&\n]")
_UNSAFE = re.compile(r"\$\(|`|[<>]")
FILE_CHANGING_TOOLS = ("write", "edit")
MCP_TOOL_PREFIX = "mcp__"
MCP_RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")
ARGUMENTS_SUMMARY_LIMIT = 300
SUMMARY_LINE_LIMIT = 20_000
SUMMARY_MAX_BYTES = 5_000_000
"""A file bigger than this is not read to summarize its overwrite."""


@attrs.frozen
class PermissionQuestion:
    """What the user is asked about one tool call."""

    tool_name: str
    subject: str
    """The command, or the path as the model gave it."""
    summary: str = ""
    """A short summary of the change (``new file, 12 lines``, ``−3 +5 lines``)."""
    reason: str = ""
    """Why this call asks (the rule that made it ask)."""
    outside_workspace: bool = False
    session_grant: str = ""
    """What "Allow for this session" allows from now on (a key of the session's grants)."""
    session_id: str = ""
    """The pi session whose turn asks (set by ``Permissions.check``)."""
    tool_call_id: str = ""
    """The tool call asked about, for channels that show it (ACP's permission request)."""
    arguments: Mapping[str, Any] = attrs.field(factory=dict, eq=False)
    """The call's arguments (as the tool will run them)."""

    @property
    def message(self) -> str:
        """The question as one text, for channels that show plain text."""
        verbs = {"bash": "run", "write": "write", "edit": "edit"}
        verb = verbs.get(self.tool_name, f"use {self.tool_name} on")
        lines = [f"pi wants to {verb}:", self.subject]
        if self.summary:
            lines.append(self.summary)
        if self.reason:
            lines.append(f"({self.reason})")
        return "\n".join(lines)


ReadText = Callable[[Path], "str | None"]
"""The current text of a file (the editor's unsaved text, else the disk); None if there is none."""


def question_for(
    tool_name: str,
    arguments: Mapping[str, Any],
    *,
    root: Path,
    trusted: bool,
    settings: PermissionSettings,
    read_text: ReadText,
    read_only: bool = False,
) -> PermissionQuestion | None:
    """What to ask before ``tool_name`` runs with ``arguments``; None when it may run at once."""
    rule = settings.rule_for(tool_name)
    if rule.ask is not None:
        ask = rule.ask
    else:
        asking = tool_name in ASKING_WHEN_UNTRUSTED or (_is_mcp_tool(tool_name) and not read_only)
        ask = not trusted and asking
    if _is_mcp_tool(tool_name):
        if not ask:
            return None
        return PermissionQuestion(
            tool_name,
            _arguments_summary(arguments),
            reason=_reason(rule.ask, trusted),
            session_grant=f"{tool_name}:*",
        )
    if tool_name == "bash":
        command = str(arguments.get("command", ""))
        if not ask or command_allowed(command, rule.allow):
            return None
        return PermissionQuestion(
            "bash", command, reason=_reason(rule.ask, trusted), session_grant=f"bash:{command}"
        )
    if tool_name in FILE_CHANGING_TOOLS:
        change = _FileChange(tool_name, arguments, root, read_text)
        return change.question(rule, ask=ask, trusted=trusted)
    if not ask:
        return None
    path = str(arguments.get("path") or ".")
    if tool_name in READ_ONLY_TOOLS and path_allowed(resolve_to_cwd(path, root), root, rule.allow):
        return None
    subject = path if tool_name not in ("grep", "find") else f"{arguments.get('pattern')} in {path}"
    group = READ_ONLY_GROUP if tool_name in READ_ONLY_TOOLS else tool_name
    return PermissionQuestion(
        tool_name, subject, reason=_reason(rule.ask, trusted), session_grant=f"{group}:*"
    )


@attrs.frozen
class _FileChange:
    """A ``write`` or ``edit`` call, for the question about it."""

    tool_name: str
    arguments: Mapping[str, Any]
    root: Path
    read_text: ReadText

    def question(self, rule: ToolRule, *, ask: bool, trusted: bool) -> PermissionQuestion | None:
        raw_path = self.arguments.get("path")
        if not isinstance(raw_path, str) or not raw_path:
            return None  # the tool refuses it without running
        path = resolve_to_cwd(raw_path, self.root)
        outside = not is_inside(path, self.root)
        if path_allowed(path, self.root, rule.allow) or (not ask and not outside):
            return None
        summary = change_summary(self.tool_name, self.arguments, path, self.read_text)
        if outside:
            return PermissionQuestion(
                self.tool_name,
                str(path),
                summary,
                "outside the workspace root",
                outside_workspace=True,
                session_grant=f"{self.tool_name}:{path}",
            )
        return PermissionQuestion(
            self.tool_name,
            raw_path,
            summary,
            _reason(rule.ask, trusted),
            session_grant=f"{self.tool_name}:<workspace>",
        )


def _is_mcp_tool(tool_name: str) -> bool:
    """An MCP server's tool (``mcp__<server>__<tool>``) or one of the MCP resource tools."""
    return tool_name.startswith(MCP_TOOL_PREFIX) or tool_name in MCP_RESOURCE_TOOLS


def _arguments_summary(arguments: Mapping[str, Any]) -> str:
    text = json.dumps(dict(arguments), ensure_ascii=False, default=str)
    return text if len(text) <= ARGUMENTS_SUMMARY_LIMIT else text[:ARGUMENTS_SUMMARY_LIMIT] + "…"


def _reason(configured: bool | None, trusted: bool) -> str:
    if configured is None and not trusted:
        return "the workspace is not trusted"
    return "the permissions setting asks"


def command_allowed(command: str, patterns: tuple[str, ...]) -> bool:
    """Whether every part of ``command`` matches one of ``patterns`` (see the module docstring)."""
    if not patterns or _UNSAFE.search(command):
        return False
    parts = [part.strip() for part in _CHAIN.split(command)]
    parts = [part for part in parts if part]
    return bool(parts) and all(
        any(_command_pattern(pattern).fullmatch(" ".join(part.split())) for pattern in patterns)
        for part in parts
    )


def _command_pattern(pattern: str) -> re.Pattern[str]:
    words = " ".join(pattern.split())
    return re.compile(".*".join(re.escape(piece) for piece in words.split("*")), re.DOTALL)


def is_inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (symlinks followed, as far as they exist) lies under ``root``."""
    real = Path(os.path.realpath(path))
    real_root = Path(os.path.realpath(root))
    return real == real_root or real_root in real.parents


def path_allowed(path: Path, root: Path, patterns: tuple[str, ...]) -> bool:
    """Whether a pattern allows ``path``: relative patterns inside the root, absolute ones
    (``/…``, ``~/…``) anywhere."""
    if not patterns:
        return False
    inside = is_inside(path, root)
    relative = os.path.relpath(os.path.realpath(path), os.path.realpath(root)) if inside else None
    for pattern in patterns:
        expanded = os.path.expanduser(pattern)
        if os.path.isabs(expanded):
            if glob.globmatch(str(path), expanded, flags=GLOB_FLAGS) or glob.globmatch(
                os.path.realpath(path), expanded, flags=GLOB_FLAGS
            ):
                return True
        elif relative is not None and glob.globmatch(relative, expanded, flags=GLOB_FLAGS):
            return True
    return False


def change_summary(
    tool_name: str, arguments: Mapping[str, Any], path: Path, read_text: ReadText
) -> str:
    """``new file, 12 lines``, ``−3 +5 lines``, ``2 replacements, −3 +5 lines``."""
    if tool_name == "edit":
        edits = arguments.get("edits")
        if not isinstance(edits, list):
            return ""
        pairs = [edit for edit in edits if isinstance(edit, Mapping)]
        removed = sum(_line_count(str(edit.get("oldText", ""))) for edit in pairs)
        added = sum(_line_count(str(edit.get("newText", ""))) for edit in pairs)
        count = f"{len(pairs)} replacements, " if len(pairs) > 1 else ""
        return f"{count}−{removed} +{added} lines"
    content = str(arguments.get("content", ""))
    size = _file_size(path)
    if size is not None and size > SUMMARY_MAX_BYTES:
        return f"overwrites a file of {size / 1_000_000:.1f} MB with {_lines(_line_count(content))}"
    current = read_text(path)
    if current is None:
        return f"new file, {_lines(_line_count(content))}"
    old_lines, new_lines = current.splitlines(), content.splitlines()
    if max(len(old_lines), len(new_lines)) > SUMMARY_LINE_LIMIT:
        return f"replaces {_lines(len(old_lines))} with {_lines(len(new_lines))}"
    removed = added = 0
    for line in list(difflib.unified_diff(old_lines, new_lines, n=0, lineterm=""))[2:]:
        removed += line.startswith("-")
        added += line.startswith("+")
    return f"overwrites the file: −{removed} +{added} lines"


def _file_size(path: Path) -> int | None:
    try:
        return path.stat().st_size if path.is_file() else None
    except OSError:
        return None


def _lines(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


def _line_count(text: str) -> int:
    return len(text.splitlines()) if text else 0
