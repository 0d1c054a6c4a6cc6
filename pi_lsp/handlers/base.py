"""The adapter every ``pi/*`` handler goes through: validate params, call, map errors.

A handler function takes ``(services, params)`` with params already validated against the
method's type in ``protocol.py`` and returns the method's result type from there, which goes on
the wire through ``protocol.to_json``. ``PiError``s become JSON-RPC errors
with their own code and message; anything unexpected is logged with its traceback and reported as
an internal error, and the server keeps serving. The same function also serves the method's
``workspace/executeCommand`` form (``pi.prompt`` for ``pi/prompt``).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInternalError

from pi_lsp import protocol
from pi_lsp.errors import InvalidParamsError, PiError
from pi_lsp.llm.secrets import redact_secrets
from pi_lsp.services import Services

logger = logging.getLogger(__name__)

Handler = Callable[[Services, Any], Any | Awaitable[Any]]
HANDLERS: dict[str, Handler] = {}
"""Every registered ``pi/*`` method and its handler function."""


def pi_request(method: str) -> Callable[[Handler], Handler]:
    """Declare ``function`` as the handler of ``method`` (registered by ``register_requests``)."""

    def decorate(function: Handler) -> Handler:
        HANDLERS[method] = function
        return function

    return decorate


async def dispatch(server: Any, method: str, raw_params: Any) -> Any:
    """Run the handler of ``method`` on raw params, with pi-lsp's error mapping."""
    try:
        try:
            params = protocol.parse_params(method, to_plain(raw_params))
        except RecursionError:
            raise InvalidParamsError(f"{method}: params are nested too deep") from None
        services = server.services
        if services is None:
            raise JsonRpcException(code=-32002, message="the server is not initialized yet")
        result = HANDLERS[method](services, params)
        if inspect.isawaitable(result):
            result = await result
        return protocol.to_json(result)
    except PiError as error:
        raise JsonRpcException(
            code=error.code, message=redact_secrets(error.message), data=error.data
        ) from None
    except JsonRpcException:
        raise
    except Exception as error:
        # A bug's text may quote anything, a key included: the reply says it without (and the
        # log's SecretFilter does the same for the traceback).
        logger.exception("%s failed", method)
        raise JsonRpcInternalError(message=redact_secrets(f"{method} failed: {error}")) from None


def register_requests(server: Any) -> None:
    """Register each ``pi/*`` method and its ``pi.*`` command on ``server``."""
    for method in HANDLERS:
        server.feature(method)(_request_handler(method))
        server.command(protocol.command_name(method))(_command_handler(method))


def _request_handler(method: str):
    async def handle(ls, params: Any) -> Any:
        return await dispatch(ls, method, params)

    handle.__name__ = f"on_{protocol.command_name(method).replace('.', '_')}"
    return handle


def _command_handler(method: str):
    async def handle(ls, *arguments: Any) -> Any:
        return await dispatch(ls, method, arguments[0] if arguments else {})

    return handle


def to_plain(value: Any) -> Any:
    """Turn the namedtuples pygls makes of untyped JSON back into dicts and lists."""
    if hasattr(value, "_asdict"):
        return {key: to_plain(item) for key, item in value._asdict().items()}
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(item) for item in value]
    return value
