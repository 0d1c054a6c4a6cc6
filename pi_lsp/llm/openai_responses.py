"""The ``openai-responses`` wire API: OpenAI's Responses API, as pi uses it for OpenAI's models.

Used for OpenAI's own endpoint (``api.openai.com``, where pi 1.6 uses it too) and for
``models.json`` providers with ``api: "openai-responses"``. The request is built from the same
chat messages as every transport (``request_body``), the way pi's ``openai-responses`` provider
builds it: the system prompt as a ``developer`` message (``system`` for a model that does not
reason), user text and images as ``input_text``/``input_image``, an assistant's text as a
``message`` item, its tool calls as ``function_call`` items, tool results as
``function_call_output``; ``store: false``; with thinking on, ``reasoning: {effort, summary:
"auto"}`` and ``include: ["reasoning.encrypted_content"]``.

Reasoning comes back as summaries, streamed as thinking; the finished ``reasoning`` item (with its
``encrypted_content``) is kept whole, as JSON, in the thinking block's ``thinkingSignature`` (as pi
keeps it) and sent back as it came on the next turn of the same model, so the model keeps its
reasoning across tool calls without OpenAI storing anything. A tool call's id is pi's
``call_id|item_id``.

``ResponsesTranslator`` turns the stream's events into the OpenAI chunk dicts ``AssistantStream``
reads, so every wire API ends in the same events and messages.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

import jiter
import msgspec

from pi_lsp.llm import http_stream, providers
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.messages import chat_message_text
from pi_lsp.llm.models import supports_reasoning
from pi_lsp.llm.provider_errors import (
    provider_error,
)

MIN_OUTPUT_TOKENS = 16
_DATA_PREFIX = b"data:"
_encode = msgspec.json.Encoder().encode

ChatMessage = Mapping[str, Any]
Chunk = dict[str, Any]


def request_body(
    model: ModelConfig, found: providers.Route, arguments: Mapping[str, Any]
) -> dict[str, Any]:
    """The Responses body for ``stream.completion_arguments``'s ``arguments``."""
    effort = arguments.get("reasoning_effort")
    body: dict[str, Any] = {
        "model": found.model_id,
        "input": _input(arguments["messages"], developer=supports_reasoning(model)),
        "stream": True,
        "store": False,
    }
    for name in ("prompt_cache_key", "prompt_cache_retention"):
        if arguments.get(name):
            body[name] = arguments[name]
    limit = arguments.get("max_tokens") or arguments.get("max_completion_tokens")
    if limit:
        body["max_output_tokens"] = max(int(limit), MIN_OUTPUT_TOKENS)
    tools = arguments.get("tools") or ()
    if tools:
        body["tools"] = [_tool(tool) for tool in tools]
    if effort:
        body["reasoning"] = {"effort": effort, "summary": "auto"}
        body["include"] = ["reasoning.encrypted_content"]
    body.update(arguments.get("extra_body") or {})
    if providers.is_reasoning_model(found.model_id):
        body.pop("temperature", None)
    return body


def _input(messages: Sequence[ChatMessage], *, developer: bool) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for position, message in enumerate(messages):
        role = message.get("role")
        if role == "system":
            items.append(
                {
                    "role": "developer" if developer else "system",
                    "content": chat_message_text(message),
                }
            )
        elif role == "user":
            content = _user_content(message.get("content"))
            if content:
                items.append({"role": "user", "content": content})
        elif role == "assistant":
            items.extend(_assistant_items(message, position))
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "").partition("|")[0]
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": chat_message_text(message),
                }
            )
    return items


def _user_content(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    parts = []
    for part in content or ():
        if part.get("type") == "text":
            parts.append({"type": "input_text", "text": part.get("text", "")})
        elif part.get("type") == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            parts.append({"type": "input_image", "detail": "auto", "image_url": url})
    return parts


def _assistant_items(message: ChatMessage, position: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for block in message.get("thinking_blocks") or ():
        signature = block.get("signature")
        if isinstance(signature, str) and signature.startswith("{"):
            try:
                items.append(jiter.from_json(signature.encode()))
            except ValueError:
                continue
    text = chat_message_text(message)
    if text:
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
                "status": "completed",
                "id": f"msg_pi_{position}",
            }
        )
    for call in message.get("tool_calls") or ():
        call_id, _, item_id = str(call.get("id") or "").partition("|")
        function = call.get("function") or {}
        item = {
            "type": "function_call",
            "call_id": call_id,
            "name": function.get("name"),
            "arguments": function.get("arguments") or "{}",
        }
        if item_id.startswith("fc_"):
            item["id"] = item_id
        items.append(item)
    return items


def _tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    function = tool.get("function") or {}
    return {
        "type": "function",
        "name": function.get("name"),
        "description": function.get("description", ""),
        "parameters": function.get("parameters") or {"type": "object", "properties": {}},
        "strict": False,
    }


def serves(model: ModelConfig) -> bool:
    """Whether ``model`` streams through this module instead of litellm."""
    return providers.sends_natively(model, "openai-responses")


class ResponseFailed(Exception):
    """A ``response.failed`` or ``error`` event: its message."""


class ResponsesTranslator:
    """One stream's Responses events → OpenAI chunk dicts (see the module docstring)."""

    def __init__(self) -> None:
        self._tool_indexes: dict[int, int] = {}
        self._summary_parts: dict[int, int] = {}

    def chunk(self, event: Mapping[str, Any]) -> Chunk | None:
        kind = event.get("type")
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            return _delta_chunk({"content": event.get("delta") or ""})
        if kind == "response.reasoning_summary_text.delta":
            return self._summary_delta(event)
        if kind == "response.output_item.added":
            return self._item_added(event)
        if kind == "response.function_call_arguments.delta":
            index = self._tool_indexes.get(int(event.get("output_index", -1)))
            if index is None:
                return None
            call = {"index": index, "function": {"arguments": event.get("delta") or ""}}
            return _delta_chunk({"tool_calls": [call]})
        if kind == "response.output_item.done":
            return self._item_done(event.get("item") or {})
        if kind in ("response.completed", "response.incomplete"):
            return self._finished(event.get("response") or {})
        if kind in ("response.failed", "error"):
            raise ResponseFailed(_failure_text(event))
        return None

    def _summary_delta(self, event: Mapping[str, Any]) -> Chunk:
        output_index = int(event.get("output_index", 0))
        part = int(event.get("summary_index", 0))
        seen = self._summary_parts.get(output_index)
        self._summary_parts[output_index] = part
        text = str(event.get("delta") or "")
        if seen is not None and part != seen:
            text = "\n\n" + text  # pi joins a reasoning item's summary parts with a blank line
        return _delta_chunk({"reasoning_content": text})

    def _item_added(self, event: Mapping[str, Any]) -> Chunk | None:
        item = event.get("item") or {}
        if item.get("type") != "function_call":
            return None
        index = len(self._tool_indexes)
        self._tool_indexes[int(event.get("output_index", -1))] = index
        call = {
            "index": index,
            "id": f"{item.get('call_id')}|{item.get('id')}",
            "function": {"name": item.get("name"), "arguments": ""},
        }
        return _delta_chunk({"tool_calls": [call]})

    def _item_done(self, item: Mapping[str, Any]) -> Chunk | None:
        if item.get("type") != "reasoning":
            return None
        signature = _encode(dict(item)).decode()
        return _delta_chunk({"thinking_blocks": [{"type": "thinking", "signature": signature}]})

    def _finished(self, response: Mapping[str, Any]) -> Chunk:
        incomplete = (response.get("incomplete_details") or {}).get("reason")
        if response.get("status") == "incomplete":
            finish = "length" if incomplete in ("max_output_tokens", None) else "content_filter"
        else:
            finish = "tool_calls" if self._tool_indexes else "stop"
        chunk = _delta_chunk({}, finish)
        usage = response.get("usage")
        if isinstance(usage, Mapping):
            chunk["usage"] = {
                "prompt_tokens": usage.get("input_tokens") or 0,
                "completion_tokens": usage.get("output_tokens") or 0,
                "prompt_tokens_details": dict(usage.get("input_tokens_details") or {}),
            }
        return chunk


def _delta_chunk(delta: dict[str, Any], finish_reason: str | None = None) -> Chunk:
    choice: dict[str, Any] = {"index": 0, "delta": delta}
    if finish_reason is not None:
        choice["finish_reason"] = finish_reason
    return {"choices": [choice]}


def _failure_text(event: Mapping[str, Any]) -> str:
    error = (event.get("response") or {}).get("error") or event.get("error") or event
    if isinstance(error, Mapping) and error.get("message"):
        return str(error["message"])
    return _encode(dict(event)).decode()


async def stream_chunks(
    model: ModelConfig, arguments: Mapping[str, Any], headers: Mapping[str, str]
) -> AsyncGenerator[Chunk, None]:
    """The stream's chunks as dicts; a failure raises ``ProviderError`` (as ``direct``'s)."""
    found = providers.route(model)
    if found is None:
        raise ValueError(f"{model.call_model} is not a model of the provider table")
    request_headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    api_key = arguments.get("api_key") or providers.environment_key(found.provider)
    if api_key:
        request_headers["Authorization"] = f"Bearer {api_key}"
    request_headers.update(headers)
    translator = ResponsesTranslator()
    body = _encode(request_body(model, found, arguments))
    try:
        with http_stream.failures_as_provider_errors():
            async with http_stream.post(
                found.base_url + "/responses", body, request_headers, arguments.get("timeout")
            ) as response:
                if response.status >= 400:
                    raise provider_error(response.status, await response.text())
                async for line in response.lines():
                    if not line.startswith(_DATA_PREFIX):
                        continue
                    chunk = translator.chunk(jiter.from_json(line[len(_DATA_PREFIX) :].strip()))
                    if chunk is not None:
                        yield chunk
    except ResponseFailed as error:
        raise provider_error(500, str(error)) from error
