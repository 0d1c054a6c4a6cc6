"""JSON that is no JSON-RPC 2.0 message, and the Invalid Request answer it is owed.

pygls decodes a body with ``json.loads(body, object_hook=protocol.structure_message)`` and hands
what comes out to ``handle_message``, over stdio, TCP and the shared server alike. What is not a
request, a notification or a response (``{}``, ``[1, 2, 3]``, ``"text"``, an object without a
``method``, a ``method`` that is not a string, a ``jsonrpc`` other than ``"2.0"``) pygls logs and
drops, and the client that sent it waits for an answer for ever. JSON-RPC 2.0 answers it with
Invalid Request (-32600), with the message's id when it can be read and null when not.

Batches (a JSON array) are JSON-RPC 2.0 but not LSP, which sends one message per frame; no LSP
client reads an array of answers. An array therefore gets one Invalid Request with a null id,
whatever it holds: for ``[]`` and for an array of non-messages that is what JSON-RPC 2.0 answers
too (as a single answer, or one per element); the requests of a batch of real requests are not
run.

Responses (an object with ``result`` or ``error`` and no ``method``) are never answered, even
when malformed: an answer to an answer could reach a client as the reply to a request of its own.
"""

from __future__ import annotations

import logging
from typing import Any

from pygls.exceptions import JsonRpcInvalidRequest

from pi_lsp.errors import echoed

logger = logging.getLogger(__name__)

BATCHES_UNSUPPORTED = "a batch (a JSON array) is not supported: LSP sends one message per frame"


class NotAMessage(dict):
    """An object with a ``jsonrpc`` member that is no JSON-RPC 2.0 message.

    Still the object it was: nested in another message's params it is just JSON, and only at the
    top of a body is it answered (``invalid_request``)."""

    def __init__(self, data: dict[str, Any], problem: str) -> None:
        super().__init__(data)
        self.problem = problem


def readable_id(message: dict[str, Any]) -> int | str | None:
    """The message's id when LSP could send it back (an integer or a string), else None."""
    request_id = message.get("id")
    if isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    ):
        return request_id
    return None


def is_response(message: dict[str, Any]) -> bool:
    return "method" not in message and ("result" in message or "error" in message)


def problem_with(message: dict[str, Any]) -> str | None:
    """Why an object is no JSON-RPC 2.0 request or notification (None when it is one, or when it
    is a response, which is never answered)."""
    if is_response(message):
        return None
    if message.get("jsonrpc") != "2.0":
        return f'"jsonrpc" must be "2.0", not {echoed(message.get("jsonrpc", "missing"), 40)}'
    if "method" not in message:
        return 'a request or notification needs a "method"'
    if not isinstance(message["method"], str):
        return f'"method" must be a string, not {echoed(message["method"], 40)}'
    if "id" in message and readable_id(message) is None:
        return f'"id" must be an integer or a string, not {echoed(message["id"], 40)}'
    return None


def is_message(decoded: object) -> bool:
    """Whether pygls structured a decoded body into a message (a request, a notification or a
    response): what it did not is a list, a plain dict or a ``NotAMessage``, or a scalar."""
    return hasattr(decoded, "jsonrpc") and not isinstance(decoded, dict)


def invalid_request(decoded: object) -> tuple[int | str | None, str] | None:
    """The id and the reason of the Invalid Request owed for a decoded body that is no message
    (``is_message`` is false), or None for a response, which is never answered."""
    if isinstance(decoded, NotAMessage):
        return readable_id(decoded), decoded.problem
    if isinstance(decoded, list):
        return None, BATCHES_UNSUPPORTED
    if isinstance(decoded, dict):  # no "jsonrpc" member: pygls left it unstructured
        problem = problem_with(decoded)
        return None if problem is None else (readable_id(decoded), problem)
    return None, f"a message is a JSON object, not {echoed(decoded, 40)}"


def invalid_request_error(reason: str):
    """The JSON-RPC error object of an Invalid Request."""
    return JsonRpcInvalidRequest(f"Invalid Request: {reason}").to_response_error()
