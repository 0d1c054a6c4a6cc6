"""File checkpoints through the agent's services, in process: the agent's changes are recorded,
and navigating (or forking) with ``restore_files`` takes the files along — on the disk, or through
an editor as one edit — without ever destroying what someone else changed since."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pi_lsp.checkpoints.records import CHECKPOINT_TYPE
from pi_lsp.errors import FilesNotRestoredError, SessionReadOnlyError
from pi_lsp.llm.double import replies
from pi_lsp.tools.base import AppliedEdits, FileEdit


def edit(call_id: str, path: str, old: str, new: str):
    return (call_id, "edit", {"path": path, "edits": [{"oldText": old, "newText": new}]})


def write(call_id: str, path: str, content: str):
    return (call_id, "write", {"path": path, "content": content})


async def two_turns(agent) -> dict[str, str]:
    """Turn one edits a.txt; turn two creates sub/new.txt and edits a.txt again. The ids to
    navigate to: before each turn (its user message) and the leaf after both."""
    (agent.workspace / "a.txt").write_text("one\n")
    agent.model.script(
        replies.tool_calls([edit("c1", "a.txt", "one", "two")]),
        replies.text("Turn one done."),
        replies.tool_calls(
            [write("c2", "sub/new.txt", "new\n"), edit("c3", "a.txt", "two", "three")]
        ),
        replies.text("Turn two done."),
    )
    await agent.prompt("turn one")
    await agent.prompt("turn two")
    users = [
        e.id for e in agent.runtime.session.branch() if e.type == "message" and e.role == "user"
    ]
    return {"before_one": users[0], "before_two": users[1], "leaf": agent.runtime.session.leaf_id}


def files_of(workspace: Path) -> dict[str, str]:
    return {
        path.relative_to(workspace).as_posix(): path.read_text()
        for path in sorted(workspace.rglob("*.txt"))
        if ".pi" not in path.parts
    }


def actions(result) -> dict[str, tuple]:
    return {Path(file.path).name: (file.action, file.reason) for file in result.files}


async def navigate(agent, target_id: str, **options):
    return await agent.services.navigator.navigate(
        agent.runtime, target_id, restore_files=True, **options
    )


async def test_the_files_follow_the_leaf_back_and_forward(agent):
    ids = await two_turns(agent)
    workspace = agent.workspace
    assert files_of(workspace) == {"a.txt": "three\n", "sub/new.txt": "new\n"}

    back_one = await navigate(agent, ids["before_two"])
    assert files_of(workspace) == {"a.txt": "two\n"}
    assert actions(back_one) == {"a.txt": ("restored", None), "new.txt": ("deleted", None)}
    assert back_one.editor_text == "turn two"

    back_two = await navigate(agent, ids["before_one"])
    assert files_of(workspace) == {"a.txt": "one\n"}
    assert actions(back_two) == {"a.txt": ("restored", None)}

    forward = await navigate(agent, ids["leaf"])
    assert files_of(workspace) == {"a.txt": "three\n", "sub/new.txt": "new\n"}
    assert actions(forward) == {"a.txt": ("restored", None), "new.txt": ("created", None)}
    assert agent.runtime.session.leaf_id == ids["leaf"]


async def test_each_change_is_a_checkpoint_entry_right_before_its_tool_result(agent):
    await two_turns(agent)
    path = agent.runtime.session.branch()
    kinds = [
        entry.get("customType") if entry.type == "custom" else entry["message"]["role"]
        for entry in path
        if entry.type in ("custom", "message")
    ]
    assert kinds == [
        "user", "assistant", CHECKPOINT_TYPE, "toolResult", "assistant",
        "user", "assistant", CHECKPOINT_TYPE, "toolResult", CHECKPOINT_TYPE, "toolResult",
        "assistant",
    ]  # fmt: skip
    checkpoints = [entry["data"] for entry in path if entry.type == "custom"]
    assert checkpoints[1]["toolName"] == "write" and checkpoints[1]["toolCallId"] == "c2"
    assert checkpoints[1]["files"][0]["path"] == "sub/new.txt"
    assert checkpoints[1]["files"][0]["before"] is None
    # The model never sees them.
    assert CHECKPOINT_TYPE not in json.dumps(agent.model.requests[-1].messages)


async def test_without_restore_files_nothing_changes_on_disk(agent):
    ids = await two_turns(agent)
    result = await agent.services.navigator.navigate(agent.runtime, ids["before_one"])
    assert result.files is None
    assert files_of(agent.workspace) == {"a.txt": "three\n", "sub/new.txt": "new\n"}


async def test_a_user_edit_after_the_agents_is_a_conflict_and_stays(agent):
    ids = await two_turns(agent)
    (agent.workspace / "a.txt").write_text("three\nmine\n")
    result = await navigate(agent, ids["before_two"])
    assert actions(result)["a.txt"][0] == "conflict"
    assert "changed since pi-lsp last wrote it" in actions(result)["a.txt"][1]
    assert files_of(agent.workspace) == {"a.txt": "three\nmine\n"}  # new.txt was deleted

    # With force it is overwritten, and going back where we came from brings the user's text back.
    forced = await navigate(agent, ids["before_one"], force=True)
    assert actions(forced)["a.txt"][0] == "restored" and "overwrote" in actions(forced)["a.txt"][1]
    assert files_of(agent.workspace) == {"a.txt": "one\n"}
    back = await navigate(agent, ids["before_two"])
    assert files_of(agent.workspace)["a.txt"] == "three\nmine\n"
    assert actions(back)["a.txt"] == ("restored", None)


async def test_going_back_after_an_undo_in_the_editor_is_no_conflict(agent):
    ids = await two_turns(agent)
    await navigate(agent, ids["before_two"])
    (agent.workspace / "a.txt").write_text("three\n")  # what the restore replaced, as an undo
    result = await navigate(agent, ids["before_one"])
    assert actions(result)["a.txt"][0] == "restored"
    assert files_of(agent.workspace) == {"a.txt": "one\n"}


async def test_the_preview_shows_diffs_and_touches_nothing(agent):
    ids = await two_turns(agent)
    preview = await agent.services.navigator.file_changes(agent.runtime, ids["before_two"])
    assert preview.to_id == agent.runtime.session.get_entry(ids["before_two"]).parent_id
    by_name = {Path(file.path).name: file for file in preview.files}
    assert by_name["a.txt"].diff == "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-three\n+two\n"
    assert by_name["new.txt"].action == "deleted"
    assert by_name["new.txt"].diff.startswith("--- a/sub/new.txt\n+++ /dev/null\n")
    assert by_name["a.txt"].target_text is None
    assert files_of(agent.workspace) == {"a.txt": "three\n", "sub/new.txt": "new\n"}
    with_text = await agent.services.navigator.file_changes(
        agent.runtime, ids["before_one"], include_text=True
    )
    assert [file.target_text for file in with_text.files] == ["one\n", None]
    between = await agent.services.navigator.file_changes(
        agent.runtime, ids["before_one"], ids["before_two"]
    )
    assert [(Path(f.path).name, f.diff) for f in between.files] == [
        ("a.txt", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-two\n+one\n")
    ]


async def test_the_preview_marks_files_a_command_named(agent):
    (agent.workspace / "a.txt").write_text("one\n")
    agent.model.script(
        replies.tool_calls([edit("c1", "a.txt", "one", "two")]),
        replies.tool_calls([("c2", "bash", {"command": "echo more >> a.txt"})]),
        replies.text("Done."),
    )
    await agent.prompt("change it")
    [user] = [
        e.id for e in agent.runtime.session.branch() if e.type == "message" and e.role == "user"
    ]
    preview = await agent.services.navigator.file_changes(agent.runtime, user)
    [file] = preview.files
    # The command changed the file after the agent's edit: pi-lsp did not see it, so it is a
    # conflict, and the preview says which command it was.
    assert file.commands == ["echo more >> a.txt"]
    assert file.action == "conflict"


async def test_binary_and_oversized_files_are_reported_not_restorable(make_agent):
    agent = make_agent(options={"checkpoints": {"maxFileSizeMb": 0.00005}})  # 50 bytes
    (agent.workspace / "logo.txt").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    (agent.workspace / "big.txt").write_text("x" * 60)
    agent.model.script(
        replies.tool_calls(
            [write("c1", "logo.txt", "not an image\n"), write("c2", "big.txt", "small now\n")]
        ),
        replies.text("Done."),
    )
    await agent.prompt("overwrite them")
    data = [e["data"] for e in agent.runtime.session.branch() if e.type == "custom"]
    assert [item["files"] for item in data] == [
        [{"path": "logo.txt", "unrestorable": "binary content"}],
        [{"path": "big.txt", "unrestorable": "larger than 5e-05 MB"}],
    ]
    [user] = [
        e.id for e in agent.runtime.session.branch() if e.type == "message" and e.role == "user"
    ]
    result = await navigate(agent, user)
    assert actions(result) == {
        "big.txt": ("skipped", "not restorable: larger than 5e-05 MB"),
        "logo.txt": ("skipped", "not restorable: binary content"),
    }
    assert (agent.workspace / "logo.txt").read_text() == "not an image\n"


@contextlib.contextmanager
def read_only(path: Path):
    """``path`` cannot be written by this process, root included (chattr +i)."""
    if os.geteuid() == 0:
        if (
            not shutil.which("chattr")
            or subprocess.run(
                ["chattr", "+i", str(path)], check=False, capture_output=True
            ).returncode
        ):
            pytest.skip("cannot make a file read-only for root here")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(0o644)


async def test_a_file_that_cannot_be_written_is_reported(agent):
    ids = await two_turns(agent)
    with read_only(agent.workspace / "a.txt"):
        result = await navigate(agent, ids["before_two"])
    assert actions(result) == {
        "a.txt": ("skipped", "permission denied"),
        "new.txt": ("deleted", None),
    }
    assert (agent.workspace / "a.txt").read_text() == "three\n"


async def test_fork_with_files(agent):
    ids = await two_turns(agent)
    first_answer = agent.runtime.session.get_entry(ids["before_two"]).parent_id
    source = agent.runtime
    outcome = await agent.services.navigator.fork(source, first_answer, restore_files=True)
    assert outcome.runtime.id != source.id and outcome.runtime.session.leaf_id == first_answer
    assert files_of(agent.workspace) == {"a.txt": "two\n"}
    assert {Path(file.path).name: file.action for file in outcome.files} == {
        "a.txt": "restored",
        "new.txt": "deleted",
    }


async def test_checkpoints_can_be_switched_off(make_agent):
    agent = make_agent(options={"checkpoints": {"enabled": False}})
    await two_turns(agent)
    assert not any(entry.type == "custom" for entry in agent.runtime.session.entries)
    assert not (agent.workspace / ".pi" / "sessions" / ".checkpoints").exists()


async def test_restoring_needs_a_session_this_server_writes(agent):
    ids = await two_turns(agent)
    agent.runtime.read_only_reason = "another process writes it"
    with pytest.raises(SessionReadOnlyError):
        await navigate(agent, ids["before_one"])
    assert files_of(agent.workspace)["a.txt"] == "three\n"


# ------------------------------------------------------------------------------- through an editor


class Editor:
    """An editor with open documents that applies multi-file edits (or refuses them)."""

    def __init__(self, *, supports_file_edits: bool = True, refuse: str | None = None) -> None:
        self.documents: dict[Path, str] = {}
        self.applied: list[tuple[list[FileEdit], str]] = []
        self.supports_file_edits = supports_file_edits
        self.refuse = refuse

    def open_document_text(self, path: Path) -> str | None:
        return self.documents.get(path)

    async def apply_edit(self, path: Path, new_text: str) -> bool:
        if path not in self.documents:
            return False
        self.documents[path] = new_text
        return True

    async def apply_file_edits(self, edits, label):
        if not self.supports_file_edits:
            return None
        self.applied.append((list(edits), label))
        if self.refuse:
            return AppliedEdits(False, self.refuse)
        for item in edits:
            if item.kind == "delete":
                self.documents.pop(item.path, None)
                item.path.unlink()
            else:
                if item.kind == "create":
                    item.path.parent.mkdir(parents=True, exist_ok=True)
                    item.path.write_text("")
                self.documents[item.path] = item.text  # unsaved, as an editor leaves it
        return AppliedEdits(True)


async def test_an_editor_applies_the_whole_restore_as_one_edit(make_agent):
    editor = Editor()
    agent = make_agent(editor=editor)
    ids = await two_turns(agent)
    a_txt, new_txt = agent.workspace / "a.txt", agent.workspace / "sub" / "new.txt"
    editor.documents[a_txt] = "three\n"  # open, unchanged
    result = await navigate(agent, ids["before_two"])
    [(edits, label)] = editor.applied
    assert label == f"pi: restore files to {agent.runtime.session.leaf_id}"
    assert [(item.path, item.kind, item.text, item.current_text) for item in edits] == [
        (a_txt, "replace", "two\n", "three\n"),
        (new_txt, "delete", None, None),
    ]
    assert editor.documents[a_txt] == "two\n"
    assert a_txt.read_text() == "three\n"  # the server left the disk to the editor
    assert actions(result) == {"a.txt": ("restored", None), "new.txt": ("deleted", None)}
    # Saving what the restore put into the buffer is not a user's modification.
    assert agent.services.files.is_restore_save(a_txt, "two\n")
    assert not agent.services.files.is_restore_save(a_txt, "two\n")

    forward = await navigate(agent, ids["leaf"])
    edits, _ = editor.applied[-1]
    assert [(item.path, item.kind, item.text) for item in edits] == [
        (a_txt, "replace", "three\n"),
        (new_txt, "create", "new\n"),
    ]
    assert actions(forward) == {"a.txt": ("restored", None), "new.txt": ("created", None)}


async def test_unsaved_editor_text_is_what_the_conflict_check_sees(make_agent):
    editor = Editor()
    agent = make_agent(editor=editor)
    ids = await two_turns(agent)
    editor.documents[agent.workspace / "a.txt"] = "three\nunsaved\n"
    result = await navigate(agent, ids["before_two"])
    assert actions(result)["a.txt"][0] == "conflict"
    [(edits, _)] = editor.applied
    assert [item.kind for item in edits] == ["delete"]


async def test_a_refused_edit_changes_nothing_and_says_so(make_agent):
    editor = Editor(refuse="the user cancelled")
    agent = make_agent(editor=editor)
    ids = await two_turns(agent)
    with pytest.raises(FilesNotRestoredError, match=r"the user cancelled.*nothing was changed"):
        await navigate(agent, ids["before_one"])
    assert agent.runtime.session.leaf_id == ids["leaf"]
    assert files_of(agent.workspace) == {"a.txt": "three\n", "sub/new.txt": "new\n"}
    assert (
        not (agent.workspace / ".pi" / "sessions" / ".checkpoints" / "ledger.jsonl")
        .read_text()
        .count('"restore"')
    )
    assert not agent.runtime.compacting  # the session is usable again


async def test_an_editor_without_resource_operations_leaves_it_to_the_disk(make_agent):
    editor = Editor(supports_file_edits=False)
    agent = make_agent(editor=editor)
    ids = await two_turns(agent)
    await navigate(agent, ids["before_one"])
    assert files_of(agent.workspace) == {"a.txt": "one\n"}


async def test_an_empty_buffer_of_a_deleted_file_counts_as_absent(make_agent):
    """Neovim keeps an empty buffer for a file a workspace edit created, then deleted; going
    forward again creates the file instead of calling the empty buffer someone's change."""
    editor = Editor()
    agent = make_agent(editor=editor)
    ids = await two_turns(agent)
    new_txt = agent.workspace / "sub" / "new.txt"
    await navigate(agent, ids["before_two"])
    assert not new_txt.exists()
    editor.documents[new_txt] = "\n"  # Neovim's empty buffer: one empty line
    forward = await navigate(agent, ids["leaf"])
    assert actions(forward)["new.txt"] == ("created", None)
    assert editor.documents[new_txt] == "new\n"

    await navigate(agent, ids["before_two"])
    editor.documents[new_txt] = ""
    again = await navigate(agent, ids["leaf"])
    assert actions(again)["new.txt"] == ("created", None)
