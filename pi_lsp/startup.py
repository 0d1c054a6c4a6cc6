"""The server's start-up: garbage collection paused while the modules load.

Starting the server creates a few hundred thousand objects that live as long as the process (the
modules, their classes and the code attrs and cattrs generate for them); the cyclic garbage
collector would walk them again and again as they are created, about a tenth of the start-up's
CPU. ``pause_collection`` turns it off before the imports; ``resume_collection`` moves everything
alive by then out of the collector's sight (``gc.freeze``) and turns it back on, once the first
prompt's modules are loaded or at the latest ``RESUME_AFTER_SECONDS`` after ``initialized``.
"""

from __future__ import annotations

import gc
import threading

RESUME_AFTER_SECONDS = 10.0

_lock = threading.Lock()
_paused = False


def pause_collection() -> None:
    global _paused
    with _lock:
        if gc.isenabled():
            gc.disable()
            _paused = True


def resume_collection() -> None:
    """Turn the collector back on if ``pause_collection`` turned it off (idempotent)."""
    global _paused
    with _lock:
        if _paused:
            _paused = False
            gc.freeze()
            gc.enable()


def collection_paused() -> bool:
    return _paused
