"""Requests the server sends the client, and withdrawing one the server no longer waits for.

A permission question or a language-model request the server gives up on (an aborted turn, a
timeout) is cancelled with ``$/cancelRequest``; its future is dropped first, so an answer that
still arrives finds no one waiting (pygls logs it and moves on).
"""

from __future__ import annotations

import logging

from lsprotocol import types

logger = logging.getLogger(__name__)


def withdraw(server, request_id: str) -> None:
    """Cancel the request ``request_id`` the server sent the client."""
    protocol = server.protocol
    protocol._request_futures.pop(request_id, None)
    try:
        protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
    except Exception:  # noqa: BLE001 - the connection may be gone already
        logger.debug("could not cancel the request %s", request_id)
