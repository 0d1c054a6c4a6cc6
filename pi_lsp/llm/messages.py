"""pi LLM messages + system prompt + tool specs → OpenAI chat-completion messages for litellm.

The input is ``pi_lsp.session.messages.convert_to_llm``'s output (roles ``user``, ``assistant``,
``toolResult`` with pi's content blocks). The mapping follows pi's own ``openai-completions``
provider, after ``history.prepare_history`` has cleaned the history:

- the system prompt is a ``system`` message;
- ``user``: a string stays a string; blocks become ``text`` / ``image_url`` (data URL) parts;
- ``assistant``: its non-blank text blocks joined into one ``content`` string (``None`` when there
  is none), tool calls as ``tool_calls`` with the arguments JSON-encoded like ``JSON.stringify``;
  an assistant with neither is left out (an aborted answer that produced nothing);
- ``toolResult``: a ``tool`` message with ``tool_call_id`` and the text blocks joined by newlines
  (a placeholder when there is no text); its images follow the run of tool messages as one user
  message, since OpenAI's tool messages cannot carry images.

Thinking is sent back conservatively, only for the model that produced it and only in the two
shapes litellm forwards: as ``reasoning_content`` (or the ``reasoning``/``reasoning_text`` field
the thinking was streamed in, recorded in ``thinkingSignature``, as pi does) and as Anthropic
``thinking_blocks`` with their signature (a redacted block as ``redacted_thinking`` with its
data). Unsigned thinking is not sent at all.

Lone UTF-16 surrogates (JSON allows them, providers do not) are removed from every text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import msgspec

from pi_lsp.llm.history import prepare_history
from pi_lsp.session.message_types import LlmMessage

ChatMessage = dict[str, Any]

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
THOUGHT_SIGNATURE_FIELD = "thought_signature"
TOOL_IMAGES_INTRO = "Attached image(s) from tool result:"
_USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
_TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@attrs.frozen
class ToolSpec:
    """A tool the model may call: its name, what it does, and a JSON schema of its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any] = attrs.field(
        factory=lambda: {"type": "object", "properties": {}}
    )

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


def tools_to_openai(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """OpenAI ``tools`` entries, in order."""
    return [tool.to_openai() for tool in tools]


def to_chat_messages(
    system_prompt: str,
    messages: Sequence[LlmMessage],
    *,
    provider: str | None = None,
    model_id: str | None = None,
    supports_images: bool = True,
) -> list[ChatMessage]:
    """The chat messages for a request to ``provider``/``model_id`` (see the module docstring)."""
    history = history_chat_messages(messages, provider, model_id, supports_images, {})
    return system_messages(system_prompt) + history


def chat_message_text(message: Mapping[str, Any]) -> str:
    """The text of a chat message: its string content, or its text parts joined (the wire modules
    that send chat messages another way, Responses and Gemini, read tool results with it)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(
        str(part.get("text", "")) for part in content or () if part.get("type") == "text"
    )


def system_messages(system_prompt: str) -> list[ChatMessage]:
    """The system message of ``system_prompt``; none for an empty prompt."""
    return [{"role": "system", "content": sanitize(system_prompt)}] if system_prompt else []


def history_chat_messages(
    messages: Sequence[LlmMessage],
    provider: str | None,
    model_id: str | None,
    supports_images: bool,
    renamed_ids: dict[str, str],
) -> list[ChatMessage]:
    """``to_chat_messages`` without the system prompt, carrying ``renamed_ids`` (tool-call ids
    renamed for the provider) from the messages before these and on to the ones after."""
    chat: list[ChatMessage] = []
    history = prepare_history(messages, provider, model_id, renamed_ids)
    pending_tool_images: list[dict[str, Any]] = []
    for message in history:
        role = message.get("role")
        if role != "toolResult" and pending_tool_images:
            chat.append(_tool_images_message(pending_tool_images))
            pending_tool_images = []
        if role == "user":
            chat.extend(_user_message(message, supports_images))
        elif role == "assistant":
            chat.extend(_assistant_message(message))
        elif role == "toolResult":
            chat.append(_tool_message(message, supports_images))
            if supports_images:
                pending_tool_images.extend(_image_parts(message.get("content")))
    if pending_tool_images:
        chat.append(_tool_images_message(pending_tool_images))
    return chat


def sanitize(text: str) -> str:
    """``text`` without lone surrogates.

    Every request sanitizes the whole history again; the checks in C (ASCII, then UTF-8, which
    refuses any surrogate) are many times faster than the expression's scan, which only a text
    holding a surrogate then needs.
    """
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("", text)
    return text


_encode_json = msgspec.json.Encoder().encode


def js_json(value: Any) -> str:
    """``JSON.stringify(value)``: compact separators, non-ASCII kept.

    msgspec writes that about ten times faster than ``json`` (tool-call arguments carry whole
    files, and every request replays them all); a lone surrogate, which it refuses, falls back.
    """
    try:
        return _encode_json(value).decode()
    except (UnicodeEncodeError, TypeError):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _user_message(message: Mapping[str, Any], supports_images: bool) -> list[ChatMessage]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"role": "user", "content": sanitize(content)}]
    parts = _content_parts(content or [], supports_images)
    return [{"role": "user", "content": parts}] if parts else []


def _content_parts(
    blocks: Sequence[Mapping[str, Any]], supports_images: bool
) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "text":
            parts.append({"type": "text", "text": sanitize(str(block.get("text", "")))})
        elif block.get("type") == "image" and supports_images:
            parts.append(_image_part(block))
        elif block.get("type") == "image" and not _ends_with_placeholder(parts):
            parts.append({"type": "text", "text": _USER_IMAGE_PLACEHOLDER})
    return parts


def _ends_with_placeholder(parts: list[dict[str, Any]]) -> bool:
    return bool(parts) and parts[-1].get("text") == _USER_IMAGE_PLACEHOLDER


def _image_part(block: Mapping[str, Any]) -> dict[str, Any]:
    url = f"data:{block.get('mimeType', 'image/png')};base64,{block.get('data', '')}"
    return {"type": "image_url", "image_url": {"url": url}}


def _image_parts(content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, list):
        return []
    return [_image_part(block) for block in content if block.get("type") == "image"]


def _tool_images_message(images: list[dict[str, Any]]) -> ChatMessage:
    return {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_INTRO}, *images]}


def _assistant_message(message: Mapping[str, Any]) -> list[ChatMessage]:
    blocks = message.get("content") or []
    text = "".join(
        sanitize(block["text"])
        for block in blocks
        if block.get("type") == "text" and str(block.get("text", "")).strip()
    )
    chat: ChatMessage = {"role": "assistant", "content": text or None}
    chat.update(_replayed_thinking([block for block in blocks if block.get("type") == "thinking"]))
    calls = [block for block in blocks if block.get("type") == "toolCall"]
    if calls:
        chat["tool_calls"] = [_tool_call(call) for call in calls]
    if chat["content"] is None and not calls:
        return []
    return [chat]


def _replayed_thinking(thinking_blocks: list[Mapping[str, Any]]) -> dict[str, Any]:
    signed = [block for block in thinking_blocks if block.get("thinkingSignature")]
    if not signed:
        return {}
    field = signed[0]["thinkingSignature"]
    if field in REASONING_FIELDS:
        texts = [
            block.get("thinking") or "" for block in signed if (block.get("thinking") or "").strip()
        ]
        return {field: "\n".join(texts)} if texts else {}
    return {
        "thinking_blocks": [
            _thinking_block(block)
            for block in signed
            if block["thinkingSignature"] not in REASONING_FIELDS
        ]
    }


def _thinking_block(block: Mapping[str, Any]) -> dict[str, Any]:
    """litellm's ``thinking_blocks`` entry (Anthropic's block) for a signed pi thinking block."""
    if block.get("redacted"):
        return {"type": "redacted_thinking", "data": block["thinkingSignature"]}
    return {
        "type": "thinking",
        "thinking": block.get("thinking") or "",
        "signature": block["thinkingSignature"],
    }


def _tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    converted = {
        "id": call.get("id"),
        "type": "function",
        "function": {"name": call.get("name"), "arguments": js_json(call.get("arguments") or {})},
    }
    if call.get("thoughtSignature"):
        # Gemini's signature of the reasoning behind the call (kept for the same model only,
        # ``history.py``); the Gemini request sends it back, the other wire APIs leave it out.
        converted[THOUGHT_SIGNATURE_FIELD] = call["thoughtSignature"]
    return converted


def tool_result_blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A tool result's content blocks (a plain string content as one text block)."""
    content = message.get("content")
    return content if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]


def _tool_message(message: Mapping[str, Any], supports_images: bool) -> ChatMessage:
    blocks = tool_result_blocks(message)
    texts: list[str] = []
    for block in blocks:
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif (
            block.get("type") == "image"
            and not supports_images
            and (not texts or texts[-1] != _TOOL_IMAGE_PLACEHOLDER)
        ):
            texts.append(_TOOL_IMAGE_PLACEHOLDER)
    text = "\n".join(texts)
    if not text:
        has_images = any(block.get("type") == "image" for block in blocks)
        text = "(see attached image)" if has_images else "(no tool output)"
    return {"role": "tool", "tool_call_id": message.get("toolCallId"), "content": sanitize(text)}
