"""The ``anthropic-messages`` wire API's request: chat messages → one Messages API body.

The input is what every transport gets: the OpenAI-style chat messages and tools of
``stream.chat_payload`` (pi's messages converted by ``messages.py``, with the Anthropic-style
``cache_control`` breakpoints of ``caching.py``). The body is the one litellm's Anthropic handler
built from them before (an integration test compares the two field by field):

- the system messages become ``system`` text blocks (their ``cache_control`` kept);
- runs of ``user`` and ``tool`` messages become one ``user`` message: text and image blocks
  (``image_url`` data URLs → base64 ``source``, other URLs → ``url`` sources), and a
  ``tool_result`` block per tool message (a tool message's own ``cache_control`` on it);
- an assistant message: its signed ``thinking_blocks`` first (``thinking`` with the signature,
  ``redacted_thinking`` with its data), its text, then a ``tool_use`` block per tool call with the
  arguments parsed back to JSON;
- tools: ``name``, ``input_schema``, ``type: "custom"``, ``description`` and ``cache_control``;
- thinking: an adaptive model (``supports_adaptive_thinking`` in the model table) gets
  ``thinking: {type: adaptive, display: summarized}`` and ``output_config.effort``; the others a
  budget (1024, 2048 or 4096 tokens for low, medium, high; ``minimal`` is Anthropic's minimum
  of 1024), with ``max_tokens`` the budget plus 4096 unless one is configured, and the budget
  kept below ``max_tokens``;
- ``max_tokens`` otherwise: the configured one, else the model table's output limit, else 4096.

Headers: ``x-api-key`` (or ``Authorization: Bearer`` for ``ANTHROPIC_AUTH_TOKEN``, as pi 1.6
and the Anthropic SDK take it), ``anthropic-version: 2023-06-01``, then the model's own headers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import jiter

from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.models import max_output_tokens_for, model_info

ANTHROPIC_VERSION = "2023-06-01"
AUTH_TOKEN_VARIABLE = "ANTHROPIC_AUTH_TOKEN"
MIN_THINKING_BUDGET = 1024
THINKING_ANSWER_TOKENS = 4096
"""What a thinking request leaves for the answer when no ``max_tokens`` is configured."""
DEFAULT_MAX_TOKENS = 4096
_THINKING_BUDGETS = {"minimal": MIN_THINKING_BUDGET, "low": 1024, "medium": 2048, "high": 4096}
_ADAPTIVE_EFFORTS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}
_MESSAGES_PATH = "/v1/messages"

ChatMessage = Mapping[str, Any]


class MissingKeyError(Exception):
    """No Anthropic key and no auth token: nothing is sent."""


def messages_url(base_url: str) -> str:
    """The Messages endpoint under ``base_url`` (the SDK appends ``/v1/messages``)."""
    base = base_url.rstrip("/")
    return base if base.endswith(_MESSAGES_PATH) else base + _MESSAGES_PATH


def request_headers(api_key: str | None, extra: Mapping[str, str]) -> dict[str, str]:
    """The request's headers; raises ``MissingKeyError`` without any credential."""
    headers = {
        "anthropic-version": ANTHROPIC_VERSION,
        "content-type": "application/json",
        "accept": "text/event-stream",
    }
    token = os.environ.get(AUTH_TOKEN_VARIABLE)
    if api_key:
        headers["x-api-key"] = api_key
    elif token:
        headers["authorization"] = f"Bearer {token}"
    elif not any(name.lower() in ("x-api-key", "authorization") for name in extra):
        raise MissingKeyError(
            "401 AuthenticationError: Missing Anthropic API Key - A call is being made to "
            "anthropic but no key is set either in the environment variables or via params. "
            "Please set `ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN` in your environment vars"
        )
    headers.update(extra)
    return headers


def request_body(
    model: ModelConfig,
    model_id: str,
    messages: Sequence[ChatMessage],
    tools: Sequence[Mapping[str, Any]],
    *,
    effort: str | None,
    max_tokens: int | None,
) -> dict[str, Any]:
    """The Messages API body (see the module docstring)."""
    system = [
        block
        for message in messages
        if message.get("role") == "system"
        for block in _text_blocks(message.get("content"))
    ]
    body: dict[str, Any] = {
        "model": model_id,
        "messages": _conversation([m for m in messages if m.get("role") != "system"]),
    }
    if tools:
        body["tools"] = [_tool(tool) for tool in tools]
    if system:
        body["system"] = system
    body.update(_thinking_and_limit(model, effort, max_tokens))
    body["stream"] = True
    return body


def _thinking_and_limit(
    model: ModelConfig, effort: str | None, max_tokens: int | None
) -> dict[str, Any]:
    table_limit = max_output_tokens_for(model) or DEFAULT_MAX_TOKENS
    if effort is None:
        return {"max_tokens": max_tokens or table_limit}
    if (model_info(model) or {}).get("supports_adaptive_thinking"):
        return {
            "thinking": {"type": "adaptive", "display": "summarized"},
            "output_config": {"effort": _ADAPTIVE_EFFORTS.get(effort, "high")},
            "max_tokens": max_tokens or table_limit,
        }
    budget = _THINKING_BUDGETS.get(effort, _THINKING_BUDGETS["high"])
    limit = max_tokens or budget + THINKING_ANSWER_TOKENS
    if limit <= MIN_THINKING_BUDGET:
        return {"max_tokens": limit}  # no room to think: Anthropic would refuse the budget
    return {
        "thinking": {"type": "enabled", "budget_tokens": min(budget, limit - 1)},
        "max_tokens": limit,
    }


def _conversation(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Anthropic's alternating turns: user and tool messages merge into one user turn."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.get("role") == "assistant" else "user"
        blocks = _assistant_blocks(message) if role == "assistant" else _user_blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _user_blocks(message: ChatMessage) -> list[dict[str, Any]]:
    if message.get("role") == "tool":
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.get("tool_call_id"),
            "content": message.get("content") or "",
        }
        return [_with_cache_control(block, message)]
    content = message.get("content")
    if isinstance(content, str):
        return _text_blocks(content)
    blocks: list[dict[str, Any]] = []
    for part in content or ():
        if part.get("type") == "image_url":
            blocks.append(_with_cache_control(_image(part), part))
        else:
            blocks.extend(_text_blocks([part]))
    return blocks


def _text_blocks(content: Any) -> list[dict[str, Any]]:
    """Text blocks of a string or of text parts; Anthropic refuses empty ones."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks = []
    for part in content or ():
        if part.get("type") == "text" and part.get("text"):
            blocks.append(_with_cache_control({"type": "text", "text": part["text"]}, part))
    return blocks


def _image(part: Mapping[str, Any]) -> dict[str, Any]:
    url = str((part.get("image_url") or {}).get("url", ""))
    if url.startswith("data:") and ";base64," in url:
        media_type, _, data = url.removeprefix("data:").partition(";base64,")
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }
    return {"type": "image", "source": {"type": "url", "url": url}}


def _assistant_blocks(message: ChatMessage) -> list[dict[str, Any]]:
    blocks = [dict(block) for block in message.get("thinking_blocks") or ()]
    blocks.extend(_text_blocks(message.get("content")))
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id"),
                "name": function.get("name"),
                "input": _arguments(function.get("arguments")),
            }
        )
    return blocks


def _arguments(raw: Any) -> Any:
    if not isinstance(raw, str) or not raw.strip():
        return {}
    try:
        return jiter.from_json(raw.encode())
    except ValueError:
        return {}


def _tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    function = tool.get("function") or {}
    converted: dict[str, Any] = {
        "name": function.get("name"),
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
        "type": "custom",
    }
    if function.get("description"):
        converted["description"] = function["description"]
    return _with_cache_control(converted, tool)


def _with_cache_control(block: dict[str, Any], source: Mapping[str, Any]) -> dict[str, Any]:
    control = source.get("cache_control")
    if control is not None:
        block["cache_control"] = dict(control)
    return block
