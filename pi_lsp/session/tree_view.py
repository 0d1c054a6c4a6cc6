"""The session tree for people and editors: one-line previews, the active path, labels.

``tree_view`` is the flat form editors list (entries in file order; clients nest them by parent);
``tree_text_lines`` draws the indented tree ``pi-lsp session tree`` prints, indented the way pi's
``/tree`` indents: a run of single children stays in one column, only branches step right. Each
line has a bounded width (indentation stops at ``MAX_INDENT_LEVELS``), so the text grows with the
number of entries, not with their depth.

Entries pi 1.6 writes preview as what they do: a context edit as "removed from context: <the
target's preview>" (or "replaced in context: …"), a usage record by its kind and model, a
system-role message as the prompt state it records. Entries of the active path that a context
edit left out or replaced carry ``context_edit`` (``"removed"``/``"replaced"``) and are marked in
the text tree. Kinds pi-lsp does not know are shown by their type.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pi_lsp.protocol import TreeEntry, TreeResult
from pi_lsp.session.context_edits import editable_role, original_content
from pi_lsp.session.message_types import MessageRecord
from pi_lsp.session.messages import content_text
from pi_lsp.session.projection import (
    ProjectedEntry,
    context_edit_effects,
    effect_name,
    is_replacement,
)
from pi_lsp.session.session import Session
from pi_lsp.session.stored_entry import StoredEntry
from pi_lsp.session.tree import TreeNode, walk_depth_first

PREVIEW_LENGTH = 80
MAX_INDENT_LEVELS = 20
"""Levels of indentation the text tree draws; a deeper row says how many more levels it has."""


def tree_view(session: Session) -> TreeResult:
    """The whole tree, flat (``pi/tree``): rows in file order, with previews, labels and the
    active path; ``roots`` and ``children`` (ids by parent id) give pi's tree order, children
    oldest first."""
    labels = session.labels
    active_path = session.branch()
    effects = context_edit_effects(active_path)
    rows = [tree_row(session, entry, labels.get(entry.id), effects) for entry in session.entries]
    roots = session.tree()
    children = {
        node.entry.get("id"): [child.entry.get("id") for child in node.children]
        for node, _ in walk_depth_first(roots)
        if node.children
    }
    return TreeResult(
        session_id=session.id,
        leaf_id=session.leaf_id,
        name=session.name,
        labels=labels,
        active_path=[entry.id for entry in active_path],
        roots=[str(node.entry["id"]) for node in roots],
        children=children,
        entries=rows,
    )


def tree_row(
    session: Session,
    entry: StoredEntry,
    label: str | None,
    effects: Mapping[Any, ProjectedEntry],
) -> TreeEntry:
    """One entry as a row: its preview, ``label`` and what a context edit in ``effects`` (those
    of the active path) did to it."""
    role = entry.role  # ``MISSING`` but for a message
    return TreeEntry(
        id=entry.id,
        parent_id=entry.parent_id if isinstance(entry.parent_id, str) else None,
        type=entry.type,
        role=role if isinstance(role, str) else None,
        preview=preview(entry, session.get_entry),
        label=label,
        timestamp=_text_or_none(entry.get("timestamp")),
        context_edit=effect_name(effects[entry.id]) if entry.id in effects else None,
    )


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def render_tree_text(session: Session) -> str:
    """The whole text tree as one string (see ``tree_text_lines``)."""
    return "".join(tree_text_lines(session))


def tree_text_lines(session: Session) -> Iterator[str]:
    """An indented tree, line by line; ``*`` marks the active path, ``@`` the leaf, ``[label]``
    shows labels, ``(removed from context)``/``(replaced in context)`` what a context edit changed.
    """
    active_path = session.branch()
    active = {entry.id for entry in active_path}
    effects = context_edit_effects(active_path)
    yield f"session {session.id}" + (f"  {session.name!r}" if session.name else "") + "\n"
    for node, level in _walk_with_pis_indentation(session.tree()):
        entry = node.entry.peek() if isinstance(node.entry, StoredEntry) else node.entry
        entry_id = entry.get("id")
        marker = "@" if entry_id == session.leaf_id else ("*" if entry_id in active else " ")
        label = f" [{node.label}]" if node.label else ""
        effect = f" ({_EFFECT_TEXT[effect_name(effects[entry_id])]})" if entry_id in effects else ""
        text = preview(entry, session.get_entry)
        yield f"{marker} {_indentation(level)}{entry_id} {_kind(entry)}{label}{effect}: {text}\n"


def _walk_with_pis_indentation(roots: list[TreeNode]) -> Iterator[tuple[TreeNode, int]]:
    """``(node, indentation level)`` in display order, indented as pi's tree selector indents
    (``flattenTree``): the children of a branch point one level right of it, their own first
    children one more; an only child stays at its parent's level. Several roots are drawn as
    the branches of an invisible top."""
    several_roots = len(roots) > 1
    top = 1 if several_roots else 0
    stack = [(root, top, several_roots) for root in reversed(roots)]
    visited: set[int] = set()
    while stack:
        node, level, just_branched = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        yield node, max(0, level - 1) if several_roots else level
        branches = len(node.children) > 1
        child_level = level + 1 if branches or (just_branched and level > 0) else level
        stack.extend((child, child_level, branches) for child in reversed(node.children))


def _indentation(level: int) -> str:
    if level <= MAX_INDENT_LEVELS:
        return "  " * level
    return "  " * MAX_INDENT_LEVELS + f"+{level - MAX_INDENT_LEVELS} "


def _kind(entry: Mapping[str, Any]) -> str:
    if entry.get("type") == "message":
        message = entry.get("message")
        return str(message.get("role")) if isinstance(message, Mapping) else "message"
    return str(entry.get("type"))


_EFFECT_TEXT = {"removed": "removed from context", "replaced": "replaced in context"}


def preview(
    entry: Mapping[str, Any], lookup: Callable[[Any], Mapping[str, Any] | None] | None = None
) -> str:
    """One line of text that says what an entry is; ``lookup`` finds a context edit's target."""
    entry_type = entry.get("type")
    if entry_type == "context_edit":
        return _shorten(_context_edit_preview(entry, lookup))
    if entry_type == "message":
        text = _message_preview(entry.get("message"))
    elif entry_type in ("compaction", "branch_summary"):
        text = _summary_line(entry.get("summary"))
    elif entry_type == "custom_message":
        text = content_text(entry.get("content"), " ")
    elif entry_type == "thinking_level_change":
        text = f"thinking level {entry.get('thinkingLevel')}"
    elif entry_type == "model_change":
        text = f"model {entry.get('provider')}/{entry.get('modelId')}"
    elif entry_type == "label":
        text = f"label {entry.get('label') or '(cleared)'} on {entry.get('targetId')}"
    elif entry_type == "session_info":
        text = f"name {entry.get('name')!r}"
    elif entry_type == "custom":
        text = str(entry.get("customType"))
    elif entry_type == "usage":
        text = f"usage {entry.get('kind')} {entry.get('provider')}/{entry.get('model')}"
        text += f" ({entry.get('note')})" if entry.get("note") else ""
    else:
        text = ""
    return _shorten(text)


def _context_edit_preview(
    edit: Mapping[str, Any], lookup: Callable[[Any], Mapping[str, Any] | None] | None
) -> str:
    """ "removed from context: <target>", "replaced in context: <target> → <replacement>", or
    "restored in context: <target>" for an edit giving the target its stored content back (what
    ``pi/contextRestore`` writes)."""
    target_id = edit.get("targetId")
    target = _safe_lookup(lookup, target_id)
    what = preview(target) if target is not None else ""
    what = what or (f"entry {target_id}" if isinstance(target_id, str) else "an entry")
    replacement = edit.get("replacement")
    if not is_replacement(replacement):
        return f"removed from context: {what}"
    new_content = replacement.get("content") if isinstance(replacement, Mapping) else None
    if target is not None and editable_role(target) and replacement == original_content(target):
        return f"restored in context: {what}"
    return f"replaced in context: {what} → {content_text(new_content, ' ')}"


def _safe_lookup(
    lookup: Callable[[Any], Mapping[str, Any] | None] | None, entry_id: Any
) -> Mapping[str, Any] | None:
    if lookup is None:
        return None
    try:
        return lookup(entry_id)
    except TypeError:  # an unhashable id in a damaged line
        return None


def _message_preview(message: Any) -> str:
    if not isinstance(message, Mapping):
        return ""
    role = message.get("role")
    if role == "bashExecution":
        return f"$ {message.get('command')}"
    if role == "system":
        return _system_preview(message)
    if role == "assistant":
        content = message.get("content")
        text = content_text(content, " ")
        calls = [
            block.get("name")
            for block in content or []
            if isinstance(block, Mapping) and block.get("type") == "toolCall"
        ]
        if calls:
            text = (text + " " if text else "") + "→ " + ", ".join(str(name) for name in calls)
        return text
    if role == "toolResult":
        return f"{message.get('toolName')}: {content_text(message.get('content'), ' ')}"
    text = content_text(message.get("content"), " ")
    return _skill_command(text) if role == "user" else text


def _system_preview(message: MessageRecord) -> str:
    """What a pi 1.6 system message records: its prompt text, sections and tool changes."""
    parts = []
    text = content_text(message.get("content"), " ").strip()
    if text:
        parts.append(text)
    sections = message.get("sections")
    if isinstance(sections, Mapping) and sections:
        parts.append("sections " + ", ".join(str(name) for name in sections))
    for field, sign in (("toolsAdded", "+"), ("toolsRemoved", "−")):
        tools = message.get(field)
        if isinstance(tools, list) and tools:
            names = [str(tool.get("name")) for tool in tools if isinstance(tool, Mapping)]
            parts.append(" ".join(sign + name for name in names))
    return "system prompt" + (": " + "; ".join(parts) if parts else "")


SKILL_BLOCK = re.compile(
    r'\A<skill name="([^"]*)" location="[^"]*">.*?</skill>(?:\s+(.*))?\Z', re.DOTALL
)


def _skill_command(text: str) -> str:
    """An expanded ``/skill:name args`` prompt, shown as typed (not the skill's body)."""
    match = SKILL_BLOCK.match(text)
    if match is None:
        return text
    name, args = match.group(1), match.group(2)
    return f"/skill:{name} {args}" if args else f"/skill:{name}"


def _summary_line(summary: Any) -> str:
    """The goal of a structured summary; else its first line that is not a heading.

    Summaries open with a fixed preamble (branch summaries) and pi's fixed section headings, so
    their first line says nothing about the work; the line under ``## Goal`` does.
    """
    if isinstance(summary, str):
        lines = summary.splitlines()
        for index, line in enumerate(lines):
            if line.strip() == "## Goal":
                goal = next(
                    (
                        later
                        for later in lines[index + 1 :]
                        if later.strip() and not later.startswith("#")
                    ),
                    None,
                )
                if goal is not None:
                    return goal
    return _first_line(summary)


def _first_line(text: Any) -> str:
    if not isinstance(text, str):
        return ""
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            return line
    return text


def _shorten(text: str) -> str:
    head = text[: PREVIEW_LENGTH * 4]  # a long tool output: only its start can be shown
    single_line = " ".join(head.split())
    if len(single_line) <= PREVIEW_LENGTH and len(head) < len(text):
        single_line = " ".join(text.split())
    return (
        single_line
        if len(single_line) <= PREVIEW_LENGTH
        else single_line[: PREVIEW_LENGTH - 1] + "…"
    )
