"""What both endpoints of the scripted server do with a streamed reply besides their own events:
open the ``text/event-stream`` response, and stall or drop the connection as the reply says."""

from __future__ import annotations

import asyncio

from aiohttp import web

from pi_lsp.scripted_llm.replies import Reply


async def open_event_stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    return response


async def stall_or_drop(request: web.Request, reply: Reply) -> bool:
    """Wait the reply's ``hang_seconds``; True when it then drops the connection (done here)."""
    if reply.hang_seconds:
        await asyncio.sleep(reply.hang_seconds)
    if not reply.drop_connection:
        return False
    # Closing the transport without the terminating event is what a dropped connection looks like.
    if request.transport is not None:
        request.transport.close()
    return True
