"""The two replies whose domain objects are not the protocol's types: how they are shaped.

Most services return the protocol's own types (``protocol.py``), which the handlers answer with
as they are. Two do not: a level of the windowed tree (``session/tree_window.py``) holds tree
nodes, which become rows with their child counts and flags (``agent/tree_changes.py``); and the
resource snapshot holds loaded skills, templates and files, of which ``pi/resources`` sends the
names and paths.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pi_lsp import protocol
from pi_lsp.agent.tree_changes import tree_node_row

if TYPE_CHECKING:
    from pi_lsp.resources.snapshot import ResourceSnapshot
    from pi_lsp.session.tree_window import TreeLevel


def tree_level(level: TreeLevel) -> protocol.TreeLevel:
    return protocol.TreeLevel(
        parent_id=level.parent_id,
        total=level.total,
        offset=level.offset,
        rows=[tree_node_row(node) for node in level.nodes],
    )


def resources_result(
    snapshot: ResourceSnapshot, nested: Sequence[protocol.NestedContextFile] = ()
) -> protocol.ResourcesResult:
    return protocol.ResourcesResult(
        context_files=[item.path for item in snapshot.context_files],
        system_prompt=snapshot.system_prompt.path if snapshot.system_prompt else None,
        append_system_prompt=snapshot.append_system_prompt.path
        if snapshot.append_system_prompt
        else None,
        skills=[
            protocol.Skill(
                name=skill.name,
                description=skill.description,
                path=skill.file_path,
                source=skill.source,
                disable_model_invocation=skill.disable_model_invocation,
            )
            for skill in snapshot.skills
        ],
        templates=[
            protocol.Template(
                name=template.name,
                description=template.description,
                path=template.file_path,
                source=template.source,
            )
            for template in snapshot.templates
        ],
        diagnostics=list(snapshot.diagnostics),
        nested_context_files=list(nested),
    )
