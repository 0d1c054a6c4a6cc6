"""Writing pi 1.6's ``context_edit`` entries (``Session.append_context_edit`` and
``session/context_edits.py``): their shape, the targets pi allows, and what a restore writes."""

from __future__ import annotations

import json

import pytest

from pi_lsp.errors import EntryNotFoundError, InvalidParamsError
from pi_lsp.session.context_edits import original_content, replacement_for
from pi_lsp.session.session import Session
from tests.builders import assistant_message, text, tool_call, tool_result, user_message


@pytest.fixture
def session(tmp_path) -> Session:
    return Session.create(tmp_path, str(tmp_path))


def contents(session: Session) -> list:
    return [message.get("content") for message in session.build_context().messages]


def test_an_omission_is_written_as_pi_16_writes_it_and_leaves_the_message_out(session):
    question = session.append_message(user_message("my key is sk-1"))
    answer = session.append_message(assistant_message("ok"))
    edit_id = session.append_context_edit(question, None)
    edit = session.require_entry(edit_id)
    assert list(json.loads(edit.raw)) == [
        "type",
        "id",
        "parentId",
        "timestamp",
        "targetId",
        "replacement",
    ]
    assert edit["parentId"] == answer and edit["targetId"] == question
    assert edit["replacement"] is None
    assert session.leaf_id == edit_id
    assert contents(session) == [[text("ok")]]
    assert session.require_entry(question)["message"]["content"] == "my key is sk-1"


def test_string_replacements_become_one_text_block_for_assistant_and_tool_results():
    assert replacement_for("user", "short") == {"content": "short"}
    assert replacement_for("custom", "short") == {"content": "short"}
    for role in ("assistant", "toolResult"):
        assert replacement_for(role, "short") == {"content": [text("short")]}
    assert replacement_for("assistant", None) is None


def test_a_restore_gives_the_stored_content_back_and_marks_nothing(session):
    session.append_message(user_message("read it"))
    call = session.append_message(assistant_message(tool_call("read", path="a.py")))
    output = session.append_message(tool_result("x = 1"))
    before = contents(session)
    session.append_context_edit(output, replacement_for("toolResult", "(long output dropped)"))
    [projected] = [p for p in session.projection() if p.entry.id == output]
    assert projected.replaced and contents(session)[-1] == [text("(long output dropped)")]

    session.append_context_edit(output, original_content(session.require_entry(output)))
    [projected] = [p for p in session.projection() if p.entry.id == output]
    assert not projected.replaced and not projected.removed
    assert contents(session) == before
    assert call  # the tool call keeps its result


def test_only_messages_on_the_active_branch_can_be_edited(session):
    first = session.append_message(user_message("one"))
    session.append_message(assistant_message("two"))
    label = session.append_label(first, "start")
    system = session.append_raw(
        {"type": "message", "message": {"role": "system", "content": "You are pi.", "timestamp": 0}}
    )
    with pytest.raises(EntryNotFoundError):
        session.append_context_edit("nope", None)
    with pytest.raises(InvalidParamsError, match="label entry, not a user"):
        session.append_context_edit(label, None)
    with pytest.raises(InvalidParamsError, match="system message, not a user"):
        session.append_context_edit(system, None)
    session.move_leaf(first)
    other = session.append_message(assistant_message("elsewhere"))
    session.move_leaf(label)
    with pytest.raises(InvalidParamsError, match="not on the active branch"):
        session.append_context_edit(other, None)
    assert not [entry for entry in session.entries if entry.type == "context_edit"]


def test_the_tree_previews_a_restore_as_one(session):
    from pi_lsp.session.tree_view import tree_view

    question = session.append_message(user_message("long question"))
    session.append_context_edit(question, replacement_for("user", "short"))
    session.append_context_edit(question, original_content(session.require_entry(question)))
    entries = tree_view(session).entries
    previews = [row.preview for row in entries if row.type == "context_edit"]
    assert previews == [
        "replaced in context: long question → short",
        "restored in context: long question",
    ]
