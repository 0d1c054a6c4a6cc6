"""What the user does in the editor: open documents for the tools, and editor file operations.

The agent's ``read`` sees the unsaved text of open documents, and ``write``/``edit`` on an open
document go through ``workspace/applyEdit`` so the user can undo them (``LspEditorBridge``).
Restores of files (navigation with ``restoreFiles``) go through it too, as one workspace edit
with file creations and deletions, when the client supports those resource operations.
Opening a document counts as reading it and saving a changed document as modifying it; the agent
records both in the session at the next prompt (see ``Agent.note_editor_file_op``), except the
save of a document a restore just changed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from pi_lsp.tools.base import AppliedEdits, FileEdit

logger = logging.getLogger(__name__)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
RESOURCE_OPERATIONS_NEEDED = {
    types.ResourceOperationKind.Create,
    types.ResourceOperationKind.Delete,
}


class LspEditorBridge:
    """The tools' view of the editor, through the LSP connection."""

    def __init__(self, server) -> None:
        self._server = server

    def open_document_text(self, path: Path) -> str | None:
        document = self._server.workspace.text_documents.get(from_fs_path(str(path)))
        return None if document is None else document.source

    async def apply_edit(self, path: Path, new_text: str) -> bool:
        uri = from_fs_path(str(path))
        document = self._server.workspace.text_documents.get(uri)
        if document is None:
            return False
        lines = document.lines
        end = types.Position(line=len(lines), character=0)
        edit = types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=document.version
                    ),
                    edits=[
                        types.TextEdit(
                            range=types.Range(start=types.Position(line=0, character=0), end=end),
                            new_text=new_text,
                        )
                    ],
                )
            ]
        )
        try:
            result = await self._server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label="pi: agent edit")
            )
        except Exception:
            logger.exception("workspace/applyEdit failed for %s", path)
            return False
        return bool(result.applied)

    def supports_file_edits(self) -> bool:
        """Whether the client applies workspace edits that create and delete files."""
        workspace = self._server.client_capabilities.workspace
        if workspace is None or not workspace.apply_edit or workspace.workspace_edit is None:
            return False
        offered = set(workspace.workspace_edit.resource_operations or ())
        return offered >= RESOURCE_OPERATIONS_NEEDED

    async def apply_file_edits(self, edits: Sequence[FileEdit], label: str) -> AppliedEdits | None:
        if not self.supports_file_edits():
            return None
        changes = [change for edit in edits for change in self._document_changes(edit)]
        try:
            result = await self._server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(
                    edit=types.WorkspaceEdit(document_changes=changes), label=label
                )
            )
        except Exception as error:
            logger.exception("workspace/applyEdit of %d files failed", len(edits))
            return AppliedEdits(False, f"the edit failed: {error}")
        return AppliedEdits(bool(result.applied), result.failure_reason)

    def _document_changes(self, edit: FileEdit) -> list:
        uri = from_fs_path(str(edit.path)) or edit.path.as_uri()
        if edit.kind == "delete":
            return [
                types.DeleteFile(
                    uri=uri, options=types.DeleteFileOptions(ignore_if_not_exists=True)
                )
            ]
        document = self._server.workspace.text_documents.get(uri)
        if edit.kind == "create":
            changes: list = [
                types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=True))
            ]
            current, version = "", None
        else:
            changes = []
            current = document.source if document is not None else edit.current_text or ""
            version = document.version if document is not None else None
        end = self._end_of(current)
        changes.append(
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=version
                ),
                edits=[
                    types.TextEdit(
                        range=types.Range(start=types.Position(line=0, character=0), end=end),
                        new_text=edit.text or "",
                    )
                ],
            )
        )
        return changes

    def _end_of(self, text: str) -> types.Position:
        """The position right after the last character of ``text``, in the client's units.

        An empty document still has one (empty) line in most editors, and Neovim adds a line
        break to a whole-buffer replacement unless its range goes past the last line: its end
        is the start of the line after (clients clamp positions beyond the end).
        """
        if not text:
            return types.Position(line=1, character=0)
        breaks = list(_LINE_BREAK.finditer(text))
        last_line = text[breaks[-1].end() :] if breaks else text
        units = self._server.workspace.position_codec.client_num_units(last_line)
        return types.Position(line=len(breaks), character=units)


def register(server) -> None:
    changed_since_save: set[str] = set()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
        _note(ls, params.text_document.uri, "read")

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
        changed_since_save.add(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_did_save(ls, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in changed_since_save:
            changed_since_save.discard(uri)
            if not _saves_a_restore(ls, uri):
                _note(ls, uri, "modified")

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
        changed_since_save.discard(params.text_document.uri)


def _saves_a_restore(ls, uri: str) -> bool:
    """Whether this save only writes what a restore put into the document (not a user edit)."""
    document = ls.workspace.text_documents.get(uri)
    path = to_fs_path(uri)
    if ls.services is None or document is None or not path:
        return False
    return ls.services.files.is_restore_save(Path(path), document.source)


def _note(ls, uri: str, operation: str) -> None:
    if ls.services is None:
        return
    path = to_fs_path(uri)
    if path:
        ls.services.agent.note_editor_file_op(Path(path), operation)
