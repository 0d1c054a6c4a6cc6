"""What the user does in the editor: open documents for the tools, and editor file operations.

The agent's ``read`` sees the unsaved text of open documents, and ``write``/``edit`` on an open
document go through ``workspace/applyEdit`` so the user can undo them (``LspEditorBridge``).
Opening a document counts as reading it and saving a changed document as modifying it; the agent
records both in the session at the next prompt (see ``Agent.note_editor_file_op``).
"""

from __future__ import annotations

import logging
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

logger = logging.getLogger(__name__)


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
            _note(ls, uri, "modified")

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
        changed_since_save.discard(params.text_document.uri)


def _note(ls, uri: str, operation: str) -> None:
    if ls.services is None:
        return
    path = to_fs_path(uri)
    if path:
        ls.services.agent.note_editor_file_op(Path(path), operation)
