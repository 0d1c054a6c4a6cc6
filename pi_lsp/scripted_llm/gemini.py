"""Gemini's streaming ``generateContent`` for the scripted server, from the same replies.

``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` streams one
``GenerateContentResponse`` per delta: the reply's reasoning as ``thought: true`` parts, its text
as text parts, each tool call as one whole ``functionCall`` part (Gemini does not stream
arguments). Like Gemini 3, the first part after the thoughts carries a ``thoughtSignature``
(``THOUGHT_SIGNATURE``), and so does every ``functionCall`` part. The last chunk has the
``finishReason`` (``STOP``, ``MAX_TOKENS``) and the ``usageMetadata``. An HTTP error reply gets
Google's error body, a mid-stream error an ``error`` object in the stream.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import web

from pi_lsp.scripted_llm.event_stream import open_event_stream, stall_or_drop
from pi_lsp.scripted_llm.replies import Reply

if TYPE_CHECKING:
    from pi_lsp.scripted_llm.server import ScriptedLLM

THOUGHT_SIGNATURE = "c2NyaXB0ZWQtdGhvdWdodC1zaWduYXR1cmU="  # base64, as Gemini's are
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


async def generate_content_endpoint(
    server: ScriptedLLM, request: web.Request
) -> web.StreamResponse:
    """Answer one ``streamGenerateContent`` request with the server's next reply."""
    body = await request.json()
    server.requests.append(body)
    server.request_headers.append(dict(request.headers))
    reply = server.next_reply(body)
    if reply.is_http_error:
        return web.json_response(_error(reply.status, reply), status=reply.status)
    try:
        return await _stream(request, body, reply, server)
    except (asyncio.CancelledError, ConnectionResetError):
        server.disconnects += 1
        raise


def _error(status: int, reply: Reply) -> dict[str, Any]:
    message = ((reply.error_body or {}).get("error") or {}).get("message", "")
    return {
        "error": {
            "code": status,
            "message": str(message),
            "status": _STATUS_NAMES.get(status, "UNKNOWN"),
        }
    }


def parts(reply: Reply) -> Iterator[dict[str, Any]]:
    """The reply's parts in stream order (tool calls whole, once their arguments are known)."""
    signed = False
    calls: dict[int, dict[str, Any]] = {}
    for delta in reply.deltas:
        if delta.get("reasoning_content"):
            yield {"text": delta["reasoning_content"], "thought": True}
        if delta.get("content"):
            part: dict[str, Any] = {"text": delta["content"]}
            if not signed:
                part["thoughtSignature"], signed = THOUGHT_SIGNATURE, True
            yield part
        for call in delta.get("tool_calls") or []:
            function = call.get("function") or {}
            draft = calls.setdefault(int(call.get("index", 0)), {"name": "", "arguments": ""})
            draft["name"] = draft["name"] or function.get("name") or ""
            draft["arguments"] += function.get("arguments") or ""
    for draft in calls.values():
        arguments = json.loads(draft["arguments"] or "{}")
        call_part = {"name": draft["name"], "args": arguments}
        yield {"functionCall": call_part, "thoughtSignature": THOUGHT_SIGNATURE}


def _usage(body: Mapping[str, Any], reply: Reply) -> dict[str, int]:
    given = dict(reply.usage or {})
    prompt = int(given.get("prompt_tokens", math.ceil(len(json.dumps(body)) / 4)))
    output = int(given.get("completion_tokens", max(1, len(json.dumps(reply.deltas)) // 4)))
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "totalTokenCount": prompt + output,
        "cachedContentTokenCount": int(given.get("cache_read_input_tokens", 0)),
    }


async def _stream(
    request: web.Request, body: Mapping[str, Any], reply: Reply, server: ScriptedLLM
) -> web.StreamResponse:
    response = await open_event_stream(request)
    for position, part in enumerate(parts(reply)):
        if position and reply.chunk_delay:
            await asyncio.sleep(reply.chunk_delay)
        await _send(response, {"candidates": [_candidate([part])]})
    if await stall_or_drop(request, reply):
        return response
    if reply.stream_error is not None:
        message = str(reply.stream_error.get("message", ""))
        await _send(response, {"error": {"code": 500, "message": message, "status": "INTERNAL"}})
    else:
        finish = "MAX_TOKENS" if reply.finish_reason == "length" else "STOP"
        last = {**_candidate([]), "finishReason": finish}
        await _send(response, {"candidates": [last], "usageMetadata": _usage(body, reply)})
    await response.write_eof()
    server.completed_streams += 1
    return response


def _candidate(content_parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"content": {"role": "model", "parts": content_parts}, "index": 0}


async def _send(response: web.StreamResponse, chunk: Mapping[str, Any]) -> None:
    await response.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
