"""pi LLM messages → OpenAI chat messages: roles,
content parts, tool calls, thinking, history rules."""

from __future__ import annotations

import functools
from typing import Any

from pi_lsp.llm.history import normalize_tool_call_id, prepare_history
from pi_lsp.llm.messages import ToolSpec, to_chat_messages, tools_to_openai
from tests.builders import assistant_message, text, user_message

openai_answer = functools.partial(
    assistant_message, api="openai-completions", provider="openai", model="gpt-4o"
)


def tool_result(call_id: str, *blocks: dict[str, Any], name: str = "read") -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": list(blocks),
        "isError": False,
        "timestamp": 3,
    }


def call(call_id: str, name: str = "read", **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


IMAGE = {"type": "image", "data": "QUJD", "mimeType": "image/png"}


def chat(messages: list[dict[str, Any]], **options: Any) -> list[dict[str, Any]]:
    options.setdefault("provider", "openai")
    options.setdefault("model_id", "gpt-4o")
    return to_chat_messages("", messages, **options)


def test_system_prompt_and_user_text() -> None:
    result = to_chat_messages(
        "You are pi.", [user_message("hello"), user_message([text("a"), text("b")])]
    )
    assert result == [
        {"role": "system", "content": "You are pi."},
        {"role": "user", "content": "hello"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]


def test_user_images_become_data_urls_or_placeholders() -> None:
    [message] = chat([user_message([text("look"), IMAGE])])
    assert message["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,QUJD"},
    }
    [blind] = chat([user_message([IMAGE, IMAGE, text("x")])], supports_images=False)
    assert blind["content"] == [
        {"type": "text", "text": "(image omitted: model does not support images)"},
        {"type": "text", "text": "x"},
    ]


def test_empty_user_block_list_is_left_out() -> None:
    assert chat([user_message([])]) == []


def test_assistant_text_and_tool_calls() -> None:
    message = openai_answer(
        text("Reading "),
        text("  "),
        text("it."),
        call("call_1", path="a.py", note="é"),
        stop_reason="toolUse",
    )
    result = chat(
        [user_message("go"), message, tool_result("call_1", text("line 1"), text("line 2"))]
    )
    assert result[1] == {
        "role": "assistant",
        "content": "Reading it.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read", "arguments": '{"path":"a.py","note":"é"}'},
            }
        ],
    }
    assert result[2] == {"role": "tool", "tool_call_id": "call_1", "content": "line 1\nline 2"}


def test_assistant_with_only_tool_calls_has_null_content() -> None:
    result = chat(
        [
            user_message("go"),
            openai_answer(call("c1"), stop_reason="toolUse"),
            tool_result("c1", text("ok")),
        ]
    )
    assert result[1]["content"] is None


def test_tool_result_placeholders_and_images() -> None:
    messages = [
        user_message("go"),
        openai_answer(call("c1"), call("c2"), stop_reason="toolUse"),
        tool_result("c1"),
        tool_result("c2", IMAGE),
        user_message("next"),
    ]
    result = chat(messages)
    assert [m["content"] for m in result[2:4]] == ["(no tool output)", "(see attached image)"]
    assert result[4] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Attached image(s) from tool result:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
        ],
    }
    assert result[5] == {"role": "user", "content": "next"}
    blind = chat(messages, supports_images=False)
    assert blind[3]["content"] == "(tool image omitted: model does not support images)"
    assert [m["role"] for m in blind] == ["user", "assistant", "tool", "tool", "user"]


def test_failed_and_aborted_assistant_messages_are_skipped() -> None:
    result = chat(
        [
            user_message("a"),
            openai_answer(text("half"), stop_reason="error"),
            user_message("b"),
            openai_answer(text("cut"), call("c9"), stop_reason="aborted"),
        ]
    )
    assert result == [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]


def test_orphaned_tool_calls_get_a_synthetic_error_result() -> None:
    result = chat(
        [
            user_message("go"),
            openai_answer(call("c1"), call("c2"), stop_reason="toolUse"),
            tool_result("c1", text("done")),
            user_message("stop that"),
        ]
    )
    assert [m["role"] for m in result] == ["user", "assistant", "tool", "tool", "user"]
    assert result[3] == {"role": "tool", "tool_call_id": "c2", "content": "No result provided"}
    trailing = chat([user_message("go"), openai_answer(call("c1"), stop_reason="toolUse")])
    assert trailing[-1]["tool_call_id"] == "c1"


def test_empty_assistant_is_left_out() -> None:
    assert chat([user_message("a"), openai_answer(text("   "))]) == [
        {"role": "user", "content": "a"}
    ]


def test_same_model_reasoning_is_replayed_in_its_field() -> None:
    thinking = {"type": "thinking", "thinking": "plan", "thinkingSignature": "reasoning_content"}
    [_, message] = chat([user_message("a"), openai_answer(thinking, text("answer"))])
    assert message == {"role": "assistant", "content": "answer", "reasoning_content": "plan"}


def test_same_model_anthropic_signature_is_replayed_as_thinking_blocks() -> None:
    thinking = {"type": "thinking", "thinking": "plan", "thinkingSignature": "sig=="}
    [_, message] = chat(
        [
            user_message("a"),
            openai_answer(thinking, text("answer"), provider="anthropic", model="claude"),
        ],
        provider="anthropic",
        model_id="claude",
    )
    assert message["thinking_blocks"] == [
        {"type": "thinking", "thinking": "plan", "signature": "sig=="}
    ]


def test_unsigned_thinking_is_not_sent_and_other_models_thinking_becomes_text() -> None:
    unsigned = {"type": "thinking", "thinking": "plan"}
    [_, same] = chat([user_message("a"), openai_answer(unsigned, text("answer"))])
    assert same == {"role": "assistant", "content": "answer"}
    signed = {"type": "thinking", "thinking": "plan", "thinkingSignature": "reasoning_content"}
    [_, other] = chat(
        [user_message("a"), openai_answer(signed, text("answer"), model="older-model")]
    )
    assert other == {"role": "assistant", "content": "plananswer"}


def test_redacted_thinking_is_replayed_to_its_model_only() -> None:
    """pi's rule: the opaque data goes back to the model that wrote it, as Anthropic's
    ``redacted_thinking`` block; any other model never sees it."""
    redacted = {
        "type": "thinking",
        "thinking": "[Reasoning redacted]",
        "thinkingSignature": "opaque",
        "redacted": True,
    }
    answer = openai_answer(
        redacted, text("answer"), provider="anthropic", model="claude-sonnet-4-5"
    )
    [_, same] = chat(
        [user_message("a"), answer], provider="anthropic", model_id="claude-sonnet-4-5"
    )
    assert same == {
        "role": "assistant",
        "content": "answer",
        "thinking_blocks": [{"type": "redacted_thinking", "data": "opaque"}],
    }
    [_, other] = chat([user_message("a"), answer])
    assert other == {"role": "assistant", "content": "answer"}


def test_foreign_tool_call_ids_are_shortened_consistently() -> None:
    long_id = "call_abc|" + "x" * 300
    messages = [
        user_message("go"),
        openai_answer(call(long_id), stop_reason="toolUse", model="o3"),
        tool_result(long_id, text("ok")),
    ]
    result = chat(messages)
    new_id = result[1]["tool_calls"][0]["id"]
    assert len(new_id) <= 40 and "|" not in new_id
    assert result[2]["tool_call_id"] == new_id
    assert normalize_tool_call_id("toolu_01") == "toolu_01"
    assert normalize_tool_call_id("a|b") == "a_b"


def test_lone_surrogates_are_removed() -> None:
    [message] = chat([user_message("bad \ud800 text")])
    assert message["content"] == "bad  text"


def test_history_does_not_mutate_its_input() -> None:
    original = openai_answer({"type": "thinking", "thinking": "x"}, call("c1"), model="other")
    snapshot = repr(original)
    prepare_history([original], "openai", "gpt-4o")
    assert repr(original) == snapshot


def test_tool_specs_become_openai_function_tools() -> None:
    spec = ToolSpec(
        "read",
        "Read a file",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    )
    assert tools_to_openai([spec]) == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                },
            },
        }
    ]
    assert ToolSpec("ls", "List").to_openai()["function"]["parameters"] == {
        "type": "object",
        "properties": {},
    }
