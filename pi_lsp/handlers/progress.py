"""LSP work-done progress for long requests, on a token the client offered (or nothing)."""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types

logger = logging.getLogger(__name__)


class Progress:
    """``$/progress`` begin/report/end on one client
    token; without a token every call is a no-op."""

    def __init__(self, server: Any, token: int | str | None, title: str) -> None:
        self._server = server
        self._token = token
        if token is not None:
            self._send(
                lambda: server.work_done_progress.begin(
                    token, types.WorkDoneProgressBegin(title=title)
                )
            )

    def report(self, message: str) -> None:
        if self._token is not None:
            self._send(
                lambda: self._server.work_done_progress.report(
                    self._token, types.WorkDoneProgressReport(message=message)
                )
            )

    def end(self) -> None:
        if self._token is not None:
            self._send(
                lambda: self._server.work_done_progress.end(
                    self._token, types.WorkDoneProgressEnd()
                )
            )
            self._token = None

    @staticmethod
    def _send(action) -> None:
        try:
            action()
        except Exception:  # progress is cosmetic; the request goes on without it
            logger.exception("work-done progress failed")
