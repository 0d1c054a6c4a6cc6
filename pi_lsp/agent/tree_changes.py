"""What changed in a session's tree since the last ``tree_changed`` event, and its version.

Each change of the tree or the leaf (a turn's entries, a navigation, a label, a name) is
announced once with a version one above the previous one. The event carries the entries added
since the previous announcement (as rows of the windowed tree), the labels they set or cleared,
the leaf and the name, so an editor patches its view instead of fetching the tree again; a client
that sees a version gap missed an event and fetches a window again (``pi/treeWindow`` answers
with the current version). Working out a change costs the entries added, not the session.
"""

from __future__ import annotations

from pi_lsp.protocol import ContextEditEffect, TreeChangedEvent, TreeNodeRow
from pi_lsp.session.path_index import active_path_index
from pi_lsp.session.projection import effect_name
from pi_lsp.session.session import Session
from pi_lsp.session.tree_window import TreeNodeView, tree_node


class TreeChanges:
    """The tree version of one session and the entries not yet announced."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.version = 0
        self._announced = len(session.entries)

    def next_event(self) -> TreeChangedEvent:
        """The event announcing everything that changed since the previous one."""
        session = self.session
        added = session.entries[self._announced :]
        self._announced = len(session.entries)
        self.version += 1
        paths = active_path_index(session)
        labels: dict[str, str | None] = {}
        edited: dict[str, ContextEditEffect | None] = {}
        for entry in added:
            target = entry.get("targetId") if entry.type in ("label", "context_edit") else None
            if not isinstance(target, str):
                continue
            if entry.type == "label":
                labels[target] = session.label_of(target)
            else:
                effect = paths.effects.get(target)
                edited[target] = effect_name(effect) if effect is not None else None
        return TreeChangedEvent(
            leaf_id=session.leaf_id,
            version=self.version,
            entries=[tree_node_row(tree_node(session, entry, paths)) for entry in added],
            labels=labels,
            name=session.name,
            context_edits=edited,
        )


def tree_node_row(node: TreeNodeView) -> TreeNodeRow:
    """A row of the windowed tree in its wire shape."""
    row = node.row
    return TreeNodeRow(
        id=row.id,
        parent_id=row.parent_id,
        type=row.type,
        preview=row.preview,
        timestamp=row.timestamp,
        child_count=node.child_count,
        branch_start=node.branch_start,
        active=node.active,
        expandable=node.expandable,
        role=row.role,
        label=row.label,
        context_edit=row.context_edit,
    )
