"""The ``google-generative-ai`` wire API: Gemini's streaming ``generateContent``, sent by pi-lsp.

``POST {base}/models/{model}:streamGenerateContent?alt=sse`` with the key in ``x-goog-api-key``.
The body is built from the same chat messages as every transport, the way pi's
``google-generative-ai`` provider builds it: the system prompt as ``systemInstruction``, user text
and images (``inlineData``), the model's turns (``role: "model"``) with their thoughts
(``thought: true``), text and ``functionCall`` parts, tool results as ``functionResponse`` parts
(``{"output": …}``) merged into one user turn; tools as ``functionDeclarations`` with their
JSON schema in ``parametersJsonSchema``; ``generationConfig.maxOutputTokens``; with thinking on,
``thinkingConfig: {includeThoughts: true}`` and a thinking level (Gemini 3 and later) or pi's
budget (Gemini 2.5: 128/2048/8192/24576 tokens for minimal/low/medium/high on Flash, 32768 for
high on Pro, else dynamic).

Gemini's thoughts stream as thinking; a ``thoughtSignature`` is kept where pi keeps it (on the
thinking block, and on the tool call for the ``functionCall`` part it came with) and sent back
with the same model's next turn, which Gemini 3 requires for function calling.
``GeminiTranslator`` turns each streamed ``GenerateContentResponse`` into the OpenAI chunk dicts
``AssistantStream`` reads.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

import jiter
import msgspec

from pi_lsp.llm import http_stream, providers
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.messages import THOUGHT_SIGNATURE_FIELD, chat_message_text
from pi_lsp.llm.provider_errors import (
    provider_error,
)

ERROR_LABEL = "GeminiException"
_DATA_PREFIX = b"data:"
_THINKING_LEVEL_MODELS = re.compile(r"gemini-(?:3|[4-9]|[1-9]\d)|gemini-flash(?:-lite)?-latest")
_PRO_LEVELS = {"minimal": "low", "low": "low", "medium": "high", "high": "high"}
_FLASH_BUDGETS = {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}
_PRO_BUDGETS = {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}
_LITE_BUDGETS = {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}
_SCHEMA_DECLARATIONS = {"$schema", "$id", "$anchor", "$comment", "$defs", "definitions"}
_FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": "length", "CONTINUATION": "length"}
_encode = msgspec.json.Encoder().encode

ChatMessage = Mapping[str, Any]
Chunk = dict[str, Any]


def serves(model: ModelConfig) -> bool:
    """Whether ``model`` streams through this module instead of litellm."""
    return providers.sends_natively(model, "google-generative-ai")


def stream_url(found: providers.Route) -> str:
    return f"{found.base_url}/models/{found.model_id}:streamGenerateContent?alt=sse"


def request_body(found: providers.Route, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The ``generateContent`` body for ``stream.completion_arguments``'s ``arguments``."""
    messages = arguments["messages"]
    with_ids = bool(_THINKING_LEVEL_MODELS.search(found.model_id.lower()))
    body: dict[str, Any] = {"contents": _contents(messages, with_ids)}
    system = "\n\n".join(
        chat_message_text(m) for m in messages if m.get("role") == "system" and chat_message_text(m)
    )
    if system:
        body["systemInstruction"] = {"role": "user", "parts": [{"text": system}]}
    tools = arguments.get("tools") or ()
    if tools:
        body["tools"] = [{"functionDeclarations": [_declaration(tool) for tool in tools]}]
    config: dict[str, Any] = {}
    limit = arguments.get("max_tokens") or arguments.get("max_completion_tokens")
    if limit:
        config["maxOutputTokens"] = int(limit)
    effort = arguments.get("reasoning_effort")
    if effort:
        config["thinkingConfig"] = _thinking_config(found.model_id, str(effort))
    config.update(arguments.get("extra_body") or {})
    if config:
        body["generationConfig"] = config
    return body


def _thinking_config(model_id: str, effort: str) -> dict[str, Any]:
    thinking: dict[str, Any] = {"includeThoughts": True}
    lowered = model_id.lower()
    if _THINKING_LEVEL_MODELS.search(lowered):
        thinking["thinkingLevel"] = _PRO_LEVELS[effort] if "pro" in lowered else effort
        return thinking
    budgets = (
        _LITE_BUDGETS
        if "2.5-flash-lite" in lowered
        else _FLASH_BUDGETS
        if "2.5-flash" in lowered
        else _PRO_BUDGETS
        if "2.5-pro" in lowered
        else None
    )
    thinking["thinkingBudget"] = budgets[effort] if budgets else -1
    return thinking


def _contents(messages: Sequence[ChatMessage], with_ids: bool) -> list[dict[str, Any]]:
    """Gemini's turns; ``with_ids``: function calls and responses carry the call's id (Gemini 3
    and later require it, as pi's ``requiresToolCallId`` says)."""
    contents: list[dict[str, Any]] = []
    call_names: dict[str, str] = {}
    for message in messages:
        role = message.get("role")
        if role == "system":
            continue
        if role == "assistant":
            parts = _model_parts(message, call_names, with_ids)
            turn_role = "model"
        elif role == "tool":
            name = call_names.get(str(message.get("tool_call_id")), "")
            response: dict[str, Any] = {
                "name": name,
                "response": {"output": chat_message_text(message)},
            }
            if with_ids:
                response["id"] = message.get("tool_call_id")
            parts, turn_role = [{"functionResponse": response}], "user"
        else:
            parts, turn_role = _user_parts(message.get("content")), "user"
        if not parts:
            continue
        if contents and contents[-1]["role"] == turn_role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": turn_role, "parts": parts})
    return contents


def _user_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for part in content or ():
        if part.get("type") == "text" and part.get("text"):
            parts.append({"text": part["text"]})
        elif part.get("type") == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            if url.startswith("data:") and ";base64," in url:
                mime_type, _, data = url.removeprefix("data:").partition(";base64,")
                parts.append({"inlineData": {"mimeType": mime_type, "data": data}})
    return parts


def _model_parts(
    message: ChatMessage, call_names: dict[str, str], with_ids: bool
) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in message.get("thinking_blocks") or ():
        if block.get("type") == "thinking" and block.get("signature"):
            parts.append(
                {
                    "thought": True,
                    "text": block.get("thinking") or "",
                    "thoughtSignature": block["signature"],
                }
            )
    text = chat_message_text(message)
    if text:
        parts.append({"text": text})
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        call_names[str(call.get("id"))] = str(function.get("name") or "")
        function_call = {"name": function.get("name"), "args": _arguments(function)}
        if with_ids:
            function_call["id"] = call.get("id")
        part: dict[str, Any] = {"functionCall": function_call}
        if call.get(THOUGHT_SIGNATURE_FIELD):
            part["thoughtSignature"] = call[THOUGHT_SIGNATURE_FIELD]
        parts.append(part)
    return parts


def _arguments(function: Mapping[str, Any]) -> Any:
    raw = function.get("arguments")
    if not isinstance(raw, str) or not raw.strip():
        return {}
    try:
        return jiter.from_json(raw.encode())
    except ValueError:
        return {}


def _declaration(tool: Mapping[str, Any]) -> dict[str, Any]:
    function = tool.get("function") or {}
    return {
        "name": function.get("name"),
        "description": function.get("description", ""),
        "parametersJsonSchema": _without_declarations(function.get("parameters") or {}),
    }


def _without_declarations(schema: Any) -> Any:
    """The schema without JSON Schema's meta declarations, which Gemini refuses."""
    if isinstance(schema, Mapping):
        return {
            key: _without_declarations(value)
            for key, value in schema.items()
            if key not in _SCHEMA_DECLARATIONS
        }
    if isinstance(schema, list):
        return [_without_declarations(item) for item in schema]
    return schema


class GeminiTranslator:
    """One stream's ``GenerateContentResponse`` chunks → OpenAI chunk dicts."""

    def __init__(self) -> None:
        self._calls = 0

    def chunks(self, response: Mapping[str, Any]) -> list[Chunk]:
        error = response.get("error")
        if isinstance(error, Mapping):
            raise provider_error(
                int(error.get("code") or 500), _encode({"error": dict(error)}).decode(), ERROR_LABEL
            )
        found: list[Chunk] = []
        candidate = (response.get("candidates") or [{}])[0]
        for part in (candidate.get("content") or {}).get("parts") or ():
            found.extend(self._part(part))
        finish = candidate.get("finishReason")
        usage = response.get("usageMetadata")
        if finish or usage:
            chunk = _delta_chunk({}, self._finish_reason(finish) if finish else None)
            if isinstance(usage, Mapping):
                chunk["usage"] = _usage(usage)
            found.append(chunk)
        return found

    def _part(self, part: Mapping[str, Any]) -> list[Chunk]:
        signature = part.get("thoughtSignature")
        call = part.get("functionCall")
        if isinstance(call, Mapping):
            index, self._calls = self._calls, self._calls + 1
            tool_call: dict[str, Any] = {
                "index": index,
                "id": call.get("id") or "",
                "function": {
                    "name": call.get("name"),
                    "arguments": _encode(call.get("args") or {}).decode(),
                },
            }
            if signature:
                tool_call[THOUGHT_SIGNATURE_FIELD] = signature
            return [_delta_chunk({"tool_calls": [tool_call]})]
        found: list[Chunk] = []
        text = part.get("text")
        if isinstance(text, str) and text:
            field = "reasoning_content" if part.get("thought") else "content"
            found.append(_delta_chunk({field: text}))
        if signature:
            found.append(
                _delta_chunk({"thinking_blocks": [{"type": "thinking", "signature": signature}]})
            )
        return found

    def _finish_reason(self, reason: str) -> str:
        mapped = _FINISH_REASONS.get(reason)
        if mapped == "stop" and self._calls:
            return "tool_calls"
        return mapped or reason.lower()


def _usage(usage: Mapping[str, Any]) -> dict[str, Any]:
    output = int(usage.get("candidatesTokenCount") or 0) + int(usage.get("thoughtsTokenCount") or 0)
    return {
        "prompt_tokens": int(usage.get("promptTokenCount") or 0),
        "completion_tokens": output,
        "prompt_tokens_details": {"cached_tokens": int(usage.get("cachedContentTokenCount") or 0)},
    }


def _delta_chunk(delta: dict[str, Any], finish_reason: str | None = None) -> Chunk:
    choice: dict[str, Any] = {"index": 0, "delta": delta}
    if finish_reason is not None:
        choice["finish_reason"] = finish_reason
    return {"choices": [choice]}


async def stream_chunks(
    model: ModelConfig, arguments: Mapping[str, Any], headers: Mapping[str, str]
) -> AsyncGenerator[Chunk, None]:
    """The stream's chunks as dicts; a failure raises ``ProviderError``."""
    found = providers.route(model)
    if found is None:
        raise ValueError(f"{model.call_model} is not a model of the provider table")
    request_headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    api_key = arguments.get("api_key") or providers.environment_key(found.provider)
    if api_key:
        request_headers["x-goog-api-key"] = str(api_key)
    request_headers.update(headers)
    translator = GeminiTranslator()
    body = _encode(request_body(found, arguments))
    with http_stream.failures_as_provider_errors():
        async with http_stream.post(
            stream_url(found), body, request_headers, arguments.get("timeout")
        ) as response:
            if response.status >= 400:
                raise provider_error(response.status, await response.text(), ERROR_LABEL)
            async for line in response.lines():
                if line.startswith(_DATA_PREFIX):
                    for chunk in translator.chunks(
                        jiter.from_json(line[len(_DATA_PREFIX) :].strip())
                    ):
                        yield chunk
