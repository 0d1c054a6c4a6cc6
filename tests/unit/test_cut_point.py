"""findCutPoint: where the kept part starts, split turns, and the trailing-tool-result fix."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.compaction.cut_point import CutPoint, find_cut_point, find_turn_start_index
from pi_lsp.compaction.tokens import TIKTOKEN
from tests.builders import SessionBuilder, tool_call, words


def long_conversation(turns: int = 10, tokens_per_message: int = 100) -> SessionBuilder:
    session = SessionBuilder()
    for _ in range(turns):
        session.user(words(tokens_per_message))
        session.assistant(words(tokens_per_message))
    return session


def test_cut_lands_on_user_or_assistant_message():
    session = long_conversation()
    result = find_cut_point(session.entries, 0, len(session.entries), 500)
    kept = session.entries[result.first_kept_entry_index]
    assert kept["message"]["role"] in ("user", "assistant")
    # 100 tokens per message: the budget of 500 is reached at the fifth message from the end.
    assert result.first_kept_entry_index == 15


def test_cut_on_assistant_is_a_split_turn_starting_at_its_user_message():
    session = long_conversation()
    result = find_cut_point(session.entries, 0, len(session.entries), 500)
    assert result == CutPoint(first_kept_entry_index=15, turn_start_index=14, is_split_turn=True)


def test_cut_on_user_message_is_not_split():
    session = long_conversation()
    result = find_cut_point(session.entries, 0, len(session.entries), 400)
    assert result == CutPoint(16, -1, False)


def test_no_valid_cut_points_returns_start_index():
    session = SessionBuilder()
    session.tool_result("r1")
    session.tool_result("r2")
    session.thinking_level("high")
    assert find_cut_point(session.entries, 1, 3, 10) == CutPoint(1, -1, False)


def test_everything_fits_keeps_from_the_first_message():
    session = SessionBuilder()
    session.model_change("openai", "gpt")
    session.user("small")
    session.assistant("tiny")
    assert find_cut_point(session.entries, 0, 3, 20000) == CutPoint(
        0, -1, False
    )  # widened over model_change


def test_budget_crossed_in_trailing_tool_results_keeps_the_tool_call_with_its_results():
    # pi 0.84.2 would fall back to the FIRST cut point here (keeping everything); pi-lsp, like
    # pi 1.6, cuts at the last one: the assistant call and its results are kept.
    session = SessionBuilder()
    session.user(words(100))  # 0
    session.assistant(words(100))  # 1
    session.user(words(10))  # 2
    session.assistant(tool_call("read", path="big.txt"))  # 3
    session.tool_result(words(3000))  # 4
    result = find_cut_point(session.entries, 0, len(session.entries), 1000)
    assert result == CutPoint(first_kept_entry_index=3, turn_start_index=2, is_split_turn=True)


def test_metadata_entries_before_the_cut_are_kept_with_it():
    session = long_conversation(turns=3)
    session.model_change("openai", "gpt")  # 6
    session.label("test-id-1", "start")  # 7
    session.user(words(100))  # 8
    session.assistant(words(100))  # 9
    result = find_cut_point(session.entries, 0, len(session.entries), 200)
    assert result.first_kept_entry_index == 6
    # pi 0.84.2 quirk, kept: the widened cut entry (a model change) starts no turn, so the cut
    # counts as splitting the turn of the nearest earlier user message, although that turn is
    # complete. Its messages become the "turn prefix".
    assert result == CutPoint(6, 4, True)


def test_custom_messages_and_branch_summaries_count_and_are_cut_points():
    session = SessionBuilder()
    session.user(words(10))  # 0
    session.custom_message(words(300))  # 1
    session.branch_summary(words(300))  # 2
    session.assistant(words(10))  # 3
    result = find_cut_point(session.entries, 0, len(session.entries), 200)
    assert result == CutPoint(2, -1, False)


def test_compaction_entry_is_counted_but_never_cut_at():
    session = SessionBuilder()
    session.user(words(10))  # 0
    session.compaction(words(500), first_kept_entry_id="test-id-1")  # 1
    session.assistant(words(10))  # 2
    result = find_cut_point(session.entries, 0, len(session.entries), 100)
    assert result.first_kept_entry_index == 2
    assert result == CutPoint(2, 0, True)


def test_cut_does_not_extend_back_over_a_compaction():
    session = SessionBuilder()
    session.user(words(10))
    session.compaction("s", first_kept_entry_id="test-id-1")
    session.thinking_level("high")
    session.user(words(100))
    result = find_cut_point(session.entries, 0, len(session.entries), 50)
    assert result.first_kept_entry_index == 2


def test_find_turn_start_index():
    session = SessionBuilder()
    session.user("u")  # 0
    session.assistant("a")  # 1
    session.tool_result("r")  # 2
    session.custom_message("c")  # 3
    session.assistant("b")  # 4
    assert find_turn_start_index(session.entries, 2, 0) == 0
    assert find_turn_start_index(session.entries, 4, 0) == 3
    assert find_turn_start_index(session.entries, 2, 1) == -1


def test_tiktoken_counter_changes_where_the_cut_lands():
    session = SessionBuilder()
    for _ in range(6):
        session.user("hello world " * 50)  # 600 chars: 150 chars4 tokens, ~100 o200k tokens
    chars4 = find_cut_point(session.entries, 0, 6, 300)
    tiktoken = find_cut_point(session.entries, 0, 6, 300, TIKTOKEN)
    assert chars4.first_kept_entry_index == 4
    assert tiktoken.first_kept_entry_index == 3


entry_kinds = st.sampled_from(
    [
        "user",
        "assistant",
        "assistant_call",
        "tool_result",
        "thinking",
        "custom_message",
        "compaction",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(entry_kinds, st.integers(0, 400)), min_size=1, max_size=25),
    st.integers(0, 3000),
    st.data(),
)
def test_cut_point_is_never_a_tool_result(kinds, keep_recent_tokens, data):
    session = SessionBuilder()
    for kind, size in kinds:
        if kind == "user":
            session.user(words(size))
        elif kind == "assistant":
            session.assistant(words(size))
        elif kind == "assistant_call":
            session.assistant(tool_call("read", path="f" * size))
        elif kind == "tool_result":
            session.tool_result(words(size))
        elif kind == "thinking":
            session.thinking_level("high")
        elif kind == "custom_message":
            session.custom_message(words(size))
        else:
            session.compaction(words(size), first_kept_entry_id="test-id-1")
    start = data.draw(st.integers(0, len(session.entries) - 1))
    result = find_cut_point(session.entries, start, len(session.entries), keep_recent_tokens)
    assert start <= result.first_kept_entry_index < len(session.entries)
    kept = session.entries[result.first_kept_entry_index]
    has_cut_point = any(
        entry["type"] == "custom_message"
        or (entry["type"] == "message" and entry["message"]["role"] != "toolResult")
        for entry in session.entries[start:]
    )
    if has_cut_point:
        assert not (kept["type"] == "message" and kept["message"]["role"] == "toolResult")
        assert kept["type"] != "compaction"
    if result.is_split_turn:
        assert start <= result.turn_start_index < result.first_kept_entry_index
