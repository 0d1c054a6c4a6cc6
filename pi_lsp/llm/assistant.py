"""The assistant message being streamed: content blocks as they arrive, and pi's final record.

``PartialAssistant`` gathers what a stream delivered so far, the way pi's ``openai-completions``
provider does: one ``thinking`` block and one ``text`` block, each created where its first delta
arrived (later deltas of the same kind extend it), and one ``toolCall`` block per streamed tool
call, in stream order. ``to_message`` turns that into a complete pi assistant message at any
moment, which is how an aborted or failed stream keeps what it produced.

Tool-call arguments are kept as raw JSON text while streaming and parsed by ``to_message`` with
pi's tolerant parser (``partial_json``): arguments cut short keep what was received. A tool call
streamed without an id (some local servers) gets a stable made-up one, since its result must
name it.
"""

from __future__ import annotations

import time

import attrs

from pi_lsp.llm.partial_json import parse_streaming_json
from pi_lsp.llm.usage import empty_usage
from pi_lsp.protocol import StopReason
from pi_lsp.session.message_types import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)

AssistantBlock = TextContent | ThinkingContent | ToolCall

API = "openai-completions"
ABORTED_ERROR_MESSAGE = "Request was aborted."
REDACTED_THINKING_TEXT = "[Reasoning redacted]"

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


def stop_reason_for(finish_reason: str) -> tuple[StopReason, str | None]:
    """pi's ``stopReason`` (and error text) for a provider's ``finish_reason``."""
    stop_reason = _STOP_REASONS.get(finish_reason)
    if stop_reason is not None:
        return stop_reason, None
    return "error", f"Provider finish_reason: {finish_reason}"


def _now_ms() -> int:
    return int(time.time() * 1000)


@attrs.define
class _ToolCallDraft:
    block: ToolCall
    arguments_json: str = ""


@attrs.define
class PartialAssistant:
    """An assistant message under construction (see the module docstring)."""

    provider: str
    model: str
    api: str = API
    """The wire API it came over, as pi records it (``anthropic-messages``…)."""
    timestamp: int = attrs.field(factory=_now_ms)
    usage: Usage = attrs.field(factory=empty_usage)
    finish_reason: str | None = None
    _content: list[AssistantBlock] = attrs.field(factory=list)
    _text: TextContent | None = None
    _thinking: ThinkingContent | None = None
    _tool_calls: dict[int, _ToolCallDraft] = attrs.field(factory=dict)

    @property
    def has_content(self) -> bool:
        return bool(self._content)

    def add_text(self, delta: str) -> None:
        if self._text is None:
            self._text = {"type": "text", "text": ""}
            self._content.append(self._text)
        self._text["text"] += delta

    def add_thinking(self, delta: str, signature: str) -> None:
        """Extend the thinking block; ``signature`` names the field it streamed in (pi's way)."""
        self._ensure_thinking(signature)["thinking"] += delta

    def sign_thinking(self, signature: str) -> None:
        """Record a provider signature (Anthropic) that must accompany the thinking on replay."""
        self._ensure_thinking(signature)["thinkingSignature"] = signature

    def add_redacted_thinking(self, data: str) -> None:
        """A thinking block the provider redacted (Anthropic's ``redacted_thinking``): kept as pi
        keeps it, its opaque ``data`` in ``thinkingSignature``, to be replayed as it came."""
        self._content.append(
            {
                "type": "thinking",
                "thinking": REDACTED_THINKING_TEXT,
                "thinkingSignature": data,
                "redacted": True,
            }
        )

    def _ensure_thinking(self, signature: str) -> ThinkingContent:
        if self._thinking is None:
            self._thinking = {"type": "thinking", "thinking": "", "thinkingSignature": signature}
            self._content.append(self._thinking)
        return self._thinking

    def start_tool_call(self, index: int, call_id: str, name: str) -> bool:
        """Open tool call ``index`` (or fill in its id/name); True when it is new."""
        draft = self._tool_calls.get(index)
        if draft is None:
            block: ToolCall = {"type": "toolCall", "id": call_id, "name": name, "arguments": {}}
            self._tool_calls[index] = _ToolCallDraft(block)
            self._content.append(block)
            return True
        draft.block["id"] = draft.block["id"] or call_id
        draft.block["name"] = draft.block["name"] or name
        return False

    def tool_call_index(self, call_id: str | None) -> int:
        """The stream index of the tool call with ``call_id``, or a fresh one (no index sent)."""
        for index, draft in self._tool_calls.items():
            if call_id and draft.block["id"] == call_id:
                return index
        return max(self._tool_calls, default=-1) + 1

    def sign_tool_call(self, index: int, signature: str) -> None:
        """Gemini's thought signature of tool call ``index``, to be sent back with it."""
        self.start_tool_call(index, "", "")
        self._tool_calls[index].block["thoughtSignature"] = signature

    def add_tool_arguments(self, index: int, delta: str) -> None:
        self.start_tool_call(index, "", "")
        self._tool_calls[index].arguments_json += delta

    def to_message(
        self, stop_reason: StopReason | None = None, error_message: str | None = None
    ) -> AssistantMessage:
        """pi's assistant message for what arrived so far.

        Without ``stop_reason`` the stream's own finish decides; a stream that never finished
        is an error. An ``aborted`` message says "Request was aborted." unless told otherwise.
        """
        if stop_reason is None:
            stop_reason, error_message = self._natural_stop(error_message)
        if stop_reason == "aborted" and error_message is None:
            error_message = ABORTED_ERROR_MESSAGE
        message: AssistantMessage = {
            "role": "assistant",
            "content": self._final_content(),
            "api": self.api,
            "provider": self.provider,
            "model": self.model,
            "usage": self.usage,
            "stopReason": stop_reason,
            "timestamp": self.timestamp,
        }
        if error_message is not None:
            # pi writes errorMessage before timestamp, and the key order is part of the file.
            del message["timestamp"]  # type: ignore[misc]
            message["errorMessage"] = error_message
            message["timestamp"] = self.timestamp
        return message

    def _natural_stop(self, error_message: str | None) -> tuple[StopReason, str | None]:
        if error_message is not None:
            return "error", error_message
        if self.finish_reason is None:
            return "error", "Stream ended without finish_reason"
        return stop_reason_for(self.finish_reason)

    def _final_content(self) -> list[AssistantBlock]:
        drafts = {id(draft.block): draft for draft in self._tool_calls.values()}
        content: list[AssistantBlock] = []
        for position, block in enumerate(self._content):
            draft = drafts.get(id(block))
            if draft is None:
                content.append(block.copy())
                continue
            call = draft.block.copy()
            # A tool result must name its call; some local servers stream calls without ids.
            call["id"] = call["id"] or f"call_{self.timestamp}_{position}"
            call["arguments"] = parse_streaming_json(draft.arguments_json)
            content.append(call)
        return content
