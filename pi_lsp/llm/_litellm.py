"""The one place litellm is imported: lazily, offline, quietly, once per process.

Besides the module itself, the few pieces of litellm the Anthropic direct path reuses (its HTTP
client class, its finish-reason map, its exception mapping) are reached from here too.

``import litellm`` takes seconds, so nothing imports it at module load; the first completion (or a
``preload_litellm`` started in the background at server start) does. The model cost map is read
from litellm's bundled copy so the import never reaches for the network, and litellm's "Provider
List" hints are silenced because they would land on the language server's stdout.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from types import ModuleType

_lock = threading.Lock()
_module: ModuleType | None = None


def load_litellm() -> ModuleType:
    """The configured ``litellm`` module, imported on the first call."""
    global _module
    if _module is not None:
        return _module
    with _lock:
        if _module is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            litellm.suppress_debug_info = True
            # litellm fails a stream after 100 identical chunks ("the model is repeating"); code
            # legitimately repeats (indentation, rules of dashes), and pi-lsp's own abort covers a
            # model that really loops.
            litellm.REPEATED_STREAMING_CHUNK_LIMIT = 1_000_000
            _module = litellm
    return _module


async def preload_litellm() -> ModuleType:
    """Import litellm in a worker thread so the event loop keeps answering meanwhile."""
    if _module is not None:
        return _module
    return await asyncio.to_thread(load_litellm)


def async_http_handler_class() -> type:
    """litellm's async HTTP client class (``anthropic_direct`` records requests through it)."""
    load_litellm()
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    return AsyncHTTPHandler


def finish_reason_mapper() -> Callable[[str], str]:
    """litellm's map from a provider's stop reason to an OpenAI ``finish_reason``."""
    load_litellm()
    from litellm.litellm_core_utils.core_helpers import map_finish_reason

    return map_finish_reason


def anthropic_exception(model: str, status: int, message: bytes | str) -> Exception:
    """The exception litellm raises for an Anthropic answer of ``status`` with ``message``: its
    handler's ``AnthropicError``, put through litellm's exception mapping."""
    load_litellm()
    from litellm.litellm_core_utils.exception_mapping_utils import exception_type
    from litellm.llms.anthropic.common_utils import AnthropicError

    original = AnthropicError(status_code=status, message=message)
    try:
        mapped = exception_type(
            model=model, original_exception=original, custom_llm_provider="anthropic"
        )
    except Exception as raised:  # noqa: BLE001 — exception_type raises the mapped exception
        return raised
    return mapped if isinstance(mapped, Exception) else original
