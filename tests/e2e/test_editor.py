"""The editor in the loop: unsaved buffers, undoable
edits through workspace/applyEdit, file operations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request
from tests.scripted_llm_fixtures import read_then_edit_app


def open_document(client, path: Path, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(), language_id="python", version=1, text=text
            )
        )
    )


async def test_read_sees_unsaved_text_and_edits_go_through_the_editor(
    client, scripted_llm, workspace
):
    applied: list[types.ApplyWorkspaceEditParams] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    app = workspace / "app.py"
    unsaved = "def add(a, b):\n    return a - b  # unsaved\n"
    open_document(client, app, unsaved)
    scripted_llm.enqueue(*read_then_edit_app("a - b", "a + b", "Done."))
    await request(client, "pi/prompt", {"text": "fix it"})
    read_result = scripted_llm.requests[1]["messages"][-1]
    assert "# unsaved" in json.dumps(read_result)
    [edit] = applied
    change = edit.edit.document_changes[0]
    assert change.text_document.uri == app.as_uri()
    assert change.edits[0].new_text == "def add(a, b):\n    return a + b  # unsaved\n"
    assert (
        app.read_text() == "def add(a, b):\n    return a - b\n"
    )  # the disk is the editor's business now


async def test_files_opened_and_saved_in_the_editor_are_recorded_at_the_next_prompt(
    client, scripted_llm, workspace
):
    readme = workspace / "README.md"
    readme.write_text("# Project\n")
    app = workspace / "app.py"
    open_document(client, readme, "# Project\n")
    open_document(client, app, app.read_text())
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=app.as_uri(), version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="changed\n")],
        )
    )
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=app.as_uri())
        )
    )
    scripted_llm.enqueue(replies.text("Noted."))
    await request(client, "pi/prompt", {"text": "what changed?"})
    [path] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    [file_ops] = [entry for entry in entries if entry["type"] == "custom"]
    assert file_ops["customType"] == "pi-lsp.editor-file-ops"
    assert file_ops["data"] == {"readFiles": ["README.md"], "modifiedFiles": ["app.py"]}
    assert "pi-lsp.editor-file-ops" not in json.dumps(scripted_llm.requests[0]["messages"])


def save_document(client, path: Path, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    path.write_text(text)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri())
        )
    )


@pytest.mark.options(compaction={"keepRecentTokens": 10}, tokenizer="chars4")
async def test_a_compaction_lists_the_editors_files_since_the_last_prompt_and_records_them(
    client, scripted_llm, workspace
):
    scripted_llm.enqueue(replies.text("First answer, long enough to be summarized later on."))
    await request(client, "pi/prompt", {"text": "first question, also long enough to summarize"})
    scripted_llm.enqueue(replies.text("Second answer."))
    await request(client, "pi/prompt", {"text": "second"})
    notes, app = workspace / "notes.md", workspace / "app.py"
    notes.write_text("# Notes\n")
    open_document(client, notes, "# Notes\n")
    open_document(client, app, app.read_text())
    save_document(client, app, "saved in the editor\n")
    [path] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    before = path.read_bytes()

    scripted_llm.enqueue(replies.error(500, "the summary failed"))
    with pytest.raises(JsonRpcException):
        await request(client, "pi/compact", {})
    assert path.read_bytes() == before, "a failed compaction records nothing"

    scripted_llm.enqueue(replies.text("## Goal\nSummarized."))
    result = await request(client, "pi/compact", {})
    assert result["readFiles"] == ["notes.md"] and result["modifiedFiles"] == ["app.py"]
    assert "<read-files>\nnotes.md\n</read-files>" in result["summary"]
    entries = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    record = entries[-1]
    assert record["customType"] == "pi-lsp.editor-file-ops"
    assert record["data"] == {"readFiles": ["notes.md"], "modifiedFiles": ["app.py"]}
    assert record["parentId"] == result["entryId"]
