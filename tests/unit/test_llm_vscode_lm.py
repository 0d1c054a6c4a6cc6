"""The ``vscode-lm`` provider: pi's messages → the editor's two roles and parts, the streamed
parts → pi's events and message, the editor's errors → the recovery paths, and the catalogue
offering these models only when a client runs them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from pi_lsp import protocol
from pi_lsp.llm.catalog import ModelCatalog
from pi_lsp.llm.editor_models import EditorModels, LanguageModelRequestError
from pi_lsp.llm.events import Completed, TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStart
from pi_lsp.llm.failed_messages import is_context_overflow, is_retryable_error
from pi_lsp.llm.messages import ToolSpec
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.llm.vscode_lm import IMAGE_PLACEHOLDER, chat_params, provider_error
from pi_lsp.protocol import (
    LanguageModelChatParams,
    LanguageModelChatResult,
    LanguageModelInfo,
    LanguageModelPart,
)
from pi_lsp.session.messages import convert_to_llm, create_compaction_summary_message
from tests.builders import (
    assistant_message,
    image,
    text,
    thinking,
    tool_call,
    tool_result,
    user_message,
    user_text,
)

COPILOT = LanguageModelInfo("gpt-5-mini", "copilot", "gpt-5-mini", "GPT-5 mini", 128_000)


def wire(params: LanguageModelChatParams) -> list[dict[str, Any]]:
    return protocol.to_json(params)["messages"]


def test_the_conversation_goes_in_the_editors_two_roles():
    messages = convert_to_llm(
        [
            create_compaction_summary_message("We fixed add().", 5000, "2026-01-01T00:00:00Z"),
            user_text("read app.py"),
            assistant_message(
                thinking("the user wants the file"),
                "Reading it.",
                tool_call("read", "call-1", path="app.py"),
                tool_call("read", "call-2", path="b.py"),
                provider="vscode-lm",
                model="copilot/gpt-5-mini",
                api="vscode-lm",
            ),
            tool_result("def add(a, b): ...", "call-1"),
            tool_result([text("b"), image()], "call-2"),
            user_message([text("and this picture?"), image()]),
        ]
    )
    tools = [ToolSpec("read", "Read a file", {"type": "object"})]
    params = chat_params("copilot/gpt-5-mini", "You are pi.", messages, tools)
    assert params.model == "gpt-5-mini"
    assert protocol.to_json(params)["tools"] == [
        {"name": "read", "description": "Read a file", "inputSchema": {"type": "object"}}
    ]
    system, summary, user, assistant, results, picture = wire(params)
    assert system == {"role": "user", "content": [text("You are pi.")]}
    assert summary["role"] == "user" and "We fixed add()." in summary["content"][0]["text"]
    assert user == {"role": "user", "content": [text("read app.py")]}
    assert assistant == {  # the model's own thinking is dropped, as for a model that cannot read it
        "role": "assistant",
        "content": [
            text("Reading it."),
            {"type": "toolCall", "callId": "call-1", "name": "read", "input": {"path": "app.py"}},
            {"type": "toolCall", "callId": "call-2", "name": "read", "input": {"path": "b.py"}},
        ],
    }
    assert results == {  # one user message answers the whole batch
        "role": "user",
        "content": [
            {"type": "toolResult", "callId": "call-1", "content": [text("def add(a, b): ...")]},
            {
                "type": "toolResult",
                "callId": "call-2",
                "content": [
                    text("b"),
                    {"type": "image", "mimeType": "image/png", "data": "aGVsbG8="},
                ],
            },
        ],
    }
    assert picture == {
        "role": "user",
        "content": [
            text("and this picture?"),
            {"type": "image", "mimeType": "image/png", "data": "aGVsbG8="},
        ],
    }


def test_a_model_without_images_gets_placeholders_and_another_models_thinking_is_text():
    messages = [
        user_message([text("look"), image(), image()]),
        assistant_message(thinking("hmm"), "Seen."),
        tool_result([image()], "call-9"),
    ]
    _, user, assistant, result = wire(
        chat_params("copilot/gpt-5-mini", "sys", messages, [], accepts_images=False)
    )
    assert user["content"] == [text("look"), text(IMAGE_PLACEHOLDER)]
    assert assistant["content"] == [text("hmm"), text("Seen.")]
    assert result["content"][0]["content"] == [text(IMAGE_PLACEHOLDER)]


class ScriptedChannel:
    """The client's side in process: streams recorded parts, then answers or fails."""

    def __init__(self, parts: list[dict[str, Any]], result: Any) -> None:
        self.parts = parts
        self.result = result
        self.requests: list[LanguageModelChatParams] = []

    async def chat(
        self, params: LanguageModelChatParams, on_part: Callable[[LanguageModelPart], None]
    ) -> LanguageModelChatResult:
        self.requests.append(params)
        for part in self.parts:
            on_part(protocol.converter.structure(part, LanguageModelPart))
            await asyncio.sleep(0)
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


class SilentChannel:
    """A client that never answers, until the request is cancelled."""

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()

    async def chat(self, params: Any, on_part: Any) -> LanguageModelChatResult:
        try:
            await asyncio.Event().wait()
        finally:
            self.cancelled.set()
        raise AssertionError("unreachable")


def editor_with(channel: ScriptedChannel | SilentChannel | None) -> EditorModels:
    editor = EditorModels()
    if channel is not None:
        editor.connect(channel)
    editor.replace([COPILOT])
    return editor


async def run(
    channel: ScriptedChannel | SilentChannel, timeout: float | None = 600
) -> tuple[list[Any], dict[str, Any]]:
    editor = editor_with(channel)
    model = editor.config("copilot/gpt-5-mini")
    request = CompletionRequest(model, "sys", [user_text("hi")], timeout=timeout)
    async with AssistantStream(request, editor) as stream:
        events = [event async for event in stream.events()]
    assert isinstance(events[-1], Completed)
    return events[:-1], dict(events[-1].message)


RECORDED_TOOL_TURN = [
    {"type": "text", "text": "Let me "},
    {"type": "text", "text": "read it."},
    {"type": "toolCall", "callId": "toolu_1", "name": "read", "input": {"path": "app.py"}},
    {"type": "toolCall", "callId": "toolu_2", "name": "ls", "input": {}},
]


async def test_recorded_parts_become_pi_events_and_a_tool_use_message():
    events, message = await run(
        ScriptedChannel(RECORDED_TOOL_TURN, LanguageModelChatResult(900, 20))
    )
    assert events == [
        TextDelta("Let me "),
        TextDelta("read it."),
        ToolCallStart(0, "toolu_1", "read"),
        ToolCallDelta(0, '{"path":"app.py"}'),
        ToolCallStart(1, "toolu_2", "ls"),
        ToolCallDelta(1, "{}"),
    ]
    assert message["stopReason"] == "toolUse"
    assert message["content"] == [
        text("Let me read it."),
        {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "app.py"}},
        {"type": "toolCall", "id": "toolu_2", "name": "ls", "arguments": {}},
    ]
    assert (message["api"], message["provider"], message["model"]) == (
        "vscode-lm",
        "vscode-lm",
        "copilot/gpt-5-mini",
    )
    assert (message["usage"]["input"], message["usage"]["output"]) == (900, 20)
    assert message["usage"]["cost"]["total"] == 0


async def test_a_streamed_answer_with_thinking_and_no_counts():
    parts = [{"type": "thinking", "text": "Hmm."}, {"type": "text", "text": "Hello."}]
    events, message = await run(ScriptedChannel(parts, LanguageModelChatResult()))
    assert events == [ThinkingDelta("Hmm."), TextDelta("Hello.")]
    assert message["stopReason"] == "stop"
    assert message["content"][-1] == text("Hello.")
    assert message["usage"]["totalTokens"] == 0


async def test_an_error_after_some_text_keeps_the_text_and_reads_as_an_overflow():
    failure = LanguageModelRequestError(
        protocol.LANGUAGE_MODEL_CONTEXT_TOO_LONG, "Message exceeds token limit."
    )
    _, message = await run(ScriptedChannel([{"type": "text", "text": "Part"}], failure))
    assert message["stopReason"] == "error"
    assert message["content"] == [text("Part")]
    assert is_context_overflow(message, 128_000)


async def test_a_silent_client_times_out_as_a_provider_would_and_its_request_is_cancelled():
    channel = SilentChannel()
    _, message = await run(channel, timeout=0.01)
    assert message["stopReason"] == "error"
    assert is_retryable_error(message, 128_000)
    await channel.cancelled.wait()  # the abandoned request is cancelled (hangs otherwise)


async def test_a_model_the_editor_no_longer_offers_fails_without_a_request():
    channel = ScriptedChannel([], LanguageModelChatResult())
    editor = editor_with(channel)
    editor.replace([])
    model = editor_with(channel).config("copilot/gpt-5-mini")
    async with AssistantStream(
        CompletionRequest(model, "sys", [user_text("hi")]), editor
    ) as stream:
        [completed] = [event async for event in stream.events()]
    assert isinstance(completed, Completed)
    assert "VS Code offers no model copilot/gpt-5-mini now" in completed.message["errorMessage"]
    assert channel.requests == []


def failed(code: int, text: str = "") -> dict[str, Any]:
    error = provider_error(LanguageModelRequestError(code, text), "vscode-lm/copilot/gpt-5-mini")
    return {"stopReason": "error", "errorMessage": error.description}


@pytest.mark.parametrize(
    ("code", "overflow", "retried", "says"),
    [
        (protocol.LANGUAGE_MODEL_NO_PERMISSIONS, False, False, 'choose "Allow" when VS Code asks'),
        (protocol.LANGUAGE_MODEL_BLOCKED, False, False, "quota exceeded"),
        (protocol.LANGUAGE_MODEL_NOT_FOUND, False, False, "Pi: Select Model"),
        (protocol.LANGUAGE_MODEL_CONTEXT_TOO_LONG, True, False, "context window"),
        (-32603, False, True, "Server error: 503"),
    ],
)
def test_the_editors_errors_take_the_providers_recovery_paths(code, overflow, retried, says):
    message = failed(code, "Server error: 503")
    assert is_context_overflow(message, 128_000) is overflow
    assert is_retryable_error(message, 128_000) is retried
    assert says in message["errorMessage"]


def test_the_catalogue_offers_the_editors_models_only_with_a_channel():
    catalog = ModelCatalog(None, None, None, {}, editor_with(None))
    assert not [entry for entry in catalog.entries([]) if entry.provider == "vscode-lm"]
    missing = catalog.resolve("vscode-lm/copilot/gpt-5-mini", {})
    assert missing.key_status == "missing"
    assert "only the Pi extension for VS Code can run it" in catalog.missing_key_message(missing)

    connected = ModelCatalog(None, None, None, {}, editor_with(ScriptedChannel([], None)))
    [entry] = [entry for entry in connected.entries([]) if entry.provider == "vscode-lm"]
    assert (entry.model, entry.name, entry.context_window, entry.available, entry.source) == (
        "vscode-lm/copilot/gpt-5-mini",
        "GPT-5 mini",
        128_000,
        True,
        "editor",
    )
    model = connected.resolve("vscode-lm/copilot/gpt-5-mini", {})
    assert (model.key_status, model.context_window, model.source) == ("key", 128_000, "editor")
