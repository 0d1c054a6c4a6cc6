"""The transcript of the active path: every visible
entry, summaries included, bookkeeping left out."""

from pi_lsp.session.session import Session
from pi_lsp.session.transcript import transcript_document


def test_compactions_stay_visible_and_bookkeeping_is_left_out(tmp_path):
    session = Session.create(tmp_path, str(tmp_path))
    session.append_thinking_level_change("high")
    first = session.append_message({"role": "user", "content": "hello", "timestamp": 1})
    session.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "timestamp": 2}
    )
    session.append_compaction("## Goal\nGreet", first, 100)
    session.append_message({"role": "user", "content": "again", "timestamp": 3})
    document = transcript_document(session)
    assert [entry["type"] for entry in document["entries"]] == [
        "message",
        "message",
        "compaction",
        "message",
    ]
    assert document["entries"][2]["summary"] == "## Goal\nGreet"
    assert document["total"] == 4 and document["leafId"] == session.leaf_id
    assert [
        entry["message"]["content"] for entry in transcript_document(session, 1)["entries"]
    ] == ["again"]
