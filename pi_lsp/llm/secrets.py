"""The secrets this process has resolved, and taking them out of any text.

Every key pi-lsp resolves (``config_values.resolve_value``, the editor's keys) is remembered here,
so an error text, an event or a log line that quotes one — a provider that echoes the key it
refused, a bug's traceback — carries ``***`` instead (``redact_secrets``; ``logs.SecretFilter``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

_MIN_SECRET_LENGTH = 4
_known_secrets: set[str] = set()
_known_lock = threading.Lock()


def remember_secrets(values: Iterable[str]) -> None:
    """Note resolved secrets, so ``redact_secrets`` can take them out of any text."""
    with _known_lock:
        _known_secrets.update(value for value in values if len(value) >= _MIN_SECRET_LENGTH)


def redact_secrets(text: str) -> str:
    """``text`` with every secret this process has resolved replaced by ``***``."""
    with _known_lock:
        secrets = sorted(_known_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "***")
    return text
