"""serializeConversation as pi 0.84.2 writes it: labels, thinking, tool calls, truncation."""

from __future__ import annotations

from pi_lsp.compaction.serialize import serialize_conversation, truncate_for_summary
from pi_lsp.session.messages import convert_to_llm
from tests.builders import (
    assistant_message,
    image,
    text,
    thinking,
    tool_call,
    tool_result,
    user_message,
)


def test_roles_are_labelled_and_joined_by_blank_lines():
    messages = [
        user_message("question"),
        assistant_message(thinking("let me think"), text("answer"), tool_call("read", path="a.py")),
        tool_result("file body"),
    ]
    assert serialize_conversation(messages) == (
        "[User]: question\n\n"
        "[Assistant thinking]: let me think\n\n"
        "[Assistant]: answer\n\n"
        '[Assistant tool calls]: read(path="a.py")\n\n'
        "[Tool result]: file body"
    )


def test_the_summarizer_text_leaves_thinking_out_as_pi_1_2_does():
    messages = [
        user_message("question"),
        assistant_message(thinking("let me think"), text("answer"), tool_call("ls")),
        assistant_message(thinking("only thinking")),
    ]
    assert serialize_conversation(messages, include_thinking=False) == (
        "[User]: question\n\n[Assistant]: answer\n\n[Assistant tool calls]: ls()"
    )


def test_multiple_blocks_and_calls():
    message = assistant_message(
        thinking("t1"),
        text("a"),
        thinking("t2"),
        text("b"),
        tool_call("edit", path="x", edits=[{"old": "1", "new": "2"}]),
        tool_call("ls"),
    )
    assert serialize_conversation([message]) == (
        "[Assistant thinking]: t1\nt2\n\n"
        "[Assistant]: a\nb\n\n"
        '[Assistant tool calls]: edit(path="x", edits=[{"old":"1","new":"2"}]); ls()'
    )


def test_user_text_blocks_concatenate_without_separator_and_images_drop():
    assert serialize_conversation([user_message([text("a"), image(), text("b")])]) == "[User]: ab"
    assert serialize_conversation([user_message([image()])]) == ""
    assert serialize_conversation([user_message("")]) == ""


def test_long_tool_result_is_truncated_with_marker():
    serialized = serialize_conversation([tool_result("x" * 2500)])
    assert serialized == "[Tool result]: " + "x" * 2000 + "\n\n[... 500 more characters truncated]"


def test_short_tool_result_and_long_user_or_assistant_text_are_kept():
    assert serialize_conversation([tool_result("x" * 2000)]) == "[Tool result]: " + "x" * 2000
    assert serialize_conversation([user_message("u" * 5000)]) == "[User]: " + "u" * 5000
    assert serialize_conversation([assistant_message("a" * 5000)]) == "[Assistant]: " + "a" * 5000


def test_truncation_counts_utf16_code_units_and_may_split_a_pair():
    truncated = truncate_for_summary("a" * 1999 + "\U0001f600" + "b" * 5, 2000)
    # Like JavaScript's slice: the high surrogate stays, its partner is cut.
    assert truncated == "a" * 1999 + "\ud83d" + "\n\n[... 6 more characters truncated]"


def test_tool_call_arguments_in_javascript_key_order():
    message = assistant_message(tool_call("f", b=1, **{"10": "x", "2": True, "a": None}))
    assert (
        serialize_conversation([message])
        == '[Assistant tool calls]: f(2=true, 10="x", b=1, a=null)'
    )


def test_pi_roles_serialize_after_convert_to_llm():
    messages = [
        {"role": "compactionSummary", "summary": "old", "tokensBefore": 1, "timestamp": 0},
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        },
    ]
    serialized = serialize_conversation(convert_to_llm(messages))
    assert serialized.startswith("[User]: The conversation history before this point was compacted")
    assert serialized.endswith("[User]: Ran `ls`\n(no output)")


def test_matches_pi_on_tricky_input():
    # Expected text computed with pi 0.84.2's serializeConversation(convertToLlm(...)).
    messages = [
        tool_result([text("a" * 1999 + "\U0001f600" + "b" * 5)]),
        assistant_message(tool_call("read", **{"a": {"z": 1e21, "y": 3e-7}, "01": 2})),
        {"role": "custom", "customType": "x", "content": "note", "timestamp": 5},
        {"role": "bashExecution", "command": "ls", "output": "o", "exitCode": 2, "timestamp": 1},
    ]
    assert serialize_conversation(convert_to_llm(messages)) == (
        "[Tool result]: " + "a" * 1999 + "\ud83d\n\n[... 6 more characters truncated]\n\n"
        '[Assistant tool calls]: read(a={"z":1e+21,"y":3e-7}, 01=2)\n\n'
        "[User]: note\n\n"
        "[User]: Ran `ls`\n```\no\n```\n\nCommand exited with code 2"
    )
