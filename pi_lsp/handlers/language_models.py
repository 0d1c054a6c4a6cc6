"""The editor's language models over LSP: the client runs ``pi/languageModel/chat`` for the server.

A client that advertises ``capabilities.experimental.piLanguageModels`` in ``initialize`` gets a
``LspLanguageModelChannel`` connected to the service graph (``connect``); its model list arrives
as ``pi/languageModels`` and each request's answer as ``pi/languageModel/part`` notifications,
which pygls handles in arrival order, so every part is delivered before the request's response
resolves. A request the server gives up on (an aborted turn) is cancelled with
``$/cancelRequest``; an answer that arrives later finds no one waiting. A malformed notification
cannot be answered: it is logged and ignored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from pi_lsp import protocol
from pi_lsp.errors import InvalidParamsError
from pi_lsp.handlers.base import to_plain
from pi_lsp.handlers.client_requests import withdraw
from pi_lsp.llm.editor_models import LanguageModelRequestError
from pi_lsp.protocol import LanguageModelChatParams, LanguageModelChatResult, LanguageModelPart

logger = logging.getLogger(__name__)


class LspLanguageModelChannel:
    """Sends ``pi/languageModel/chat`` to the client and hands its parts to the waiting stream."""

    def __init__(self, server) -> None:
        self._server = server
        self._listeners: dict[str, Callable[[LanguageModelPart], None]] = {}

    async def chat(
        self, params: LanguageModelChatParams, on_part: Callable[[LanguageModelPart], None]
    ) -> LanguageModelChatResult:
        lsp = self._server.protocol
        request_id = f"pi-lm-{params.request_id}"
        self._listeners[params.request_id] = on_part
        try:
            future = lsp.send_request(
                protocol.LANGUAGE_MODEL_CHAT, protocol.to_json(params), msg_id=request_id
            )
            raw = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            withdraw(self._server, request_id)
            raise
        except JsonRpcException as error:
            raise LanguageModelRequestError(error.code, error.message) from None
        finally:
            self._listeners.pop(params.request_id, None)
        return _result(raw)

    def deliver(self, params: protocol.LanguageModelPartParams) -> None:
        listener = self._listeners.get(params.request_id)
        if listener is not None:
            listener(params.part)


def _result(raw: Any) -> LanguageModelChatResult:
    """The response's token counts; a client that sends none (or nonsense) just reports none."""
    plain = to_plain(raw)
    try:
        return protocol.converter.structure(plain or {}, LanguageModelChatResult)
    except Exception:  # noqa: BLE001 - counts are optional; the answer itself already arrived
        logger.warning(
            "ignored the token counts of a malformed %s result", protocol.LANGUAGE_MODEL_CHAT
        )
        return LanguageModelChatResult()


def advertised(capabilities: types.ClientCapabilities | None) -> bool:
    """Whether the client runs ``pi/languageModel/chat`` (``initialize``'s capabilities)."""
    experimental = to_plain(capabilities.experimental) if capabilities is not None else None
    return (
        isinstance(experimental, dict)
        and experimental.get(protocol.LANGUAGE_MODELS_CAPABILITY) is True
    )


def connect(ls, capabilities: types.ClientCapabilities | None) -> None:
    """Give the services a channel to the client's models, if it has any."""
    if ls.services is None or not advertised(capabilities):
        return
    ls.language_models = LspLanguageModelChannel(ls)
    ls.services.live.editor_models.connect(ls.language_models)


def on_language_models(ls, raw) -> None:
    params = _parsed(ls, protocol.LANGUAGE_MODELS, raw)
    if params is None:
        return
    ls.services.live.editor_models.replace(params.models)
    logger.info(
        "the editor's language models: %s", ", ".join(m.id for m in params.models) or "none"
    )


def on_language_model_part(ls, raw) -> None:
    params = _parsed(ls, protocol.LANGUAGE_MODEL_PART, raw)
    channel = getattr(ls, "language_models", None)
    if params is not None and channel is not None:
        channel.deliver(params)


def _parsed(ls, method: str, raw: Any) -> Any:
    if ls.services is None:
        return None
    try:
        return protocol.parse_params(method, to_plain(raw))
    except InvalidParamsError as problem:
        logger.warning("ignored %s: %s", method, problem.message)
        return None


def register(server) -> None:
    server.feature(protocol.LANGUAGE_MODELS)(on_language_models)
    server.feature(protocol.LANGUAGE_MODEL_PART)(on_language_model_part)
