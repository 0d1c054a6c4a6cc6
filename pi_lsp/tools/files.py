"""Reading and changing files through the editor when they are open, else on disk.

Changes to one file are serialized (pi's file mutation queue): two ``edit`` calls on the same file
in one turn run one after the other, each against the text the previous one left.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

from pi_lsp.tools.base import ClientFileSystem, EditorBridge, ToolContext

_locks: dict[str, tuple[asyncio.Lock, int]] = {}


def _lock_key(path: Path) -> str:
    try:
        return os.path.realpath(path)
    except OSError:
        return str(path)


@contextlib.asynccontextmanager
async def file_mutation_lock(path: Path) -> AsyncIterator[None]:
    """Hold the per-file lock for ``path`` (keyed by its real path)."""
    key = _lock_key(path)
    lock, users = _locks.get(key, (None, 0))
    if lock is None:
        lock = asyncio.Lock()
    _locks[key] = (lock, users + 1)
    try:
        async with lock:
            yield
    finally:
        lock, users = _locks[key]
        if users <= 1:
            del _locks[key]
        else:
            _locks[key] = (lock, users - 1)


async def load_text(path: Path, context: ToolContext) -> tuple[str, str] | None:
    """(text, source) of ``path``: the editor's unsaved text if open, else the file; None if absent.

    ``source`` is ``"editor"`` or ``"disk"``. A file that is not valid UTF-8 is decoded with
    replacement characters. The bridge is asked on the event loop's thread, the disk in a worker.
    """
    unsaved = await editor_text(context.editor, path)
    if unsaved is not None:
        return unsaved, "editor"
    return await asyncio.to_thread(_read_file, path)


async def editor_text(editor: EditorBridge, path: Path) -> str | None:
    """The text the editor has for ``path`` (None: read the disk): a client that reads every file
    (``ClientFileSystem``) is asked first, then the open documents."""
    if isinstance(editor, ClientFileSystem):
        text = await editor.read_text(path)
        if text is not None:
            return text
    return editor.open_document_text(path)


def _read_file(path: Path) -> tuple[str, str] | None:
    if not path.is_file():
        return None
    return path.read_bytes().decode("utf-8", errors="replace"), "disk"


async def store_text(path: Path, text: str, context: ToolContext) -> bool:
    """Give ``path`` the content ``text``: through a client that writes every file
    (``ClientFileSystem``), or through the editor if it has the document open (the user can undo
    the change there), else by writing the file, creating missing parent folders.

    Returns True when the editor applied the change, False when the file was written on disk.
    The context's change recorder hears of the change before and after.
    """
    await context.changes.before_change(path)
    editor = context.editor
    if isinstance(editor, ClientFileSystem) and await editor.write_text(path, text):
        await context.changes.after_change(path, text)
        return True
    if editor.open_document_text(path) is not None and await editor.apply_edit(path, text):
        await context.changes.after_change(path, text)
        return True
    await asyncio.to_thread(_write_file, path, text)
    await context.changes.after_change(path, text)
    return False


def _write_file(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
