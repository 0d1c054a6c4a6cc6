"""The content-addressed blob store of one session directory: file contents stored once.

A blob's name is the SHA-256 of its bytes; it is kept zlib-compressed at
``<store>/objects/<first two hex digits>/<the rest>``, written to a temporary file first and moved
into place, so a reader never sees half a blob and two writers of the same content cannot clash.
The store sits in the session directory (``.checkpoints``), so every session of that directory,
forks included, shares it; ``pi-lsp session gc`` removes the blobs no session refers to.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import attrs

from pi_lsp.errors import CheckpointContentMissingError

STORE_DIRECTORY = ".checkpoints"
COMPRESSION_LEVEL = 6


def store_root(session_dir: Path) -> Path:
    """Where the store of the sessions in ``session_dir`` lives."""
    return session_dir / STORE_DIRECTORY


def content_hash(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


@attrs.frozen
class BlobInfo:
    digest: str
    path: Path
    stored_bytes: int
    modified: float


@attrs.frozen
class StoreSize:
    blobs: int
    stored_bytes: int
    """Bytes on disk (compressed), blobs only."""


class BlobStore:
    """File contents by hash, in one directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.objects = root / "objects"

    def path_of(self, digest: str) -> Path:
        return self.objects / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        return self.path_of(digest).is_file()

    def put(self, content: bytes, digest: str | None = None) -> str:
        """Store ``content`` (once); its hash. ``digest`` skips hashing when the caller has it."""
        digest = digest or content_hash(content)
        target = self.path_of(digest)
        if target.is_file():
            return digest
        target.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(zlib.compress(content, COMPRESSION_LEVEL))
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return digest

    def get(self, digest: str) -> bytes:
        """The content stored under ``digest``; ``CheckpointContentMissingError`` when it is not
        there."""
        try:
            data = self.path_of(digest).read_bytes()
        except FileNotFoundError:
            raise CheckpointContentMissingError(
                f"the stored content {digest[:12]}… is missing from {self.objects}"
            ) from None
        try:
            return zlib.decompress(data)
        except zlib.error:
            raise CheckpointContentMissingError(
                f"the stored content {digest[:12]}… is damaged"
            ) from None

    def blobs(self) -> Iterator[BlobInfo]:
        """Every stored blob (temporary files of unfinished writes left out)."""
        if not self.objects.is_dir():
            return
        for prefix in sorted(self.objects.iterdir()):
            if not prefix.is_dir() or len(prefix.name) != 2:
                continue
            for blob in sorted(prefix.iterdir()):
                if blob.name.startswith(".tmp-"):
                    continue
                try:
                    stat = blob.stat()
                except FileNotFoundError:
                    continue
                yield BlobInfo(prefix.name + blob.name, blob, stat.st_size, stat.st_mtime)

    def size(self) -> StoreSize:
        count = total = 0
        for blob in self.blobs():
            count += 1
            total += blob.stored_bytes
        return StoreSize(count, total)

    def delete(self, digest: str) -> None:
        path = self.path_of(digest)
        with contextlib.suppress(OSError):
            path.unlink()
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when empty
