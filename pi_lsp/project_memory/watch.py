"""Watching the session directories, so files that pi or another window writes are indexed soon.

This server's own appends reach the index directly (``Session.on_written``); the watch is for the
rest, and its reports of this server's own appends are skipped (``notice_reported``). Only the
session directories themselves are watched (not recursively), and only the
``.jsonl`` files in them count. A directory that does not exist yet (pi makes its own on first
use) is picked up when the watch is rebuilt, at the next quiet ``rebuild_seconds``; the index's
sweeps find anything a watch missed.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

from pi_lsp.project_memory.service import SESSION_SUFFIX, ProjectMemory

logger = logging.getLogger(__name__)

REBUILD_SECONDS = 10.0


async def watch_session_dirs(
    memory: ProjectMemory, rebuild_seconds: float = REBUILD_SECONDS
) -> None:
    """Tell ``memory`` about every change in its session directories until cancelled."""
    from watchfiles import awatch

    while True:
        watched = _existing(memory.session_dirs())
        if not watched:
            await asyncio.sleep(rebuild_seconds)
            continue
        try:
            async for changes in awatch(
                *watched,
                watch_filter=_is_session_file,
                recursive=False,
                rust_timeout=int(rebuild_seconds * 1000),
                yield_on_timeout=True,
                debounce=200,
            ):
                for _, path in changes:
                    memory.notice_reported(path)
                if _existing(memory.session_dirs()) != watched:
                    break  # a directory appeared or went away, or the settings name another
        except asyncio.CancelledError:
            raise
        except OSError as error:  # a directory removed under the watch: watch again
            logger.info("session watch restarted: %s", error)
            await asyncio.sleep(rebuild_seconds)


def _existing(directories: list[Path]) -> list[str]:
    return sorted({os.path.abspath(folder) for folder in directories if os.path.isdir(folder)})


def _is_session_file(_change: object, path: str) -> bool:
    return path.endswith(SESSION_SUFFIX)
