"""The session as a tree for display: roots, children oldest first, labels resolved (pi's
``getTree``).

Roots are entries whose parent is null, themselves, or unknown (orphans). Building is iterative, so
deep trees cannot overflow the stack, and each entry is visited once, so cycles cannot hang it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cmp_to_key
from typing import Any

import attrs

from pi_lsp.session.timestamps import iso_to_epoch_ms


@attrs.define(eq=False)
class TreeNode:
    entry: Mapping[str, Any]
    children: list[TreeNode] = attrs.Factory(list)
    label: str | None = None
    label_timestamp: str | None = None


def build_tree(
    entries: Sequence[Mapping[str, Any]], labels: Mapping[Any, tuple[str | None, Any]]
) -> list[TreeNode]:
    """Root nodes of ``entries``; ``labels`` maps target id to (label, label timestamp)."""
    nodes: dict[Any, TreeNode] = {}
    for entry in entries:
        label, label_timestamp = labels.get(entry.get("id"), (None, None))
        nodes[entry.get("id")] = TreeNode(entry, label=label, label_timestamp=label_timestamp)
    roots: list[TreeNode] = []
    for entry in entries:
        node = nodes[entry.get("id")]
        if node.entry is not entry:
            continue  # a duplicate id: pi's node map keeps the later entry only
        parent_id = entry.get("parentId")
        parent = (
            nodes.get(parent_id) if parent_id is not None and parent_id != entry.get("id") else None
        )
        (parent.children if parent else roots).append(node)
    _sort_children(roots)
    return roots


def _entry_timestamp_order(left: Mapping[str, Any], right: Mapping[str, Any]) -> int:
    left_ms = iso_to_epoch_ms(left.get("timestamp"))
    right_ms = iso_to_epoch_ms(right.get("timestamp"))
    if left_ms is None or right_ms is None:
        return 0  # JavaScript's comparator returns NaN here, which sorts as "equal"
    return left_ms - right_ms


def _timestamp_order(left: TreeNode, right: TreeNode) -> int:
    return _entry_timestamp_order(left.entry, right.entry)


_by_timestamp = cmp_to_key(_timestamp_order)
_entries_by_timestamp = cmp_to_key(_entry_timestamp_order)


def in_display_order(siblings: list[Any]) -> list[Any]:
    """Sibling entries (in file order) in pi's display order: oldest first, stable."""
    return sorted(siblings, key=_entries_by_timestamp) if len(siblings) > 1 else siblings


def _sort_children(roots: list[TreeNode]) -> None:
    stack = list(roots)
    visited: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        node.children.sort(key=_by_timestamp)
        stack.extend(node.children)


def walk_depth_first(roots: Sequence[TreeNode]):
    """Yield ``(node, depth)`` in display order, iteratively."""
    stack = [(node, 0) for node in reversed(roots)]
    visited: set[int] = set()
    while stack:
        node, depth = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        yield node, depth
        stack.extend((child, depth + 1) for child in reversed(node.children))
