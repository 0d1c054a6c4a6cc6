"""OpenAI's Responses API (``POST /v1/responses``) for the scripted server, from the same replies.

A reply's deltas become output items, in the order the real API streams them: a ``reasoning``
item whose summary is the reply's reasoning (``response.reasoning_summary_text.delta``; the done
item carries an ``encrypted_content`` for the next turn to send back), a ``message`` item
(``response.output_text.delta``) and a ``function_call`` item per tool call
(``response.function_call_arguments.delta``). ``response.completed`` carries the usage; a
``length`` reply ends ``incomplete`` (``max_output_tokens``); an HTTP error reply gets OpenAI's
error body, a mid-stream error a ``response.failed`` event.
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
from pi_lsp.scripted_llm.replies import Reply

if TYPE_CHECKING:
    from pi_lsp.scripted_llm.server import ScriptedLLM

_response_ids = itertools.count(1)


async def responses_endpoint(server: ScriptedLLM, request: web.Request) -> web.StreamResponse:
    """Answer one Responses API request with the server's next reply."""
    body = await request.json()
    server.requests.append(body)
    server.request_headers.append(dict(request.headers))
    reply = server.next_reply(body)
    if reply.is_http_error:
        return web.json_response(dict(reply.error_body or {}), status=reply.status)
    response_id = f"resp_scripted_{next(_response_ids)}"
    try:
        return await _stream(request, response_id, body, reply, server)
    except (asyncio.CancelledError, ConnectionResetError):
        server.disconnects += 1
        raise


def _usage(body: Mapping[str, Any], reply: Reply) -> dict[str, Any]:
    given = dict(reply.usage or {})
    prompt = int(given.get("prompt_tokens", math.ceil(len(json.dumps(body)) / 4)))
    output = int(given.get("completion_tokens", max(1, len(json.dumps(reply.deltas)) // 4)))
    cached = int(given.get("cache_read_input_tokens", 0))
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + output,
    }


def output_events(reply: Reply, response_id: str) -> Iterator[dict[str, Any]]:
    """The ``response.output_item.*`` events and their deltas, items in stream order."""
    index = -1
    open_item: dict[str, Any] | None = None
    for delta in reply.deltas:
        for kind, piece, call in _pieces(delta):
            same_call = (
                call is not None
                and open_item is not None
                and open_item.get("_call_index") == call.get("index", 0)
            )
            if (
                open_item is None
                or open_item["type"] != kind
                or (kind == "function_call" and not same_call)
            ):
                if open_item is not None:
                    yield _done(index, open_item)
                index += 1
                open_item = _new_item(kind, index, response_id, call)
                yield {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": _public(open_item),
                }
            yield from _delta(index, open_item, piece)
    if open_item is not None:
        yield _done(index, open_item)


def _pieces(delta: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    if delta.get("reasoning_content"):
        yield "reasoning", delta["reasoning_content"], None
    if delta.get("content"):
        yield "message", delta["content"], None
    for call in delta.get("tool_calls") or []:
        function = call.get("function") or {}
        yield "function_call", function.get("arguments") or "", call


def _new_item(kind: str, index: int, response_id: str, call: Any) -> dict[str, Any]:
    item_id = f"{response_id}_{index}"
    if kind == "reasoning":
        return {"type": "reasoning", "id": f"rs_{item_id}", "summary": [], "_text": ""}
    if kind == "message":
        return {
            "type": "message",
            "id": f"msg_{item_id}",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
            "_text": "",
        }
    function = call.get("function") or {}
    return {
        "type": "function_call",
        "id": f"fc_{item_id}",
        "call_id": call.get("id") or f"call_scripted_{index}",
        "name": function.get("name") or "",
        "arguments": "",
        "status": "in_progress",
        "_call_index": call.get("index", 0),
        "_text": "",
    }


def _delta(index: int, item: dict[str, Any], piece: str) -> Iterator[dict[str, Any]]:
    if not piece:
        return
    item["_text"] += piece
    kinds = {
        "reasoning": "response.reasoning_summary_text.delta",
        "message": "response.output_text.delta",
        "function_call": "response.function_call_arguments.delta",
    }
    event: dict[str, Any] = {
        "type": kinds[item["type"]],
        "output_index": index,
        "item_id": item["id"],
        "delta": piece,
    }
    if item["type"] == "reasoning":
        event["summary_index"] = 0
    yield event


def _done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    text = item["_text"]
    if item["type"] == "reasoning":
        item["summary"] = [{"type": "summary_text", "text": text}]
        item["encrypted_content"] = f"scripted-encrypted-{item['id']}"
    elif item["type"] == "message":
        item["content"] = [{"type": "output_text", "text": text, "annotations": []}]
        item["status"] = "completed"
    else:
        item["arguments"] = text
        item["status"] = "completed"
    return {"type": "response.output_item.done", "output_index": index, "item": _public(item)}


def _public(item: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in item.items() if not key.startswith("_")}


async def _stream(
    request: web.Request,
    response_id: str,
    body: Mapping[str, Any],
    reply: Reply,
    server: ScriptedLLM,
) -> web.StreamResponse:
    response = await open_event_stream(request)
    model = str(body.get("model", "scripted"))
    created = {
        "id": response_id,
        "object": "response",
        "model": model,
        "status": "in_progress",
        "output": [],
    }
    await _send(response, {"type": "response.created", "response": created})
    items = []
    for position, event in enumerate(output_events(reply, response_id)):
        if position and reply.chunk_delay and event["type"].endswith(".delta"):
            await asyncio.sleep(reply.chunk_delay)
        if event["type"] == "response.output_item.done":
            items.append(event["item"])
        await _send(response, event)
    if await stall_or_drop(request, reply):
        return response
    if reply.stream_error is not None:
        error = {"code": "server_error", "message": str(reply.stream_error.get("message", ""))}
        failed = {**created, "status": "failed", "error": error}
        await _send(response, {"type": "response.failed", "response": failed})
    else:
        finished = {**created, "status": "completed", "output": items, "usage": _usage(body, reply)}
        if reply.finish_reason == "length":
            finished["status"] = "incomplete"
            finished["incomplete_details"] = {"reason": "max_output_tokens"}
        await _send(
            response,
            {
                "type": "response.completed"
                if finished["status"] == "completed"
                else "response.incomplete",
                "response": finished,
            },
        )
    await response.write_eof()
    server.completed_streams += 1
    return response


async def _send(response: web.StreamResponse, event: Mapping[str, Any]) -> None:
    await response.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
