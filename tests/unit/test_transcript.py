"""The transcript of the active path: every visible
entry, summaries included, bookkeeping left out."""

from pi_lsp.session.session import Session
from pi_lsp.session.transcript import transcript


def test_compactions_stay_visible_and_bookkeeping_is_left_out(tmp_path):
    session = Session.create(tmp_path, str(tmp_path))
    session.append_thinking_level_change("high")
    first = session.append_message({"role": "user", "content": "hello", "timestamp": 1})
    session.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "timestamp": 2}
    )
    session.append_compaction("## Goal\nGreet", first, 100)
    session.append_message({"role": "user", "content": "again", "timestamp": 3})
    shown = transcript(session)
    assert [item.type for item in shown.entries] == ["message", "message", "compaction", "message"]
    assert shown.entries[2].summary == "## Goal\nGreet"
    assert shown.total == 4 and shown.leaf_id == session.leaf_id
    assert [item.message["content"] for item in transcript(session, 1).entries] == ["again"]


def test_context_edits_mark_entries_and_system_messages_stay_out(tmp_path):
    session = Session.create(tmp_path, str(tmp_path))
    session.append_raw(
        {"type": "message", "message": {"role": "system", "content": "You are pi.", "timestamp": 0}}
    )
    secret = session.append_message({"role": "user", "content": "key sk-1", "timestamp": 1})
    answer = session.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "long"}], "timestamp": 2}
    )
    note = session.append_custom_message("note", "remember", True)
    session.append_raw({"type": "context_edit", "targetId": secret, "replacement": None})
    session.append_raw(
        {"type": "context_edit", "targetId": answer, "replacement": {"content": "short"}}
    )
    session.append_raw(
        {"type": "context_edit", "targetId": note, "replacement": {"content": "forget it"}}
    )
    items = transcript(session).entries
    assert [(item.entry_id, item.context_edit) for item in items] == [
        (secret, "removed"),
        (answer, "replaced"),
        (note, "replaced"),
    ]
    assert items[0].message["content"] == "key sk-1"  # still shown, marked
    assert items[1].message["content"] == [{"type": "text", "text": "short"}]
    assert items[2].content == "forget it"


def test_earlier_pages_load_before_a_cursor_and_add_up_to_the_whole(tmp_path):
    import pytest

    from pi_lsp.errors import InvalidParamsError

    session = Session.create(tmp_path, str(tmp_path))
    start = session.append_message({"role": "user", "content": "m0", "timestamp": 0})
    for index in range(1, 23):
        session.append_message({"role": "user", "content": f"m{index}", "timestamp": index})
        session.append_model_change("openai", f"model-{index}")  # not shown: pages skip it
    whole = [item.entry_id for item in transcript(session).entries]
    page = transcript(session, 5)
    pages = [page.entries]
    assert page.total == 23 and page.offset == 18
    while page.offset:
        page = transcript(session, 5, page.entries[0].entry_id)
        pages.insert(0, page.entries)
    assert [item.entry_id for items in pages for item in items] == whole
    assert page.offset == 0 and len(pages[0]) == 3
    session.move_leaf(start)
    with pytest.raises(InvalidParamsError, match="not on the active path"):
        transcript(session, 5, whole[-1])
    assert transcript(session, 5, start).entries == []


def _session_with_a_read(tmp_path):
    session = Session.create(tmp_path, str(tmp_path))
    session.append_message({"role": "user", "content": "look", "timestamp": 1})
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}}
    session.append_message({"role": "assistant", "content": [call], "timestamp": 2})
    session.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "x = 1"}],
            "isError": False,
            "timestamp": 3,
        }
    )
    return session


def test_a_tool_result_carries_the_card_of_its_call(tmp_path):
    [_, answer, result] = transcript(_session_with_a_read(tmp_path)).entries
    assert answer.tool_card is None
    assert result.tool_card is not None
    assert (result.tool_card.title, result.tool_card.path) == ("Read a.py", "a.py")
    # the last page may start at the result: its call is found before the page
    [only] = transcript(_session_with_a_read(tmp_path / "again"), 1).entries
    assert only.tool_card is not None and only.tool_card.arguments[0].value == "a.py"


def test_a_card_that_cannot_be_made_leaves_the_page_whole(tmp_path, monkeypatch):
    from pi_lsp.session import transcript as module

    def broken(*_: object, **__: object) -> None:
        raise ValueError("odd result")

    monkeypatch.setattr(module, "tool_card", broken)
    entries = transcript(_session_with_a_read(tmp_path)).entries
    assert [entry.message["role"] for entry in entries] == ["user", "assistant", "toolResult"]
    assert entries[2].tool_card is None
