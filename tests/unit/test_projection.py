"""The context of sessions written by pi 1.6: context edits, system messages, snapshots, new kinds.

pi 1.6's ``buildSessionProjection`` is the reference (tests/conformance/test_against_pi16.py
checks it entry by entry against pi itself); these cases pin the rules down one at a time.
"""

from __future__ import annotations

from pi_lsp.session.context import build_session_context, project_session
from pi_lsp.session.projection import entry_messages, project_entry
from tests.builders import SessionBuilder, image, text, tool_call


def contents(entries, leaf=None) -> list:
    context = build_session_context(entries, leaf) if leaf else build_session_context(entries)
    return [message.get("content", message.get("summary")) for message in context.messages]


def test_an_omitted_message_leaves_the_context_and_only_on_the_edits_branch():
    session = SessionBuilder()
    question = session.user("my key is sk-123")
    answer = session.assistant("noted")
    session.context_edit(question["id"], None)
    session.user("next")
    assert contents(session.entries) == [[text("noted")], "next"]
    session.branch_from(answer["id"])
    side = session.user("other branch")
    assert contents(session.entries, side["id"]) == [
        "my key is sk-123",
        [text("noted")],
        "other branch",
    ]


def test_replacements_swap_content_only_and_strings_become_text_blocks_where_pi_does():
    session = SessionBuilder()
    question = session.user([text("long question")])
    call = session.assistant("reading", tool_call("read", path="a.py"), stop_reason="toolUse")
    result = session.tool_result("file body")
    note = session.custom_message("remember")
    session.context_edit(question["id"], {"content": "short question"})
    session.context_edit(call["id"], {"content": "I read a.py."})
    session.context_edit(result["id"], {"content": "[removed]"})
    session.context_edit(note["id"], {"content": "remember this instead"})
    messages = build_session_context(session.entries).messages
    assert [message["content"] for message in messages] == [
        "short question",
        [text("I read a.py.")],
        [text("[removed]")],
        "remember this instead",
    ]
    assert messages[1]["stopReason"] == "toolUse" and messages[2]["toolCallId"] == "call-1"
    assert messages[3]["customType"] == "ext"


def test_the_latest_edit_of_a_target_wins():
    session = SessionBuilder()
    question = session.user("v0")
    session.context_edit(question["id"], {"content": "v1"})
    session.context_edit(question["id"], None)
    assert contents(session.entries) == []
    session.context_edit(question["id"], {"content": [text("v3"), image()]})
    assert contents(session.entries) == [[text("v3"), image()]]


def test_edits_apply_to_whatever_they_target_on_the_path_even_later_entries():
    session = SessionBuilder()
    session.user("kept")
    session.context_edit("test-id-3", None)  # the next entry
    session.user("left out by the edit before it")
    session.context_edit("no-such-entry", None)
    summary = session.branch_summary("a branch summary")
    session.context_edit(summary["id"], {"content": "summaries keep their text"})
    assert contents(session.entries) == ["kept", "a branch summary"]
    session.context_edit(summary["id"], None)
    assert contents(session.entries) == ["kept"]


def test_edits_summarized_away_and_edits_of_summarized_entries_change_nothing():
    session = SessionBuilder()
    first = session.user("first")
    session.context_edit(first["id"], None)
    second = session.user("second")
    session.compaction("summary", first_kept_entry_id=second["id"])
    session.context_edit(first["id"], {"content": "too late"})  # first is summarized away
    session.context_edit(second["id"], {"content": "second, edited"})
    assert contents(session.entries) == ["summary", "second, edited"]


def test_a_compaction_that_keeps_nothing_and_its_system_snapshot():
    session = SessionBuilder()
    session.system("prompt v1", sections={"rules": "<rules/>"})
    session.user("old")
    snapshot = {"role": "system", "content": "prompt v2", "timestamp": 5}
    compaction = session.compaction(
        "summary", first_kept_entry_id="test-id-3", systemMessage=snapshot
    )
    compaction["firstKeptEntryId"] = compaction["id"]  # pi 1.6's retain-none compaction
    session.user("new")
    messages = build_session_context(session.entries).messages
    assert [message["role"] for message in messages] == ["system", "compactionSummary", "user"]
    assert messages[0] is snapshot


def test_kept_system_messages_and_older_compactions_give_nothing():
    session = SessionBuilder()
    session.system("prompt")
    kept = session.user("kept")
    session.system("", sections={"rules": None})
    session.compaction("older", first_kept_entry_id=kept["id"])
    session.user("between")
    session.compaction("newer", first_kept_entry_id=kept["id"])
    roles = [m["role"] for m in build_session_context(session.entries).messages]
    assert roles == ["compactionSummary", "user", "user"]
    projected = project_session(session.entries)
    assert [(p.entry["id"], len(p.messages)) for p in projected] == [
        ("test-id-6", 1),
        ("test-id-2", 1),
        ("test-id-4", 0),  # the older compaction, inside the newer one's kept range
        ("test-id-5", 1),
    ]


def test_null_system_content_reads_as_empty_text():
    session = SessionBuilder()
    session.system(None)
    assert build_session_context(session.entries).messages[0]["content"] == ""


def test_usage_entries_and_unknown_kinds_add_nothing():
    session = SessionBuilder()
    session.user("hello")
    session.raw("usage", kind="cache_warm", provider="anthropic", model="m", usage={})
    session.raw("checkpoint_v9", data={"x": 1})
    session.assistant("hi")
    assert contents(session.entries) == ["hello", [text("hi")]]
    assert entry_messages(session.entries[2]) == []


def test_malformed_replacements():
    session = SessionBuilder()
    question = session.user("question")
    assert project_entry(question, {"type": "context_edit", "replacement": {}}) == [
        {"role": "user", "timestamp": question["message"]["timestamp"]}
    ]  # content undefined: JSON drops the field, as pi's does
    answer = session.assistant("answer")
    assert "content" not in project_entry(answer, {"replacement": "not an object"})[0]
    # pi itself stops with a TypeError on an edit without a replacement; pi-lsp ignores the edit.
    assert project_entry(question, {"type": "context_edit", "targetId": "x"}) == [
        question["message"]
    ]


def test_projection_marks_removed_and_replaced_entries():
    session = SessionBuilder()
    removed = session.user("removed")
    replaced = session.user("replaced")
    session.context_edit(removed["id"], None)
    session.context_edit(replaced["id"], {"content": "new"})
    by_id = {p.entry["id"]: p for p in project_session(session.entries)}
    assert by_id[removed["id"]].removed and not by_id[removed["id"]].replaced
    assert by_id[replaced["id"]].replaced and not by_id[replaced["id"]].removed
    assert not by_id["test-id-3"].removed and by_id["test-id-3"].edit is None
