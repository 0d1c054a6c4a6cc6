"""Windows of the session tree: what an editor shows of a big session, never the whole tree.

The display has the VS Code tree view's shape, like pi's ``/tree``: a run of entries without
branches is one flat list (a conversation reads top to bottom, not one level deeper per message);
where the tree branches, each branch is an expandable node whose children continue it. So the rows
under a node are either its branches (when it has several children) or, under the first entry of
a branch, the run that continues it; the top level is the run from the single root, or the roots.

``tree_children`` answers for one node (``None``: the top level), ``tree_levels`` for each level
from the top down to a target entry (the first screen: the active path, with the other branches at
its branch points as collapsed nodes that say how many children they have). Every list is cut to
a window of ``limit`` rows, and the work is a walk along the session's children index, so a
100k-entry session costs what is on screen.
"""

from __future__ import annotations

import bisect
from typing import Any

import attrs

from pi_lsp.errors import InvalidParamsError, echoed
from pi_lsp.protocol import TreeEntry
from pi_lsp.session.path_index import ActivePathIndex, active_path_index
from pi_lsp.session.session import Session
from pi_lsp.session.stored_entry import StoredEntry
from pi_lsp.session.tree import in_display_order
from pi_lsp.session.tree_view import tree_row

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


@attrs.frozen
class TreeNodeView:
    """A row of the tree view, with what the editor needs to draw and expand it."""

    row: TreeEntry
    child_count: int
    branch_start: bool
    """The first entry of a branch: one of several children (or roots)."""
    active: bool
    """On the path from the root to the leaf."""
    expandable: bool
    """Has rows under it (its branches, or the run that continues its branch)."""


@attrs.frozen
class TreeLevel:
    """A window of the rows under one node: ``total`` rows, these from ``offset`` on."""

    parent_id: str | None
    total: int
    offset: int
    nodes: list[TreeNodeView]


def check_limit(limit: int | None, method: str) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidParamsError(
            f"{method}: limit must be between 1 and {MAX_LIMIT}, got {echoed(limit)}"
        )
    return limit


def tree_children(
    session: Session,
    parent_id: str | None,
    *,
    offset: int | None = None,
    around_id: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> TreeLevel:
    """The rows under ``parent_id`` (``None``: the top level): from ``offset``, or a window
    centred on ``around_id`` (one of those rows)."""
    if parent_id is not None:
        session.require_entry(parent_id)
    rows, branch_list = _display_children(session, active_path_index(session), parent_id)
    if around_id is not None:
        index = next((i for i, entry in enumerate(rows) if entry.id == around_id), None)
        if index is None:
            raise InvalidParamsError(
                f"entry {echoed(around_id)} is not shown under {echoed(parent_id)}"
            )
        start = _centred(index, len(rows), limit)
    else:
        start = min(max(offset or 0, 0), len(rows))
    return _level(session, active_path_index(session), parent_id, rows, branch_list, start, limit)


def tree_levels(session: Session, target_id: str | None, limit: int) -> list[TreeLevel]:
    """Each level from the top down to ``target_id`` (default: the leaf): the target's level is
    a window of ``limit`` rows centred on it; a level above holds only the row of the path, its
    ``total`` says how many rows (other branches, earlier entries) ``tree_children`` has."""
    if target_id is None:
        target_id = session.leaf_id
    if target_id is None:
        return [tree_children(session, None, limit=limit)]
    session.require_entry(target_id)
    paths = active_path_index(session)
    path = paths.entries if target_id == session.leaf_id else session.branch(target_id)
    levels: list[TreeLevel] = []
    parent_id: str | None = None
    step = 0
    while step < len(path):
        rows, branch_list = _display_children(session, paths, parent_id)
        index = next((i for i, entry in enumerate(rows) if entry is path[step]), None)
        if index is None:
            break  # a damaged tree (a cycle): show what was reached
        if not branch_list:  # a run: the path follows it, each of its entries has one child
            advance = min(len(rows) - 1 - index, len(path) - 1 - step)
            step += advance
            index += advance
        last = step == len(path) - 1
        size = limit if last else 1
        start = _centred(index, len(rows), size)
        levels.append(_level(session, paths, parent_id, rows, branch_list, start, size))
        parent_id = path[step].id
        step += 1
    return levels


def tree_node(session: Session, entry: StoredEntry, paths: ActivePathIndex) -> TreeNodeView:
    """One entry as a row, wherever it is (a search result, a new entry)."""
    return _node(session, entry, paths, _is_branch_start(session, entry))


def _level(
    session: Session,
    paths: ActivePathIndex,
    parent_id: str | None,
    rows: list[StoredEntry],
    branch_list: bool,
    start: int,
    limit: int,
) -> TreeLevel:
    shown = rows[start : start + limit]
    return TreeLevel(
        parent_id, len(rows), start, [_node(session, entry, paths, branch_list) for entry in shown]
    )


def _node(
    session: Session, entry: StoredEntry, paths: ActivePathIndex, branch_start: bool
) -> TreeNodeView:
    child_count = session.child_count(entry.id)
    return TreeNodeView(
        row=tree_row(session, entry, session.label_of(entry.id), paths.effects),
        child_count=child_count,
        branch_start=branch_start,
        active=paths.is_active(entry.id),
        expandable=child_count >= 2 or (child_count == 1 and branch_start),
    )


def _centred(index: int, total: int, limit: int) -> int:
    return max(0, min(index - limit // 2, total - limit))


def _display_children(
    session: Session, paths: ActivePathIndex, parent_id: str | None
) -> tuple[list[StoredEntry], bool]:
    """The rows under a node, and whether they are branches (else a run)."""
    if parent_id is None:
        roots = in_display_order(session.root_entries())
        return (_run(session, paths, roots[0]), False) if len(roots) == 1 else (roots, True)
    children = in_display_order(session.children(parent_id))
    if len(children) >= 2:
        return children, True
    parent = session.require_entry(parent_id)
    if len(children) == 1 and _is_branch_start(session, parent):
        return _run(session, paths, children[0]), False
    return [], False


def _is_branch_start(session: Session, entry: StoredEntry) -> bool:
    parent_id: Any = entry.parent_id
    if isinstance(parent_id, str) and parent_id != entry.id and session.get_entry(parent_id):
        return session.child_count(parent_id) >= 2
    return len(session.root_entries()) >= 2


def _run(session: Session, paths: ActivePathIndex, start: StoredEntry) -> list[StoredEntry]:
    """``start`` and the entries that follow it while each has exactly one child.

    A run on the active path is a slice of it, up to the first branch point (found among the
    few entries that have several children); only a run going on past the leaf, or off the
    active path, is walked.
    """
    position = paths.position_of_entry(start)
    if position is not None:
        branch_positions = paths.branch_positions(session.branch_points)
        for index in branch_positions[bisect.bisect_left(branch_positions, position) :]:
            if session.child_count(paths.entries[index].id) >= 2:
                return paths.entries[position : index + 1]
        run = paths.entries[position:]
    else:
        run = [start]
    only_child = session.only_child
    bound = len(session.entries)
    current: StoredEntry | None = only_child(run[-1].id)
    while current is not None and len(run) <= bound:
        run.append(current)
        current = only_child(current.id)
    return run
