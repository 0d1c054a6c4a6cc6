"""The ``errorMessage`` pi records for a failed completion: HTTP status + the provider's text.

litellm wraps every provider failure in its own exception whose text repeats the class chain
(``litellm.RateLimitError: RateLimitError: OpenAIException - <provider text>``) and sometimes
appends the wrapped exception again or router details. The text kept is the provider part with
litellm's class name, prefixed with the HTTP status litellm reports, for example
``429 RateLimitError: OpenAIException - Rate limit reached``: short enough for a user to read,
and carrying what pi's overflow and retry patterns look for (status codes, provider wording,
``ContextWindowExceededError``). Exceptions that are not litellm's keep their class name.
"""

from __future__ import annotations

import json
import re

_LITELLM_PREFIXES = re.compile(r"^(?:litellm\.\w+:\s*)+")
_NOISE_TAILS = (
    " Original exception:",
    "\nReceived Model Group=",
    "\nAvailable Model Group",
    " LiteLLM Retried:",
    "\nLiteLLM Retried:",
)


def describe_error(error: BaseException) -> str:
    """The ``errorMessage`` for ``error`` (see the module docstring)."""
    if isinstance(error, ProviderError):
        return error.description
    text = _LITELLM_PREFIXES.sub("", str(error)).strip()
    for tail in _NOISE_TAILS:
        text = text.split(tail, 1)[0]
    text = text.strip()
    if not type(error).__module__.startswith("litellm"):
        text = f"{type(error).__name__}: {text}" if text else type(error).__name__
    status = getattr(error, "status_code", None)
    if isinstance(status, int) and not text.startswith(str(status)):
        text = f"{status} {text}"
    return text or type(error).__name__


# The name litellm's exception mapping puts before ``OpenAIException`` for an HTTP status of an
# OpenAI-compatible provider (``exception_mapping_utils``); None: no name (400 and 422).
_LITELLM_NAMES: dict[int, str | None] = {
    400: None,
    401: "AuthenticationError",
    404: "NotFoundError",
    408: "Timeout Error",
    422: None,
    429: "RateLimitError",
    500: "InternalServerError",
    502: "BadGatewayError",
    503: "ServiceUnavailableError",
    504: "Timeout Error",
}
_RATE_LIMIT_TEXT = re.compile(r"rate[\s_\-]*limit", re.IGNORECASE)
_CONTEXT_WINDOW_TEXT = re.compile(
    r"maximum context length|exceeds the available context size|prompt is too long"
    r"|is longer than the model's context length|context_length_exceeded",
    re.IGNORECASE,
)


class ProviderError(Exception):
    """A failed request of the direct transport (``direct.py``), described as litellm would."""

    def __init__(self, status_code: int | None, description: str) -> None:
        super().__init__(description)
        self.status_code = status_code
        self.description = description


def provider_error(status_code: int, body: str, label: str = "OpenAIException") -> ProviderError:
    """The error for an endpoint's answer ``body`` with ``status_code``.

    Its text is what ``describe_error`` makes of litellm's exception for the same answer: the
    status, litellm's exception name for it and ``<label> - <the provider's message>``
    (``OpenAIException`` for OpenAI's wire APIs, ``GeminiException`` for Gemini's).
    """
    text = _provider_message(body)
    name = _LITELLM_NAMES.get(status_code, "APIError")
    if status_code == 429 or _RATE_LIMIT_TEXT.search(text):
        name = "RateLimitError"
    elif _CONTEXT_WINDOW_TEXT.search(text):
        name = "ContextWindowExceededError"
    prefix = f"{status_code} {name}: " if name else f"{status_code} "
    return ProviderError(status_code, f"{prefix}{label} - {text}")


def connection_error(*, answered: bool) -> ProviderError:
    """A connection refused or reset before the answer (litellm maps it to an
    ``InternalServerError``), or an answer cut short (``APIConnectionError``); both are 500."""
    name = "APIConnectionError" if answered else "InternalServerError"
    return ProviderError(500, f"500 {name}: OpenAIException - Connection error.")


def timeout_error() -> ProviderError:
    """No answer within the request's timeout: litellm's ``Timeout`` (408)."""
    return ProviderError(
        408, "408 APITimeoutError - Request timed out. Error_str: Request timed out."
    )


def _provider_message(body: str) -> str:
    """The ``error.message`` of a JSON error body, else the body itself."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return body.strip()
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return body.strip()
