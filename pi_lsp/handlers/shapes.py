"""Domain objects → the typed wire shapes of ``protocol.py``: how each reply is built.

The services return domain objects (snake_case attrs classes, pi's own records); these functions
shape them into the protocol's result types, which ``protocol.to_json`` puts on the wire. Free of
pygls, so the ``pi-lsp session`` command line prints the same shapes as the server answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pi_lsp import protocol
from pi_lsp.agent.tree_changes import tree_node_row

if TYPE_CHECKING:
    from pi_lsp.agent.file_restore import FilesPreview
    from pi_lsp.resources.snapshot import ResourceSnapshot
    from pi_lsp.session.tree_window import TreeLevel


def tree_level(level: TreeLevel) -> protocol.TreeLevel:
    return protocol.TreeLevel(
        parent_id=level.parent_id,
        total=level.total,
        offset=level.offset,
        rows=[tree_node_row(node) for node in level.nodes],
    )


def file_outcomes(
    files: tuple[protocol.FileOutcome, ...] | None,
) -> list[protocol.FileOutcome] | None:
    if files is None:
        return None
    return list(files)


def file_changes_result(session_id: str, preview: FilesPreview) -> protocol.FileChangesResult:
    return protocol.FileChangesResult(
        session_id=session_id,
        from_id=preview.from_id,
        to_id=preview.to_id,
        files=[
            protocol.FilePreview(
                path=file.outcome.path,
                action=file.outcome.action,
                diff=file.diff,
                reason=file.outcome.reason,
                commands=list(file.commands) or None,
                target_text=file.target_text,
            )
            for file in preview.files
        ],
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
