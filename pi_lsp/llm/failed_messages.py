"""How pi classifies a failed assistant message: context overflow, retryable, or final.

The patterns are pi-ai 0.84's (``utils/overflow.js`` and ``utils/retry.js``), matched
case-insensitively against the message's ``errorMessage``, plus litellm's own exception name
``ContextWindowExceededError``, which litellm puts in every error message it maps from a
provider's overflow answer. The agent loop checks overflow first (it compacts and retries once),
then retryable errors (exponential backoff: ``retry_delay_ms``), and treats anything else as final.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_OVERFLOW_PATTERNS = (
    r"prompt is too long",
    r"request_too_large",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
    r"model_context_window_exceeded",
    r"prompt too long; exceeded (?:max )?context length",
    r"range of input length should be",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
    r"ContextWindowExceededError",
)

_NOT_OVERFLOW = re.compile(
    r"^(?:Throttling error|Service unavailable):|rate limit|too many requests", re.IGNORECASE
)

_NOT_RETRYABLE_PATTERNS = (
    "GoUsageLimitError",
    "FreeUsageLimitError",
    "Monthly usage limit reached",
    "available balance",
    "insufficient_quota",
    "out of budget",
    "quota exceeded",
    "billing",
)

_RETRYABLE_PATTERNS = (
    "overloaded",
    "rate.?limit",
    "too many requests",
    "429",
    "500",
    "502",
    "503",
    "504",
    "524",
    "service.?unavailable",
    "server.?error",
    "internal.?error",
    "provider.?returned.?error",
    "exceeded request buffer limit while retrying upstream",
    "network.?error",
    "connection.?error",
    "connection.?refused",
    "connection.?lost",
    "other side closed",
    "fetch failed",
    "getaddrinfo",
    "ENOTFOUND",
    "EAI_AGAIN",
    "upstream.?connect",
    "reset before headers",
    "socket hang up",
    "socket connection was closed",
    "timed? out",
    "timeout",
    "terminated",
    "websocket.?closed",
    "websocket.?error",
    "ended without",
    "stream ended before message_stop",
    "stream ended before a terminal response event",
    "http2 request did not get a response",
    "retry delay",
    "you can retry your request",
    "try your request again",
    "please retry your request",
    "ResourceExhausted",
)

_OVERFLOW = re.compile("|".join(_OVERFLOW_PATTERNS), re.IGNORECASE)
_NOT_RETRYABLE = re.compile("|".join(_NOT_RETRYABLE_PATTERNS), re.IGNORECASE)
_RETRYABLE = re.compile("|".join(_RETRYABLE_PATTERNS), re.IGNORECASE)

# Share of the window a truncated prompt must fill for a zero-output length stop to be overflow.
_FILLED_WINDOW = 0.99


def is_context_overflow(message: Mapping[str, Any], context_window: int | None) -> bool:
    """pi's ``isContextOverflow``: an overflow error, or a silent overflow by the usage numbers.

    Silent overflow needs ``context_window``: a ``stop`` whose input (with cache reads) is larger
    than the window, or a ``length`` stop with no output whose input fills the window.
    """
    stop_reason = message.get("stopReason")
    error_message = message.get("errorMessage")
    if (
        stop_reason == "error"
        and isinstance(error_message, str)
        and _OVERFLOW.search(error_message)
        and not _NOT_OVERFLOW.search(error_message)
    ):
        return True
    if not context_window:
        return False
    usage = message.get("usage") or {}
    input_tokens = (usage.get("input") or 0) + (usage.get("cacheRead") or 0)
    if stop_reason == "stop":
        return input_tokens > context_window
    if stop_reason == "length" and (usage.get("output") or 0) == 0:
        return input_tokens >= context_window * _FILLED_WINDOW
    return False


def is_recoverable_length(message: Mapping[str, Any], desired_max_output: int | None) -> bool:
    """pi 1.6's ``isRecoverableLength``: a ``length`` stop that ended below the model's own output
    limit (``desired_max_output``), so a smaller context may let the answer finish; unknown
    limits never recover."""
    if message.get("stopReason") != "length" or not desired_max_output:
        return False
    output = (message.get("usage") or {}).get("output") or 0
    return output < desired_max_output


def is_retryable_error(message: Mapping[str, Any], context_window: int | None = None) -> bool:
    """Whether a failed message is a transient provider or transport error worth retrying.

    Never true for a context overflow, which compaction handles instead, nor for quota and billing
    exhaustion, which waiting does not fix.
    """
    error_message = message.get("errorMessage")
    if (
        message.get("stopReason") != "error"
        or not isinstance(error_message, str)
        or not error_message
    ):
        return False
    if is_context_overflow(message, context_window):
        return False
    if _NOT_RETRYABLE.search(error_message):
        return False
    return bool(_RETRYABLE.search(error_message))


def retry_delay_ms(attempt: int, base_delay_ms: int = 2000) -> int:
    """pi's backoff before retry number ``attempt`` (1-based): 2 s, 4 s, 8 s... for the default."""
    return base_delay_ms * 2 ** (max(1, attempt) - 1)


_AUTH_STATUS = re.compile(r"^(401|403)\b")
_AUTH_NAMES = {"AuthenticationError": 401, "PermissionDeniedError": 403}


def auth_error_status(message: Mapping[str, Any]) -> int | None:
    """401 or 403 when a failed message is the provider refusing the key, else None.

    litellm maps a refused key to ``AuthenticationError`` (401) and a key without the rights to
    ``PermissionDeniedError`` (403); ``describe_error`` puts the status first.
    """
    error_message = message.get("errorMessage")
    if message.get("stopReason") != "error" or not isinstance(error_message, str):
        return None
    status = _AUTH_STATUS.match(error_message)
    if status:
        return int(status[1])
    return next((code for name, code in _AUTH_NAMES.items() if name in error_message), None)


def refused_key_message(model: Any, status: int, error_message: str) -> str:
    """What to tell a user whose key ``model``'s provider refused: who refused, which key."""
    credential = getattr(model, "credential", None)
    if credential is not None:
        which = f"the API key from {credential.describe()}"
    elif getattr(model, "api_key", None):
        which = "the key given to pi-lsp directly (PI_LSP_API_KEY or a local server's placeholder)"
    else:
        which = "the request: no API key is stored for it"
    verb = "refused" if status == 401 else "denied access with"
    return f"{model.provider} {verb} {which} ({error_message})"
