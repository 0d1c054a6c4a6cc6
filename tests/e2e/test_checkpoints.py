"""File checkpoints end to end: the real server, the scripted model, and a client that either
leaves the files to the server (no resource operations) or applies them as an editor would, in
one ``workspace/applyEdit``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import SCRIPTED_MODEL, another_server, request

TWO_TURNS = (
    replies.tool_calls(
        [("c1", "edit", {"path": "a.txt", "edits": [{"oldText": "one", "newText": "two"}]})]
    ),
    replies.text("Turn one done."),
    replies.tool_calls(
        [
            ("c2", "write", {"path": "sub/new.txt", "content": "new\n"}),
            ("c3", "edit", {"path": "a.txt", "edits": [{"oldText": "two", "newText": "three"}]}),
        ]
    ),
    replies.text("Turn two done."),
)


async def two_turns(client, scripted_llm, workspace: Path) -> dict[str, str]:
    (workspace / "a.txt").write_text("one\n")
    scripted_llm.enqueue(*TWO_TURNS)
    await request(client, "pi/prompt", {"text": "turn one"})
    await request(client, "pi/prompt", {"text": "turn two"})
    tree = await request(client, "pi/tree", {})
    users = [e["id"] for e in tree["entries"] if e.get("role") == "user"]
    return {"before_one": users[0], "before_two": users[1], "leaf": tree["leafId"]}


def files_of(workspace: Path) -> dict[str, str]:
    return {
        path.relative_to(workspace).as_posix(): path.read_text()
        for path in sorted(workspace.rglob("*.txt"))
        if ".pi" not in path.parts
    }


def actions(result: dict) -> dict[str, str]:
    return {Path(file["path"]).name: file["action"] for file in result["files"]}


async def test_two_turns_back_back_and_forward_with_the_files(client, scripted_llm, workspace):
    ids = await two_turns(client, scripted_llm, workspace)
    assert files_of(workspace) == {"a.txt": "three\n", "sub/new.txt": "new\n"}

    preview = await request(client, "pi/fileChanges", {"toId": ids["before_two"]})
    assert [(Path(f["path"]).name, f["action"]) for f in preview["files"]] == [
        ("a.txt", "restored"),
        ("new.txt", "deleted"),
    ]
    assert preview["files"][0]["diff"] == "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-three\n+two\n"
    assert files_of(workspace) == {"a.txt": "three\n", "sub/new.txt": "new\n"}  # untouched

    back = await request(
        client, "pi/navigate", {"targetId": ids["before_two"], "restoreFiles": True}
    )
    assert back["editorText"] == "turn two" and actions(back) == {
        "a.txt": "restored",
        "new.txt": "deleted",
    }
    assert files_of(workspace) == {"a.txt": "two\n"}

    back = await request(
        client, "pi/navigate", {"targetId": ids["before_one"], "restoreFiles": True}
    )
    assert actions(back) == {"a.txt": "restored"}
    assert files_of(workspace) == {"a.txt": "one\n"}

    forward = await request(client, "pi/navigate", {"targetId": ids["leaf"], "restoreFiles": True})
    assert forward["leafId"] == ids["leaf"]
    assert actions(forward) == {"a.txt": "restored", "new.txt": "created"}
    assert files_of(workspace) == {"a.txt": "three\n", "sub/new.txt": "new\n"}

    plain = await request(client, "pi/navigate", {"targetId": ids["before_one"]})
    assert "files" not in plain and files_of(workspace)["a.txt"] == "three\n"


async def test_the_session_file_holds_paths_and_hashes_only(client, scripted_llm, workspace):
    await two_turns(client, scripted_llm, workspace)
    [path] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    checkpoints = [e["data"] for e in entries if e.get("customType") == "pi-lsp.checkpoint"]
    assert [[f["path"] for f in data["files"]] for data in checkpoints] == [
        ["a.txt"],
        ["sub/new.txt"],
        ["a.txt"],
    ]
    for data in checkpoints:  # contents live in the store, by hash
        for file in data["files"]:
            assert set(file) == {"path", "before", "after"}
            assert all(h is None or len(h) == 64 for h in (file["before"], file["after"]))
    store = workspace / ".pi" / "sessions" / ".checkpoints" / "objects"
    assert len(list(store.rglob("*"))) - len(list(store.iterdir())) == 4  # one, two, three, new


async def test_a_user_edit_after_the_agents_is_a_conflict_and_stays(
    client, scripted_llm, workspace
):
    ids = await two_turns(client, scripted_llm, workspace)
    a_txt = workspace / "a.txt"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=a_txt.as_uri(), language_id="text", version=1, text="three\nmine, unsaved\n"
            )
        )
    )
    preview = await request(client, "pi/fileChanges", {"toId": ids["before_one"]})
    file = preview["files"][0]
    assert Path(file["path"]).name == "a.txt"
    assert file["action"] == "conflict" and "by you or a command" in file["reason"]
    assert "-mine, unsaved" in file["diff"]  # what force would overwrite
    result = await request(
        client, "pi/navigate", {"targetId": ids["before_one"], "restoreFiles": True}
    )
    assert actions(result) == {"a.txt": "conflict", "new.txt": "deleted"}
    assert a_txt.read_text() == "three\n"


async def test_a_fork_with_the_files_and_no_entry_forks_at_the_leaf(
    client, scripted_llm, workspace
):
    ids = await two_turns(client, scripted_llm, workspace)
    source = (await request(client, "pi/state", {}))["sessionId"]
    fork = await request(client, "pi/fork", {"restoreFiles": True, "force": True})
    assert fork["parentSessionId"] == source and fork["leafId"] == ids["leaf"]
    assert fork["files"] == []  # the files are already as the agent left them at the leaf
    assert files_of(workspace) == {"a.txt": "three\n", "sub/new.txt": "new\n"}
    back = await request(
        client, "pi/navigate", {"targetId": ids["before_two"], "restoreFiles": True}
    )
    assert actions(back) == {"a.txt": "restored", "new.txt": "deleted"}  # the fork's checkpoints
    assert files_of(workspace) == {"a.txt": "two\n"}


async def test_bad_restore_params_are_invalid_params(client, scripted_llm, workspace):
    ids = await two_turns(client, scripted_llm, workspace)
    with pytest.raises(JsonRpcException, match=r"restoreFiles") as raised:
        await request(client, "pi/navigate", {"targetId": ids["leaf"], "restoreFiles": "yes"})
    assert raised.value.code == -32602
    with pytest.raises(JsonRpcException, match=r"toId"):
        await request(client, "pi/fileChanges", {})
    with pytest.raises(JsonRpcException, match="not found") as raised:
        await request(client, "pi/fileChanges", {"toId": "deadbeef"})
    assert raised.value.code == -32002


# ------------------------------------------------------------------------- an editor applies them

EDITOR = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(
        apply_edit=True,
        workspace_edit=types.WorkspaceEditClientCapabilities(
            document_changes=True,
            resource_operations=[
                types.ResourceOperationKind.Create,
                types.ResourceOperationKind.Rename,
                types.ResourceOperationKind.Delete,
            ],
        ),
    )
)


def editor_options(scripted_llm) -> dict:
    return {"model": SCRIPTED_MODEL, "apiBase": scripted_llm.base_url, "autoName": False}


def apply_and_save(editor, edit: types.WorkspaceEdit, open_documents: dict[str, int]) -> None:
    """What an editor does with a restore (and a save after it): files created, replaced
    (open documents told to the server), deleted."""
    for change in edit.document_changes:
        kind = getattr(change, "kind", None)
        if kind == "create":
            Path(change.uri.removeprefix("file://")).write_text("")
        elif kind == "delete":
            Path(change.uri.removeprefix("file://")).unlink()
        else:
            uri, text = change.text_document.uri, change.edits[0].new_text
            Path(uri.removeprefix("file://")).write_text(text)
            if uri in open_documents:
                open_documents[uri] += 1
                editor.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        text_document=types.VersionedTextDocumentIdentifier(
                            uri=uri, version=open_documents[uri]
                        ),
                        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                    )
                )


async def test_an_open_document_is_restored_through_one_apply_edit(scripted_llm, workspace):
    applied: list[types.ApplyWorkspaceEditParams] = []
    disk_when_asked: list[dict] = []
    open_documents: dict[str, int] = {}

    def setup(editor) -> None:
        @editor.feature(types.WORKSPACE_APPLY_EDIT)
        def on_apply_edit(params):
            applied.append(params)
            disk_when_asked.append(files_of(workspace))
            apply_and_save(editor, params.edit, open_documents)
            return types.ApplyWorkspaceEditResult(applied=True)

    async with another_server(
        workspace, editor_options(scripted_llm), capabilities=EDITOR, setup=setup
    ) as editor:
        ids = await two_turns(editor, scripted_llm, workspace)
        applied.clear()
        a_txt, new_txt = workspace / "a.txt", workspace / "sub" / "new.txt"
        open_documents[a_txt.as_uri()] = 7
        editor.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=a_txt.as_uri(), language_id="text", version=7, text="three\n"
                )
            )
        )
        result = await request(
            editor, "pi/navigate", {"targetId": ids["before_one"], "restoreFiles": True}
        )
        assert actions(result) == {"a.txt": "restored", "new.txt": "deleted"}
        [params] = applied
        changes = params.edit.document_changes
        assert params.label.startswith("pi: restore files to ")
        text_edit, delete = changes
        assert text_edit.text_document.uri == a_txt.as_uri()
        assert text_edit.text_document.version == 7  # the open document's version
        assert text_edit.edits[0].new_text == "one\n"
        end = text_edit.edits[0].range.end
        assert (end.line, end.character) == (1, 0)
        assert delete.kind == "delete" and delete.uri == new_txt.as_uri()
        # The editor applies it; the server did not write the disk itself.
        assert disk_when_asked[-1] == {"a.txt": "three\n", "sub/new.txt": "new\n"}
        assert files_of(workspace) == {"a.txt": "one\n"}

        # Forward again: the created file comes back as a creation plus its text.
        applied.clear()
        forward = await request(
            editor, "pi/navigate", {"targetId": ids["leaf"], "restoreFiles": True}
        )
        assert actions(forward) == {"a.txt": "restored", "new.txt": "created"}
        [params] = applied
        kinds = [getattr(change, "kind", "edit") for change in params.edit.document_changes]
        assert kinds == ["edit", "create", "edit"]
        assert params.edit.document_changes[0].text_document.version == 8
        assert files_of(workspace) == {"a.txt": "three\n", "sub/new.txt": "new\n"}

        # Saving what a restore put into a document is not the user modifying it.
        editor.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=a_txt.as_uri())
            )
        )
        scripted_llm.enqueue(replies.text("Fine."))
        await request(editor, "pi/prompt", {"text": "and now?"})
        [path] = (workspace / ".pi" / "sessions").glob("*.jsonl")
        entries = [json.loads(line) for line in path.read_text().splitlines()]
        file_ops = [e["data"] for e in entries if e.get("customType") == "pi-lsp.editor-file-ops"]
        assert file_ops == [{"readFiles": ["a.txt"], "modifiedFiles": []}]


async def test_a_refused_apply_edit_changes_nothing_and_says_so(scripted_llm, workspace):
    def setup(editor) -> None:
        @editor.feature(types.WORKSPACE_APPLY_EDIT)
        def on_apply_edit(params):
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="the user said no")

    async with another_server(
        workspace, editor_options(scripted_llm), capabilities=EDITOR, setup=setup
    ) as editor:
        ids = await two_turns(editor, scripted_llm, workspace)
        with pytest.raises(JsonRpcException, match="the user said no") as raised:
            await request(
                editor, "pi/navigate", {"targetId": ids["before_one"], "restoreFiles": True}
            )
        assert raised.value.code == -32014 and "nothing was changed" in raised.value.message
        state = await request(editor, "pi/state", {})
        assert state["leafId"] == ids["leaf"] and not state["isCompacting"]
        assert files_of(workspace) == {"a.txt": "three\n", "sub/new.txt": "new\n"}
