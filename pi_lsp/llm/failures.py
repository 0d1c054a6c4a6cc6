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
