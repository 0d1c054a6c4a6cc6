"""Recording the agent's file changes: the stores of the open sessions, a recorder per tool call,
and the ``pi-lsp.checkpoint`` entry appended before the call's result.

A recorder snapshots a file right before a tool changes it (the editor's unsaved text when the
document is open, else the disk) and right after, stores both contents in the session
directory's blob store and, when the call ends, the turn appends one checkpoint entry (paths and
hashes) and a ledger line. Binary files and files over the size limit are recorded as not
restorable. A failure to store never fails the tool: the file is recorded as not restorable, with
the reason. Sessions kept in memory (no file) record nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import attrs

from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.checkpoints.records import CHECKPOINT_TYPE, FileChange, checkpoint_data, recorded_path
from pi_lsp.checkpoints.store import CheckpointStore, size_limit_text, unrestorable_reason
from pi_lsp.session.timestamps import now_iso
from pi_lsp.tools.base import EditorBridge, FileChangeRecorder, NoRecorder, describe_os_error

logger = logging.getLogger(__name__)


@attrs.frozen
class Snapshot:
    """A file's content at one moment: bytes (None: absent), or why they were not kept."""

    content: bytes | None = None
    unrestorable: str | None = None


@attrs.define
class RecordedChange:
    path: Path
    before: str | None = None
    after: str | None = None
    unrestorable: str | None = None


class CheckpointRecorder:
    """The checkpoint stores of the session directories in use, and the recorders of tool calls."""

    def __init__(self, editor: EditorBridge) -> None:
        self.editor = editor
        self._stores: dict[Path, CheckpointStore] = {}

    def store_for(self, runtime: SessionRuntime) -> CheckpointStore | None:
        """The store next to the session's file; None for a session kept in memory."""
        path = runtime.session.path
        if path is None:
            return None
        directory = path.parent
        store = self._stores.get(directory)
        if store is None:
            store = self._stores[directory] = CheckpointStore.for_session_dir(directory)
        return store

    def recorder(
        self, runtime: SessionRuntime, *, enabled: bool, max_bytes: int
    ) -> ToolChanges | NoRecorder:
        store = self.store_for(runtime) if enabled else None
        return NoRecorder() if store is None else ToolChanges(store, self.editor, max_bytes)

    def record(
        self,
        runtime: SessionRuntime,
        tool_call_id: str,
        tool_name: str,
        recorder: FileChangeRecorder,
    ) -> None:
        """Append the checkpoint entry of a finished tool call (if it changed files)."""
        if not isinstance(recorder, ToolChanges) or not recorder.changes:
            return
        cwd = runtime.session.cwd
        changes = list(recorder.changes.values())
        runtime.session.append_custom(
            CHECKPOINT_TYPE,
            checkpoint_data(
                tool_call_id,
                tool_name,
                [
                    FileChange(
                        recorded_path(str(change.path), cwd),
                        change.before,
                        change.after,
                        change.unrestorable,
                    )
                    for change in changes
                ],
            ),
        )
        try:
            recorder.store.ledger.record_agent_change(
                runtime.id,
                now_iso(),
                [(str(change.path), change.after, change.unrestorable) for change in changes],
            )
        except OSError as error:
            logger.warning("could not write the checkpoint ledger: %s", describe_os_error(error))


class ToolChanges:
    """The files one tool call changed (a ``FileChangeRecorder``)."""

    def __init__(self, store: CheckpointStore, editor: EditorBridge, max_bytes: int) -> None:
        self.store = store
        self.editor = editor
        self.max_bytes = max_bytes
        self.changes: dict[Path, RecordedChange] = {}
        self._before: dict[Path, Snapshot] = {}

    async def before_change(self, path: Path) -> None:
        if path in self._before:
            return  # a second change in the same call: the content before the first one counts
        text = self.editor.open_document_text(path)
        if text is not None:
            self._before[path] = self._snapshot(text.encode("utf-8"))
        else:
            self._before[path] = await asyncio.to_thread(self._read, path)

    async def after_change(self, path: Path, text: str) -> None:
        before = self._before.get(path, Snapshot(unrestorable="its content before is unknown"))
        after = self._snapshot(text.encode("utf-8"))
        reason = before.unrestorable or after.unrestorable
        if reason is not None:
            self.changes[path] = RecordedChange(path, unrestorable=reason)
            return
        try:
            before_digest, after_digest = await asyncio.to_thread(
                self._store, before.content, after.content
            )
        except OSError as error:
            logger.warning("could not store a checkpoint of %s: %s", path, error)
            reason = f"its contents could not be stored: {describe_os_error(error)}"
            self.changes[path] = RecordedChange(path, unrestorable=reason)
            return
        self.changes[path] = RecordedChange(path, before_digest, after_digest)

    def _snapshot(self, content: bytes) -> Snapshot:
        reason = unrestorable_reason(content, self.max_bytes)
        return Snapshot(unrestorable=reason) if reason else Snapshot(content)

    def _read(self, path: Path) -> Snapshot:
        try:
            size = os.stat(path).st_size
            if size > self.max_bytes:
                return Snapshot(unrestorable=size_limit_text(self.max_bytes))
            return self._snapshot(path.read_bytes())
        except FileNotFoundError:
            return Snapshot()
        except OSError as error:
            return Snapshot(unrestorable=f"it could not be read: {describe_os_error(error)}")

    def _store(self, before: bytes | None, after: bytes | None) -> tuple[str | None, str | None]:
        return (
            None if before is None else self.store.blobs.put(before),
            None if after is None else self.store.blobs.put(after),
        )
