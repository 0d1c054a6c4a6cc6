"""The scripted server's Anthropic Messages endpoint: ``POST /v1/messages``, streamed or not.

The replies are the same ``Reply`` objects the OpenAI endpoint serves (from the same queue),
translated into Anthropic's shapes: ``reasoning_content`` deltas become a ``thinking`` block
closed by a ``signature_delta`` (so the thinking can be replayed), a ``redacted_thinking`` delta a
``redacted_thinking`` block carrying that data, ``content`` deltas a ``text``
block, tool-call deltas ``tool_use`` blocks fed by ``input_json_delta``; the finish reason becomes
``stop_reason`` (``end_turn``, ``tool_use``, ``max_tokens``). An HTTP error reply gets Anthropic's
error body, a mid-stream error an ``error`` event. The usage comes from the server's
``PromptCache``, which follows Anthropic's caching rules for the request's ``cache_control``
breakpoints (``prompt_cache.py``), unless the reply scripts its own numbers.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import web

from pi_lsp.scripted_llm.event_stream import open_event_stream, stall_or_drop
from pi_lsp.scripted_llm.prompt_cache import CacheRequestError, CacheUsage
from pi_lsp.scripted_llm.replies import Delta, Reply

if TYPE_CHECKING:
    from pi_lsp.scripted_llm.server import ScriptedLLM

_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_message_ids = itertools.count(1)
_ONE_BLOCK_EACH = ("tool_use", "redacted_thinking")


async def messages_endpoint(server: ScriptedLLM, request: web.Request) -> web.StreamResponse:
    """Answer one Messages API request with the server's next reply."""
    body = await request.json()
    server.requests.append(body)
    server.request_headers.append(dict(request.headers))
    reply = server.next_reply(body)
    if reply.is_http_error:
        return web.json_response(_error_body(reply), status=reply.status)
    try:
        usage = _usage(server, body, reply)
    except CacheRequestError as problem:
        error = {"type": "invalid_request_error", "message": str(problem)}
        return web.json_response({"type": "error", "error": error}, status=400)
    message_id = f"msg_scripted_{next(_message_ids)}"
    model = str(body.get("model", "scripted"))
    if not body.get("stream"):
        return web.json_response(_message_json(message_id, model, reply, usage))
    try:
        return await _stream(request, message_id, model, reply, usage, server)
    except (asyncio.CancelledError, ConnectionResetError):
        server.disconnects += 1
        raise


def _usage(server: ScriptedLLM, body: Mapping[str, Any], reply: Reply) -> dict[str, Any]:
    simulated = server.prompt_cache.anthropic_usage(body)
    given = dict(reply.usage or {})
    if "prompt_tokens" in given:
        simulated = CacheUsage(
            int(given["prompt_tokens"]),
            int(given.get("cache_read_input_tokens", 0)),
            int(given.get("cache_creation_input_tokens", 0)),
        )
    output = given.get("completion_tokens", _output_tokens(reply))
    return {
        "input_tokens": simulated.input_tokens,
        "cache_creation_input_tokens": simulated.cache_write,
        "cache_read_input_tokens": simulated.cache_read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": simulated.cache_write - simulated.cache_write_1h,
            "ephemeral_1h_input_tokens": simulated.cache_write_1h,
        },
        "output_tokens": output,
    }


def _output_tokens(reply: Reply) -> int:
    characters = sum(len(json.dumps(delta)) for delta in reply.deltas if "role" not in delta)
    return max(1, math.ceil(characters / 4))


def _error_body(reply: Reply) -> dict[str, Any]:
    error = (reply.error_body or {}).get("error") or {}
    kind = _ERROR_TYPES.get(reply.status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": str(error.get("message", ""))}}


# ------------------------------------------------------------------ content blocks


def content_events(reply: Reply) -> Iterator[dict[str, Any]]:
    """The ``content_block_*`` events of a reply, blocks opened and closed in stream order."""
    index = -1
    open_kind: str | None = None
    open_tool: int | None = None
    for delta in reply.deltas:
        for kind, start, piece, tool_index in _pieces(delta):
            if kind != open_kind or (kind in _ONE_BLOCK_EACH and tool_index != open_tool):
                if open_kind is not None:
                    yield from _close(index, open_kind)
                index += 1
                open_kind, open_tool = kind, tool_index
                yield {"type": "content_block_start", "index": index, "content_block": start}
            if piece is not None:
                yield {"type": "content_block_delta", "index": index, "delta": piece}
    if open_kind is not None:
        yield from _close(index, open_kind)


def _pieces(delta: Delta) -> Iterator[tuple[str, dict[str, Any], dict[str, Any] | None, Any]]:
    if delta.get("redacted_thinking"):
        # Anthropic sends a redacted block whole, in its start event; one block per delta.
        redacted = {"type": "redacted_thinking", "data": delta["redacted_thinking"]}
        yield "redacted_thinking", redacted, None, id(delta)
    if delta.get("reasoning_content"):
        thinking = {"type": "thinking_delta", "thinking": delta["reasoning_content"]}
        yield "thinking", {"type": "thinking", "thinking": "", "signature": ""}, thinking, None
    if delta.get("content"):
        text = {"type": "text_delta", "text": delta["content"]}
        yield "text", {"type": "text", "text": ""}, text, None
    for call in delta.get("tool_calls") or []:
        function = call.get("function") or {}
        start: dict[str, Any] = {
            "type": "tool_use",
            "id": call.get("id") or f"toolu_scripted_{call.get('index', 0)}",
            "name": function.get("name") or "",
            "input": {},
        }
        arguments = function.get("arguments")
        piece = {"type": "input_json_delta", "partial_json": arguments} if arguments else None
        yield "tool_use", start, piece, call.get("index", 0)


def _close(index: int, kind: str) -> Iterator[dict[str, Any]]:
    if kind == "thinking":
        signature = {"type": "signature_delta", "signature": f"scripted-signature-{index}"}
        yield {"type": "content_block_delta", "index": index, "delta": signature}
    yield {"type": "content_block_stop", "index": index}


# ------------------------------------------------------------------ responses


async def _stream(
    request: web.Request,
    message_id: str,
    model: str,
    reply: Reply,
    usage: dict[str, Any],
    server: ScriptedLLM,
) -> web.StreamResponse:
    response = await open_event_stream(request)
    start_usage = {**usage, "output_tokens": 1}
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    await _send(response, {"type": "message_start", "message": message})
    for position, event in enumerate(content_events(reply)):
        if position and reply.chunk_delay and event["type"] == "content_block_delta":
            await asyncio.sleep(reply.chunk_delay)
        await _send(response, event)
    if await stall_or_drop(request, reply):
        return response
    if reply.stream_error is not None:
        error = {"type": "api_error", "message": str(reply.stream_error.get("message", ""))}
        await _send(response, {"type": "error", "error": error})
    else:
        stop_reason = _STOP_REASONS.get(str(reply.finish_reason), "end_turn")
        delta = {"stop_reason": stop_reason, "stop_sequence": None}
        final_usage = {"output_tokens": usage["output_tokens"]}
        await _send(response, {"type": "message_delta", "delta": delta, "usage": final_usage})
        await _send(response, {"type": "message_stop"})
    await response.write_eof()
    server.completed_streams += 1
    return response


async def _send(response: web.StreamResponse, event: Mapping[str, Any]) -> None:
    await response.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())


def _message_json(
    message_id: str, model: str, reply: Reply, usage: dict[str, Any]
) -> dict[str, Any]:
    """The non-streaming form: the blocks the events would have built."""
    blocks: list[dict[str, Any]] = []
    arguments: dict[int, str] = {}
    for event in content_events(reply):
        if event["type"] == "content_block_start":
            blocks.append(dict(event["content_block"]))
            continue
        if event["type"] != "content_block_delta":
            continue
        block, delta = blocks[event["index"]], event["delta"]
        if delta["type"] == "text_delta":
            block["text"] += delta["text"]
        elif delta["type"] == "thinking_delta":
            block["thinking"] += delta["thinking"]
        elif delta["type"] == "signature_delta":
            block["signature"] = delta["signature"]
        elif delta["type"] == "input_json_delta":
            arguments[event["index"]] = arguments.get(event["index"], "") + delta["partial_json"]
    for index, text in arguments.items():
        blocks[index]["input"] = json.loads(text or "{}")
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": _STOP_REASONS.get(str(reply.finish_reason), "end_turn"),
        "stop_sequence": None,
        "usage": usage,
    }
