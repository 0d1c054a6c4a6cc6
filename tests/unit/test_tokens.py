"""Token estimates (chars4 = pi's estimateTokens, tiktoken) and provider usage."""

from __future__ import annotations

import math
import os

import pytest

from pi_lsp.compaction.tokens import (
    CHARS4,
    TIKTOKEN,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    estimate_tokens_after_edits,
    get_last_assistant_usage,
    get_token_counter,
)
from tests.builders import (
    SessionBuilder,
    assistant_message,
    bash_execution,
    image,
    text,
    thinking,
    tool_call,
    tool_result,
    usage,
    user_message,
)

# --- provider usage -------------------------------------------------------------------------


def test_context_tokens_is_the_sum_of_usage_parts():
    assert calculate_context_tokens(usage(1000, 500, 200, 100)) == 1800
    assert calculate_context_tokens(usage(1000, 500, 200, 100, total=0)) == 1800
    assert calculate_context_tokens(usage()) == 0


def test_context_tokens_prefers_reported_total():
    assert calculate_context_tokens(usage(1, 1, 1, 1, total=99)) == 99


def test_context_tokens_with_missing_part_is_nan():
    assert math.isnan(calculate_context_tokens({"input": 5, "output": 5}))
    assert (
        calculate_context_tokens({"input": 5, "output": None, "cacheRead": 0, "cacheWrite": 0}) == 5
    )


def test_last_assistant_usage_skips_aborted_error_and_zero_usage():
    session = SessionBuilder()
    session.user("u")
    session.assistant("good", usage_=usage(100, 10))
    session.assistant("aborted", usage_=usage(999), stop_reason="aborted")
    session.assistant("failed", usage_=usage(999), stop_reason="error")
    session.assistant("empty stream", usage_=usage())
    session.user("after")
    assert get_last_assistant_usage(session.entries) == usage(100, 10)


def test_last_assistant_usage_is_none_without_assistants():
    session = SessionBuilder()
    session.user("u")
    assert get_last_assistant_usage(session.entries) is None
    assert get_last_assistant_usage([]) is None


# --- chars4 (pi's estimateTokens) -----------------------------------------------------------


def test_user_text_rounds_up_by_four():
    assert estimate_tokens(user_message("abcde")) == 2
    assert estimate_tokens(user_message("abcd")) == 1
    assert estimate_tokens(user_message("")) == 0
    assert estimate_tokens(user_message([text("ab"), text("cd"), text("e")])) == 2


def test_lengths_are_utf16_code_units():
    assert estimate_tokens(user_message("😀😀")) == 1  # 4 code units
    assert estimate_tokens(user_message("😀😀a")) == 2
    assert estimate_tokens(user_message("éé")) == 1


def test_images_count_4800_chars_for_user_custom_and_tool_results():
    assert estimate_tokens(user_message([image(), text("abcd")])) == 1201
    assert estimate_tokens(tool_result([image()])) == 1200
    custom = {
        "role": "custom",
        "customType": "x",
        "content": [image(), image()],
        "display": True,
        "timestamp": 0,
    }
    assert estimate_tokens(custom) == 2400


def test_assistant_counts_text_thinking_and_tool_call_json():
    message = assistant_message(text("abcd"), thinking("efgh"), tool_call("read", path="a"))
    # "read" (4) + '{"path":"a"}' (12)
    assert estimate_tokens(message) == math.ceil((4 + 4 + 4 + 12) / 4)


def test_bash_and_summaries():
    assert estimate_tokens(bash_execution("abc", "defgh")) == 2
    assert estimate_tokens(bash_execution("abc", "defgh", excludeFromContext=True)) == 2
    assert (
        estimate_tokens(
            {"role": "branchSummary", "summary": "x" * 9, "fromId": "r", "timestamp": 0}
        )
        == 3
    )
    assert (
        estimate_tokens(
            {"role": "compactionSummary", "summary": "x" * 8, "tokensBefore": 1, "timestamp": 0}
        )
        == 2
    )
    assert estimate_tokens({"role": "unknown"}) == 0


def test_chars4_matches_pi_on_tricky_messages():
    # Expected values computed with pi 0.84.2's estimateTokens.
    messages = [
        tool_result([text("a" * 1999 + "😀" + "b" * 5)]),
        {"role": "toolResult", "content": "x" * 2001},
        user_message([text("hi"), image(), text("there")]),
        assistant_message(
            thinking("hmm"),
            text("a"),
            text("b"),
            tool_call("read", b=1, **{"10": "x", "a": {"z": 1e21, "y": 3e-7}, "01": 2}),
        ),
        {"role": "custom", "customType": "x", "content": "custom text", "timestamp": 5},
    ]
    assert [estimate_tokens(message) for message in messages] == [502, 501, 1202, 15, 3]


def test_estimate_context_tokens_uses_last_usage_plus_trailing_estimates():
    messages = [
        user_message("x" * 40),
        assistant_message("y", usage_=usage(1000, 200)),
        user_message("z" * 8),
        assistant_message("failed", usage_=usage(5000), stop_reason="error"),
    ]
    estimate = estimate_context_tokens(messages)
    assert estimate.to_json() == {
        "tokens": 1200 + 2 + 2,
        "usageTokens": 1200,
        "trailingTokens": 4,
        "lastUsageIndex": 1,
    }


def test_estimate_context_tokens_without_usage_estimates_everything():
    messages = [user_message("x" * 40), assistant_message("y" * 4)]
    assert estimate_context_tokens(messages).to_json() == {
        "tokens": 11,
        "usageTokens": 0,
        "trailingTokens": 11,
        "lastUsageIndex": None,
    }


# --- tokenizer selection and tiktoken -------------------------------------------------------


def test_counters_by_name():
    assert get_token_counter("chars4") is CHARS4
    assert get_token_counter("tiktoken") is TIKTOKEN
    with pytest.raises(ValueError, match="unknown tokenizer"):
        get_token_counter("words")


def test_tiktoken_counts_real_tokens_and_loads_offline():
    message = user_message("hello world")
    assert TIKTOKEN.estimate_message_tokens(message) == 2  # o200k_base: "hello", " world"
    assert CHARS4.estimate_message_tokens(message) == 3
    assert os.environ["TIKTOKEN_CACHE_DIR"].endswith(
        os.path.join("litellm_core_utils", "tokenizers")
    )


def test_tiktoken_images_and_special_tokens():
    assert TIKTOKEN.estimate_message_tokens(user_message([image()])) == 1200
    # Special-token text is ordinary text in a conversation, not a reason to fail.
    assert TIKTOKEN.estimate_message_tokens(user_message("<|endoftext|>")) > 1


def test_tiktoken_counts_the_same_pieces_as_chars4():
    message = assistant_message(text("fix the bug"), tool_call("edit", path="src/app.py"))
    assert TIKTOKEN.estimate_message_tokens(message) > 0
    assert TIKTOKEN.estimate_message_tokens({"role": "unknown", "content": "lots of text"}) == 0
    assert TIKTOKEN.estimate_message_tokens(bash_execution("", "")) == 0


def test_usage_older_than_a_context_edit_is_not_trusted():
    session = SessionBuilder()
    session.user("abcd" * 10)
    session.assistant("abcd" * 10, usage_=usage(5000, 50))
    messages = [entry["message"] for entry in session.entries]
    assert estimate_tokens_after_edits(session.entries, messages) == 5050
    session.context_edit("test-id-1", None)
    assert estimate_tokens_after_edits(session.entries, messages[1:]) == 10
    session.assistant("abcd", usage_=usage(300, 1))  # a new answer measured the edited context
    newest = [messages[1], session.entries[-1]["message"]]
    assert estimate_tokens_after_edits(session.entries, newest) == 301
