"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for tests and demos.

``POST /v1/chat/completions`` answers with the next queued ``Reply`` (streamed as SSE when the
request asks for ``stream``, else one JSON completion); ``GET /v1/models`` lists one model.
``POST /v1/messages`` is Anthropic's Messages API, answered from the same queue
(``anthropic.py``), with a simulated prompt cache that follows the request's ``cache_control``
breakpoints; ``POST /v1/responses`` is OpenAI's Responses API (``responses.py``), ``POST
/v1beta/models/{model}:streamGenerateContent`` Gemini's (``gemini.py``). With
``simulate_openai_cache`` the chat-completions usage reports OpenAI's automatic prefix caching too
(``prompt_cache.py``). Every request body is recorded. When the queue is empty
the answer is a clear 500 "no scripted reply", so a test that forgot a reply fails loudly instead
of hanging.

Control endpoints let another process script a running server: ``GET /__requests`` returns the
recorded bodies, ``GET /__headers`` the headers of the same requests (so a test can see which
API key arrived), ``POST /__enqueue`` adds replies given as JSON script entries, and ``GET
/__gates`` / ``POST /__release`` see and open the gates that hold answers open (``gates.py``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Self

from aiohttp import web

from pi_lsp.scripted_llm.anthropic import messages_endpoint
from pi_lsp.scripted_llm.event_stream import open_event_stream, stall_or_drop
from pi_lsp.scripted_llm.gates import Gates
from pi_lsp.scripted_llm.gemini import generate_content_endpoint
from pi_lsp.scripted_llm.prompt_cache import PromptCache
from pi_lsp.scripted_llm.replies import Reply, error, reply_from_json, usage_for
from pi_lsp.scripted_llm.responses import responses_endpoint

SCRIPTED_MODEL_ID = "scripted"
_NO_REPLY = error(500, "no scripted reply: the scripted LLM server's queue is empty")


class ScriptedLLM:
    """An OpenAI-compatible server whose answers are
    queued by the test; an async context manager."""

    def __init__(
        self,
        replies: tuple[Reply, ...] = (),
        *,
        port: int = 0,
        simulate_openai_cache: bool = False,
        responder: Callable[[Mapping[str, Any]], Reply | None] | None = None,
    ) -> None:
        self._queue: deque[Reply] = deque(replies)
        self.responder = responder
        """Asked first for each request's reply (by its body), before the queue: a scripted
        model whose answers depend on what it is asked (the benchmarks' long sessions)."""
        self.prompt_cache = PromptCache()
        """The simulated provider cache behind both endpoints' usage (see ``prompt_cache.py``)."""
        self.simulate_openai_cache = simulate_openai_cache
        self._requested_port = port
        self._runner: web.AppRunner | None = None
        self._ids = itertools.count(1)
        self.port = 0
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        """The headers of each recorded request, in the same order (``Authorization`` included)."""
        # Streams the client closed before their end:
        # evidence that an abort released the connection.
        self.disconnects = 0
        self.completed_streams = 0
        self.gates = Gates()
        """The gates that hold answers open until the test releases them."""

    @property
    def base_url(self) -> str:
        """The OpenAI ``api_base`` of this server (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        """The Anthropic base URL of this server (clients add ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def gemini_url(self) -> str:
        """The Gemini base URL of this server (clients add ``/models/…``)."""
        return f"http://127.0.0.1:{self.port}/v1beta"

    def enqueue(self, *replies: Reply) -> None:
        """Queue replies; each chat-completion request takes the oldest."""
        self._queue.extend(replies)

    def next_reply(self, body: Mapping[str, Any] | None = None) -> Reply:
        """The responder's reply to ``body``, else the oldest queued one, else a clear 500
        "no scripted reply"."""
        if self.responder is not None and body is not None:
            answer = self.responder(body)
            if answer is not None:
                return answer
        return self._queue.popleft() if self._queue else _NO_REPLY

    async def start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_post("/chat/completions", self._chat_completions)
        app.router.add_post("/v1/messages", self._anthropic_messages)
        app.router.add_post("/v1/responses", self._openai_responses)
        app.router.add_post("/v1beta/models/{target}", self._gemini_generate_content)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/__requests", self._recorded_requests)
        app.router.add_get("/__headers", self._recorded_headers)
        app.router.add_post("/__enqueue", self._enqueue_from_json)
        app.router.add_get("/__gates", self._gates_reached)
        app.router.add_post("/__release", self._release_gate)
        # Cancelling the handler when the client goes away is what lets tests count disconnects.
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self._requested_port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def _models(self, request: web.Request) -> web.Response:
        model = {"id": SCRIPTED_MODEL_ID, "object": "model", "created": 0, "owned_by": "scripted"}
        return web.json_response({"object": "list", "data": [model]})

    async def _recorded_requests(self, request: web.Request) -> web.Response:
        return web.json_response(self.requests)

    async def _recorded_headers(self, request: web.Request) -> web.Response:
        return web.json_response(self.request_headers)

    async def _enqueue_from_json(self, request: web.Request) -> web.Response:
        payload = await request.json()
        entries = payload if isinstance(payload, list) else [payload]
        try:
            self.enqueue(*(reply_from_json(entry) for entry in entries))
        except (TypeError, ValueError) as problem:
            return web.json_response({"error": str(problem)}, status=400)
        return web.json_response({"queued": len(entries), "pending": len(self._queue)})

    async def _gates_reached(self, request: web.Request) -> web.Response:
        return web.json_response(self.gates.names_reached())

    async def _release_gate(self, request: web.Request) -> web.Response:
        payload = await request.json()
        self.gates.release(str(payload.get("gate")))
        return web.json_response({"released": payload.get("gate")})

    async def _gemini_generate_content(self, request: web.Request) -> web.StreamResponse:
        return await generate_content_endpoint(self, request)

    async def _openai_responses(self, request: web.Request) -> web.StreamResponse:
        return await responses_endpoint(self, request)

    async def _anthropic_messages(self, request: web.Request) -> web.StreamResponse:
        return await messages_endpoint(self, request)

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.request_headers.append(dict(request.headers))
        reply = self.next_reply(body)
        if reply.is_http_error:
            return web.json_response(dict(reply.error_body or {}), status=reply.status)
        completion_id = f"chatcmpl-scripted-{next(self._ids)}"
        usage = usage_for(reply, body.get("messages", []))
        if self.simulate_openai_cache and not (reply.usage or {}).get("prompt_tokens"):
            usage = self._with_cached_prefix(body, usage)
        if not body.get("stream"):
            return web.json_response(_completion_json(completion_id, body, reply, usage))
        try:
            return await _stream(request, completion_id, body, reply, usage, self)
        except (asyncio.CancelledError, ConnectionResetError):
            self.disconnects += 1
            raise

    def _with_cached_prefix(self, body: Mapping[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
        cached = self.prompt_cache.openai_usage(body)
        prompt = cached.prompt_tokens
        details = {**usage.get("prompt_tokens_details", {}), "cached_tokens": cached.cache_read}
        return {
            **usage,
            "prompt_tokens": prompt,
            "total_tokens": prompt + usage["completion_tokens"],
            "prompt_tokens_details": details,
        }


async def _stream(
    request: web.Request,
    completion_id: str,
    body: Mapping[str, Any],
    reply: Reply,
    usage: dict[str, Any],
    server: ScriptedLLM,
) -> web.StreamResponse:
    response = await open_event_stream(request)
    chunk = _chunk_factory(completion_id, str(body.get("model", SCRIPTED_MODEL_ID)))
    # A gate holds the answer once the client has seen its start and first piece of content.
    gate_at = min(2, len(reply.deltas)) if reply.gate is not None else -1
    for index, delta in enumerate(reply.deltas):
        if index and reply.chunk_delay:
            await asyncio.sleep(reply.chunk_delay)
        if index == gate_at:
            await server.gates.pass_through(str(reply.gate))
        await _send(response, chunk(delta, None))
    if gate_at == len(reply.deltas):
        await server.gates.pass_through(str(reply.gate))
    if await stall_or_drop(request, reply):
        return response
    if reply.stream_error is not None:
        await _send(response, {"error": dict(reply.stream_error)})
    else:
        await _send(response, chunk({}, reply.finish_reason))
        if (body.get("stream_options") or {}).get("include_usage"):
            await _send(
                response,
                {
                    "id": completion_id,
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body.get("model"),
                    "choices": [],
                    "usage": usage,
                },
            )
        await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    server.completed_streams += 1
    return response


async def _send(response: web.StreamResponse, event: Mapping[str, Any]) -> None:
    await response.write(f"data: {json.dumps(event)}\n\n".encode())


def _chunk_factory(completion_id: str, model: str):
    created = int(time.time())

    def chunk(delta: Mapping[str, Any], finish_reason: str | None) -> dict[str, Any]:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish_reason}],
        }

    return chunk


def _completion_json(
    completion_id: str, body: Mapping[str, Any], reply: Reply, usage: dict[str, Any]
) -> dict[str, Any]:
    """The non-streaming form of a reply: the deltas merged into one message."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: dict[int, dict[str, Any]] = {}
    for delta in reply.deltas:
        if "content" in delta:
            message["content"] = (message["content"] or "") + delta["content"]
        if "reasoning_content" in delta:
            message["reasoning_content"] = (
                message.get("reasoning_content", "") + delta["reasoning_content"]
            )
        for call in delta.get("tool_calls", []):
            merged = calls.setdefault(
                call["index"],
                {
                    "id": call.get("id"),
                    "type": "function",
                    "function": {"name": "", "arguments": ""},
                },
            )
            merged["function"]["name"] += call.get("function", {}).get("name", "") or ""
            merged["function"]["arguments"] += call.get("function", {}).get("arguments", "") or ""
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", SCRIPTED_MODEL_ID),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": usage,
    }
