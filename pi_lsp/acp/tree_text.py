"""``/tree`` over ACP: a window of the session tree as text, costing what it shows.

ACP clients show the tree as a chat message, so it is drawn from the same windows the editors'
tree views fetch (``session/tree_window.py``, ``pi/treeWindow``), never the whole tree: the path
from the top down to the target entry (the leaf by default) as one column — the path reads as one
conversation, each branch point on it marked with its number of branches — then the target's
level as a window of rows around it and, when the target has rows under it (its branches, or the
run a branch continues), the first of those, indented. Only the last few levels of the path are
drawn. What is not shown is counted, with the ``/tree <id>`` that shows it: the earlier or later
entries of a run, the other branches at a branch point, the path further up.
"""

from __future__ import annotations

from pi_lsp.session.session import Session
from pi_lsp.session.tree_window import TreeLevel, TreeNodeView, tree_children, tree_levels

TREE_ROWS = 30
"""Rows of the target's level (and of the rows under the target) one ``/tree`` shows."""
PATH_LEVELS = 8
"""Levels above the target's that are drawn (a run and the branch under it are two levels)."""

_EFFECT_TEXT = {"removed": "removed from context", "replaced": "replaced in context"}


def tree_text(session: Session, target_id: str | None = None, limit: int = TREE_ROWS) -> str:
    """The tree around ``target_id`` (default: the leaf), as lines with entry ids."""
    levels = tree_levels(session, target_id, limit)
    target = target_id or session.leaf_id
    name = f" {session.name!r}" if session.name else ""
    drawing = _Drawing(session, limit)
    drawing.lines.append(
        f"session {session.id}{name}: {len(session.entries)} entries "
        "(@ the leaf, * the active path)"
    )
    above, last = levels[:-1], levels[-1]
    if len(above) > PATH_LEVELS:
        drawing.path_further_up(above[:-PATH_LEVELS])
        above = above[-PATH_LEVELS:]
    for level in above:
        drawing.level(level, 0, target=None, expand=True)
    drawing.level(last, 1 if _is_branch_list(last) else 0, target=target, expand=False)
    return "\n".join(drawing.lines)


class _Drawing:
    def __init__(self, session: Session, limit: int) -> None:
        self.session = session
        self.limit = limit
        self.lines: list[str] = []

    def path_further_up(self, folded: list[TreeLevel]) -> None:
        branch_points = sum(1 for level in folded if level.nodes[0].child_count >= 2)
        top = folded[-1].nodes[0].row.id
        self.lines.append(
            f"⋯ the path further up, {_count(branch_points, 'branch point', 'branch points')}: "
            f"/tree {top}"
        )

    def level(self, level: TreeLevel, depth: int, *, target: str | None, expand: bool) -> None:
        """A level's rows; on the path (``expand``) its row's branches are drawn by the next
        level, else the target's rows are drawn under it."""
        self._hidden_before(level, depth)
        for node in level.nodes:
            is_target = node.row.id == target
            self.lines.append(self._row_line(node, depth, shown_below=expand or is_target))
            if is_target and node.expandable:
                under = tree_children(self.session, node.row.id, limit=self.limit)
                self.level(under, depth + 1, target=None, expand=False)
        self._hidden_after(level, depth)

    def _row_line(self, node: TreeNodeView, depth: int, shown_below: bool) -> str:
        row = node.row
        marker = "@" if row.id == self.session.leaf_id else ("*" if node.active else " ")
        label = f" [{row.label}]" if row.label else ""
        effect = f" ({_EFFECT_TEXT[row.context_edit]})" if row.context_edit else ""
        line = f"{marker} {'  ' * depth}{row.id} {row.role or row.type}{label}{effect}: "
        line += row.preview
        if node.child_count >= 2:
            line += f"  ⑂ {node.child_count} branches: /tree {row.id}"
        elif node.expandable and not shown_below:
            line += f"  ▸ continues: /tree {row.id}"
        return line

    def _hidden_before(self, level: TreeLevel, depth: int) -> None:
        if level.offset == 0 or _is_branch_list(level):
            return  # a branch list says what it leaves out once, after its rows
        page_start = max(0, level.offset - self.limit)
        centre = min(level.offset - 1, page_start + self.limit // 2)
        self.lines.append(
            f"  {'  ' * depth}⋯ {_count(level.offset, 'earlier entry', 'earlier entries')}: "
            f"/tree {self._row_id(level.parent_id, centre)}"
        )

    def _hidden_after(self, level: TreeLevel, depth: int) -> None:
        if _is_branch_list(level):
            others = level.total - len(level.nodes)
            where = f": /tree {level.parent_id}" if level.parent_id else ""
            # On the path, the branch point above the list already says how many there are.
            if others > 0 and (depth > 0 or level.parent_id is None):
                what = _count(others, "other branch", "other branches")
                self.lines.append(f"  {'  ' * depth}⋯ {what}{where}")
            return
        shown_end = level.offset + len(level.nodes)
        hidden = level.total - shown_end
        if hidden <= 0:
            return
        centre = min(level.total - 1, shown_end + self.limit // 2)
        self.lines.append(
            f"  {'  ' * depth}⋯ {_count(hidden, 'later entry', 'later entries')}: "
            f"/tree {self._row_id(level.parent_id, centre)}"
        )

    def _row_id(self, parent_id: str | None, index: int) -> str:
        return tree_children(self.session, parent_id, offset=index, limit=1).nodes[0].row.id


def _is_branch_list(level: TreeLevel) -> bool:
    return bool(level.nodes) and level.nodes[0].branch_start


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"
