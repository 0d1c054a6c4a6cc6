"""The one place litellm is imported: lazily, offline, quietly, once per process.

Only the long tail of providers (Bedrock, Vertex, Azure, Cohere…) needs it: the providers of the
table (``providers.py``) are sent by pi-lsp itself. No private litellm module is imported.

``import litellm`` takes seconds, so nothing imports it at module load; the first completion (or a
``preload_litellm`` started in the background at server start) does. The model cost map is read
from litellm's bundled copy so the import never reaches for the network, and litellm's "Provider
List" hints are silenced because they would land on the language server's stdout.
"""

from __future__ import annotations

import asyncio
import os
import threading
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
