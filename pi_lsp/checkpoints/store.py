"""One checkpoint store: the blobs and the ledger of one session directory, and how a file's
content is judged (text that can be restored, or binary, or too large)."""

from __future__ import annotations

from pathlib import Path

import attrs

from pi_lsp.checkpoints.blobs import BlobStore, store_root
from pi_lsp.checkpoints.ledger import Ledger

BINARY = "binary content"


@attrs.frozen
class CheckpointStore:
    root: Path
    blobs: BlobStore
    ledger: Ledger

    @classmethod
    def for_session_dir(cls, session_dir: Path) -> CheckpointStore:
        root = store_root(session_dir)
        return cls(root, BlobStore(root), Ledger(root))


def size_limit_text(max_bytes: int) -> str:
    megabytes = max_bytes / 1_000_000
    return f"larger than {megabytes:g} MB"


def unrestorable_reason(content: bytes, max_bytes: int) -> str | None:
    """Why ``content`` cannot be kept for a restore (None: it can): too large, or not UTF-8 text.

    Restores go through the editor as text, so only UTF-8 text without NUL bytes is kept.
    """
    if len(content) > max_bytes:
        return size_limit_text(max_bytes)
    if b"\0" in content:
        return BINARY
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return BINARY
    return None
