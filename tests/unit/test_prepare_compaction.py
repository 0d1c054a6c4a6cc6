"""prepareCompaction: what a compaction would summarize and keep, as pi 0.84.2 plans it."""

from __future__ import annotations

from pi_lsp.compaction.prepare import prepare_compaction
from pi_lsp.compaction.tokens import TIKTOKEN
from tests.builders import (
    SessionBuilder,
    conversation,
    keep,
    split_turn_session,
    tool_call,
    usage,
    words,
)


def ids_of(messages) -> list[str]:
    return [
        message["content"] if message["role"] == "user" else message["role"] for message in messages
    ]


def test_nothing_to_plan_for_empty_or_just_compacted_paths():
    assert prepare_compaction([], keep(10)) is None
    session = conversation(3)
    session.compaction("s", first_kept_entry_id="test-id-5")
    assert prepare_compaction(session.entries, keep(10)) is None


def test_small_session_has_nothing_to_summarize():
    assert prepare_compaction(conversation(3).entries, keep(20000)) is None


def test_basic_plan_summarizes_older_turns_and_keeps_recent_ones():
    session = conversation(5)  # 10 entries, ~100 tokens each
    session.message(session.entries[-1]["message"] | {"usage": usage(900, 100)})
    preparation = prepare_compaction(session.entries, keep(300))
    assert preparation is not None
    assert preparation.first_kept_entry_id == "test-id-9"
    assert preparation.is_split_turn is False
    assert len(preparation.messages_to_summarize) == 8
    assert preparation.turn_prefix_messages == []
    assert preparation.previous_summary is None
    # tokensBefore: the last assistant's usage (1000), nothing after it.
    assert preparation.tokens_before == 1000
    assert preparation.settings == keep(300)


def test_split_turn_puts_the_turn_start_in_the_prefix():
    session = split_turn_session()
    preparation = prepare_compaction(session.entries, keep(450))
    assert preparation.first_kept_entry_id == "test-id-10"
    assert preparation.is_split_turn is True
    assert [message["role"] for message in preparation.turn_prefix_messages] == [
        "user",
        "assistant",
        "toolResult",
    ]
    assert len(preparation.messages_to_summarize) == 6
    json = preparation.to_json()
    assert json["readFiles"] == ["a.py"]
    assert json["modifiedFiles"] == []  # the edit is kept, not summarized


def test_trailing_tool_results_still_free_something():
    # 0.84.2 would return None here (its fallback keeps everything); see find_cut_point.
    session = SessionBuilder()
    session.user(words(100))  # 1
    session.assistant(words(100))  # 2
    session.user(words(10))  # 3
    session.assistant(tool_call("read", path="big.txt"))  # 4
    session.tool_result(words(3000))  # 5
    preparation = prepare_compaction(session.entries, keep(1000))
    assert preparation is not None
    assert preparation.first_kept_entry_id == "test-id-4"
    assert preparation.is_split_turn is True
    assert len(preparation.messages_to_summarize) == 2
    assert [message["role"] for message in preparation.turn_prefix_messages] == ["user"]


def test_repeated_compaction_starts_at_previous_first_kept_entry():
    session = conversation(3)  # 1..6
    session.compaction(
        "first summary",
        first_kept_entry_id="test-id-5",
        details={"readFiles": ["r.py"], "modifiedFiles": ["m.py"]},
    )  # 7
    for turn in range(3, 6):
        session.user(f"u{turn}" + words(100))
        session.assistant(words(100))  # 8..13
    preparation = prepare_compaction(session.entries, keep(300))
    assert preparation.previous_summary == "first summary"
    # u2 and its answer (kept by the first compaction) are summarized again, the compaction is not.
    summarized = [
        message for message in preparation.messages_to_summarize if message["role"] == "user"
    ]
    assert [message["content"][:2] for message in summarized] == ["u2", "u3"]
    assert preparation.is_split_turn is True  # the cut lands on u4's answer: u4 is the turn prefix
    assert preparation.turn_prefix_messages[0]["content"][:2] == "u4"
    assert all(
        message["role"] != "compactionSummary" for message in preparation.messages_to_summarize
    )
    json = preparation.to_json()
    assert json["readFiles"] == ["r.py"]
    assert json["modifiedFiles"] == ["m.py"]


def test_previous_compaction_with_unknown_first_kept_id_starts_after_it():
    session = conversation(2)  # 1..4
    session.compaction("s", first_kept_entry_id="gone")  # 5
    for turn in range(2, 5):
        session.user(f"u{turn}" + words(100))
        session.assistant(words(100))
    preparation = prepare_compaction(session.entries, keep(300))
    summarized = [
        message["content"][:2]
        for message in preparation.messages_to_summarize
        if message["role"] == "user"
    ]
    assert summarized == ["u2"]  # u0 and u1 lie before the compaction and are not summarized again


def test_file_lists_of_hook_compactions_are_not_inherited():
    session = conversation(3)
    session.compaction(
        "s", first_kept_entry_id="test-id-5", fromHook=True, details={"readFiles": ["r.py"]}
    )
    for turn in range(3, 6):
        session.user(f"u{turn}" + words(100))
        session.assistant(words(100))
    assert prepare_compaction(session.entries, keep(300)).to_json()["readFiles"] == []


def test_tokens_before_is_estimated_from_the_rebuilt_context():
    session = SessionBuilder()
    session.user(words(100))  # 1
    session.assistant(words(100))  # 2
    session.compaction(words(10), first_kept_entry_id="test-id-2", tokens_before=99999)  # 3
    session.user(words(100))  # 4
    session.assistant(words(100))  # 5
    session.user(words(100))  # 6
    preparation = prepare_compaction(session.entries, keep(150))
    # Context = compaction summary (10) + a(100) + u(100) + a(100) + u(100); no usage anywhere.
    assert preparation.tokens_before == 410


def test_entry_without_id_needs_migration():
    session = conversation(4)
    del session.entries[6]["id"]
    assert prepare_compaction(session.entries, keep(150)) is None


def test_to_json_key_order_and_serialized_text():
    session = conversation(3)
    session.assistant(tool_call("write", path="out.txt", content="x"))
    preparation = prepare_compaction(session.entries, keep(150))
    json = preparation.to_json()
    assert list(json) == [
        "firstKeptEntryId",
        "isSplitTurn",
        "tokensBefore",
        "previousSummary",
        "messagesToSummarize",
        "turnPrefixMessages",
        "readFiles",
        "modifiedFiles",
        "serialized",
    ]
    assert json["serialized"].startswith("[User]: u0abcd")
    assert json["previousSummary"] is None


def test_tiktoken_counter_plans_with_its_own_counts():
    session = SessionBuilder()
    for _ in range(6):
        session.user("hello world " * 50)
    chars4 = prepare_compaction(session.entries, keep(300))
    tiktoken = prepare_compaction(session.entries, keep(300), TIKTOKEN)
    assert chars4.tokens_before == 900
    assert tiktoken.tokens_before < chars4.tokens_before
    assert tiktoken.first_kept_entry_id != chars4.first_kept_entry_id


# ------------------------------------------------------------------ sessions written by pi 1.6


def session_with_a_pasted_secret(*, left_out: bool, turns_before: int) -> SessionBuilder:
    session = conversation(turns_before)
    secret = session.user("my key is sk-live-123 " + words(2000))  # ~2000 tokens
    call = session.assistant(words(10), tool_call("edit", path="secret.env"), stop_reason="toolUse")
    result = session.tool_result("ok")
    if left_out:
        for target in (secret, call, result):
            session.context_edit(target["id"], None)
    for turn in range(4):
        session.user(f"v{turn}" + words(100))
        session.assistant(words(100))
    return session


def test_what_a_context_edit_removed_is_neither_summarized_nor_a_file():
    kept_whole = prepare_compaction(
        session_with_a_pasted_secret(left_out=False, turns_before=1).entries, keep(300)
    )
    assert "sk-live" in kept_whole.serialized
    assert kept_whole.to_json()["modifiedFiles"] == ["secret.env"]
    left_out = prepare_compaction(
        session_with_a_pasted_secret(left_out=True, turns_before=1).entries, keep(300)
    )
    assert "sk-live" not in left_out.serialized
    assert "sk-live" not in str(left_out.turn_prefix_messages)
    assert left_out.to_json()["modifiedFiles"] == []


def test_what_a_context_edit_removed_does_not_count_against_the_kept_budget():
    session = conversation(2)
    secret = session.user("my key is sk-live-123 " + words(2000))  # 5: fills the budget alone
    session.assistant(words(100))  # 6
    session.user("u2" + words(100))  # 7
    session.assistant(words(100))  # 8
    assert prepare_compaction(session.entries, keep(400)).first_kept_entry_id == "test-id-5"
    session.context_edit(secret["id"], None)
    # Left out, the secret weighs nothing: the kept part reaches back to a1 (splitting u1's turn).
    preparation = prepare_compaction(session.entries, keep(400))
    assert preparation.first_kept_entry_id == "test-id-4"
    assert ids_of(preparation.messages_to_summarize) == ["u0" + words(100), "assistant"]
    assert ids_of(preparation.turn_prefix_messages) == ["u1" + words(100)]


def test_a_replaced_message_is_summarized_and_counted_with_its_new_content():
    session = conversation(3)
    session.context_edit("test-id-1", {"content": "u0, shortened"})
    session.user("u3" + words(100))
    session.assistant(words(100))
    preparation = prepare_compaction(session.entries, keep(300))
    assert preparation.messages_to_summarize[0]["content"] == "u0, shortened"
    assert "[User]: u0, shortened" in preparation.serialized


def test_system_messages_are_never_summarized():
    session = SessionBuilder()
    session.system("You are pi." + words(500), toolsAdded=[{"name": "read"}])
    for turn in range(4):
        session.user(f"u{turn}" + words(100))
        session.assistant(words(100))
    preparation = prepare_compaction(session.entries, keep(300))
    summarized = preparation.messages_to_summarize + preparation.turn_prefix_messages
    assert [message["role"] for message in summarized] == ["user", "assistant"] * 2 + ["user"]


def test_usage_reported_before_a_context_edit_is_not_trusted_for_tokens_before():
    session = conversation(3)
    session.message(session.entries[-1]["message"] | {"usage": usage(90000, 100)})
    assert prepare_compaction(session.entries, keep(150)).tokens_before == 90100
    session.context_edit("test-id-1", None)
    tokens_before = prepare_compaction(session.entries, keep(150)).tokens_before
    assert tokens_before < 1000  # every message estimated: about 100 tokens each
