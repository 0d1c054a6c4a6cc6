"""Permission questions over LSP: the standard ``window/showMessageRequest``.

Every LSP client can answer it: VS Code shows a notification with the three buttons (the pi
extension shows a modal instead), Neovim's built-in handler asks through ``vim.ui.select``. The
message names the tool, the command or path, a short change summary and why it asks. A question
the server withdraws (timeout, aborted turn) is cancelled with ``$/cancelRequest``; an answer
that still arrives after that is ignored.
"""

from __future__ import annotations

import asyncio
import uuid

from lsprotocol import types

from pi_lsp.agent.permission_policy import PermissionQuestion
from pi_lsp.agent.permissions import ANSWERS, Answer
from pi_lsp.handlers.client_requests import withdraw


class LspPermissionAsker:
    """Asks the editor with ``window/showMessageRequest``."""

    def __init__(self, server) -> None:
        self._server = server

    async def ask(self, question: PermissionQuestion) -> Answer | None:
        protocol = self._server.protocol
        request_id = f"pi-permission-{uuid.uuid4()}"
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=question.message,
            actions=[types.MessageActionItem(title=title) for title in ANSWERS],
        )
        future = protocol.send_request(types.WINDOW_SHOW_MESSAGE_REQUEST, params, msg_id=request_id)
        try:
            chosen = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            withdraw(self._server, request_id)
            raise
        title = getattr(chosen, "title", None)
        return Answer(title) if title in ANSWERS else None
