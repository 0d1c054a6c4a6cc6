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
    from pi_lsp.agent.compactor import CompactionResult
    from pi_lsp.agent.file_restore import FilesPreview
    from pi_lsp.llm.catalog import CatalogEntry, ProviderStatus
    from pi_lsp.resources.snapshot import ResourceChanges, ResourceSnapshot
    from pi_lsp.session.listing import SessionInfo
    from pi_lsp.session.transcript import Transcript
    from pi_lsp.session.tree_view import TreeView
    from pi_lsp.session.tree_window import TreeLevel


def tree_result(session_id: str, view: TreeView) -> protocol.TreeResult:
    return protocol.TreeResult(
        session_id=session_id,
        leaf_id=view.leaf_id,
        name=view.name,
        labels=view.labels,
        active_path=view.active_path,
        roots=view.roots,
        children=view.children,
        entries=view.rows,
    )


def tree_level(level: TreeLevel) -> protocol.TreeLevel:
    return protocol.TreeLevel(
        parent_id=level.parent_id,
        total=level.total,
        offset=level.offset,
        rows=[tree_node_row(node) for node in level.nodes],
    )


def messages_result(session_id: str, transcript: Transcript) -> protocol.MessagesResult:
    return protocol.MessagesResult(
        session_id=session_id,
        leaf_id=transcript.leaf_id,
        total=transcript.total,
        offset=transcript.offset,
        entries=transcript.items,
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


def session_info(info: SessionInfo) -> protocol.SessionInfo:
    return protocol.SessionInfo(
        path=info.path,
        id=info.id,
        cwd=info.cwd,
        name=info.name,
        parent_session_path=info.parent_session_path,
        created=info.created,
        modified=info.modified,
        message_count=info.message_count,
        first_message=info.first_message,
    )


def compact_result(session_id: str, result: CompactionResult) -> protocol.CompactResult:
    return protocol.CompactResult(
        session_id=session_id,
        entry_id=result.entry_id,
        summary=result.summary,
        first_kept_entry_id=result.first_kept_entry_id,
        tokens_before=result.tokens_before,
        read_files=result.read_files,
        modified_files=result.modified_files,
        reason=result.reason,  # type: ignore[arg-type]
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
        diagnostics=[
            protocol.ResourceDiagnostic(item.path, item.line, item.message, item.severity)
            for item in snapshot.diagnostics
        ],
        nested_context_files=[*nested],
    )


def resources_changed(changes: ResourceChanges) -> protocol.ResourcesChanged:
    def refs(items) -> list[protocol.ResourceChange]:
        return [protocol.ResourceChange(ref.kind, ref.name, ref.path) for ref in items]

    return protocol.ResourcesChanged(
        added=refs(changes.added), changed=refs(changes.changed), removed=refs(changes.removed)
    )


def model_info(entry: CatalogEntry) -> protocol.ModelInfo:
    return protocol.ModelInfo(
        model=entry.model,
        provider=entry.provider,
        model_id=entry.model_id,
        name=entry.name,
        context_window=entry.context_window,
        available=entry.available,
        key_source=entry.credentials,
        source=entry.source,  # type: ignore[arg-type]
    )


def provider_info(status: ProviderStatus) -> protocol.ProviderInfo:
    return protocol.ProviderInfo(
        provider=status.provider,
        key_source=status.credentials,
        key_variable=status.key_variable,
        subscription=status.oauth,
        local=status.local,
    )
