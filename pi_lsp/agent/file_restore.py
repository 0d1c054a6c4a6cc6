"""Restoring files when the leaf moves (``restoreFiles``), and previewing it (``pi/fileChanges``).

For a move from the leaf to a target, ``checkpoints/plan.py`` says which files are concerned and
what each should contain at the target. Here each file's current content is read (the editor's
unsaved text when the document is open, else the disk) and judged against what pi-lsp last left
there (the ledger): a file someone else changed since is a ``conflict`` and stays as it is unless
``force``. Then everything is applied at once:

- through the editor, as one workspace edit (one undo in VS Code; buffers updated in Neovim),
  when the client supports ``workspace/applyEdit`` with resource operations. A refused edit
  changes nothing: ``FilesNotRestoredError``, and the leaf stays;
- else on the disk, file by file (a file that cannot be written is ``skipped`` with the reason).

Either way the contents replaced are kept in the store first and the restore is written to the
ledger, so navigating back with ``restoreFiles`` puts back exactly what was there, including
user edits that ``force`` overwrote. Nothing here runs ``git``. Callable from any front end: the
edits go through the ``EditorBridge``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from pi_lsp.agent.checkpoint_recorder import CheckpointRecorder
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.checkpoints.blobs import content_hash
from pi_lsp.checkpoints.ledger import RestoredFile, RestoreRecord
from pi_lsp.checkpoints.plan import (
    Content,
    Current,
    Decision,
    FileJourney,
    Journey,
    decide,
    plan_journey,
)
from pi_lsp.checkpoints.preview import commands_naming, commands_on, unified_diff
from pi_lsp.checkpoints.store import CheckpointStore, size_limit_text, unrestorable_reason
from pi_lsp.errors import FilesNotRestoredError, PiError
from pi_lsp.protocol import FileChangesResult, FileOutcome, FilePreview
from pi_lsp.session.timestamps import now_iso
from pi_lsp.tools.base import EditorBridge, FileEdit, describe_os_error


@attrs.frozen
class RestoreOutcome:
    files: tuple[FileOutcome, ...]
    written: tuple[RestoredFile, ...]
    """The files written, with the contents replaced (for the ledger)."""


@attrs.define
class _Assessed:
    """One file of a move: its decision, and the contents it needs to be applied."""

    path: str
    decision: Decision
    current: Current
    current_bytes: bytes | None = None
    target: Content = attrs.field(factory=Content)
    forced: bool = False


Settings = Callable[[], int]
"""The size limit of a restorable file, in bytes (live: settings change)."""


class FileRestorer:
    """Previews and restores of the files the agent changed, for every open session."""

    def __init__(
        self, checkpoint_recorder: CheckpointRecorder, editor: EditorBridge, max_bytes: Settings
    ) -> None:
        self.checkpoint_recorder = checkpoint_recorder
        self.editor = editor
        self.max_bytes = max_bytes
        self._restored_in_editor: dict[str, str | None] = {}
        """Path → content hash of files restored through the editor, until their next save."""

    # ------------------------------------------------------------------ preview

    async def preview(
        self,
        runtime: SessionRuntime,
        to_leaf: str | None,
        from_id: str | None = None,
        *,
        include_text: bool = False,
    ) -> FileChangesResult:
        """What a restoring move from ``from_id`` (default: the leaf, against the files as they are
        now) to ``to_leaf`` would do, with a diff per file; touches nothing."""
        session = runtime.session
        from_leaf = session.leaf_id if from_id is None else from_id
        store = self.checkpoint_recorder.store_for(runtime)
        journey = self._journey(runtime, from_leaf, to_leaf)
        files = []
        if store is not None and journey.files:
            actual = from_leaf == session.leaf_id
            assessed = await self._assess(runtime, store, journey, to_leaf, False, actual)
            commands = commands_on([*journey.left, *journey.taken])
            for item in assessed:
                files.append(self._file_preview(store, item, commands, session.cwd, include_text))
        return FileChangesResult(runtime.id, from_leaf, to_leaf, files)

    def _file_preview(
        self,
        store: CheckpointStore,
        item: _Assessed,
        commands: list[str],
        cwd: str,
        include_text: bool,
    ) -> FilePreview:
        target_text = current_text = None
        shown = item.target.unknown is None and item.current.problem is None
        if shown and item.target.digest is not None:
            target_text = store.blobs.get(item.target.digest).decode("utf-8")
        if shown and item.current_bytes is not None:
            current_text = item.current_bytes.decode("utf-8")
        diff = ""
        if shown and item.decision.action != "skipped":
            label = os.path.relpath(item.path, cwd) if cwd else item.path
            diff = unified_diff(current_text, target_text, label.replace(os.sep, "/"))
        return FilePreview(
            path=item.path,
            action=item.decision.action,
            diff=diff,
            reason=item.decision.reason,
            commands=commands_naming(commands, item.path, cwd) or None,
            target_text=target_text if include_text else None,
        )

    # ------------------------------------------------------------------ restore

    async def restore(
        self, runtime: SessionRuntime, to_leaf: str | None, *, force: bool = False
    ) -> RestoreOutcome:
        """Put the files concerned by a move from the leaf to ``to_leaf`` back to their content
        there. ``FilesNotRestoredError`` when the editor refused the edit (nothing changed)."""
        store = self.checkpoint_recorder.store_for(runtime)
        journey = self._journey(runtime, runtime.session.leaf_id, to_leaf)
        if store is None or not journey.files:
            return RestoreOutcome((), ())
        assessed = await self._assess(runtime, store, journey, to_leaf, force, True)
        writes = [item for item in assessed if item.decision.writes]
        if writes:
            await self._keep_replaced(store, writes)
            failures = await self._apply(store, writes, to_leaf)
        else:
            failures = {}
        outcomes = []
        written = []
        for item in assessed:
            failure = failures.get(item.path)
            if failure is not None:
                outcomes.append(FileOutcome(item.path, "skipped", failure))
                continue
            outcomes.append(FileOutcome(item.path, item.decision.action, item.decision.reason))
            if item.decision.writes:
                written.append(
                    RestoredFile(item.path, item.current.digest, item.target.digest, item.forced)
                )
        return RestoreOutcome(tuple(outcomes), tuple(written))

    def record_restore(
        self,
        runtime: SessionRuntime,
        from_leaf: str | None,
        to_leaf: str | None,
        outcome: RestoreOutcome,
    ) -> None:
        """Write a finished restore to the ledger (once the leaf has moved to ``to_leaf``)."""
        store = self.checkpoint_recorder.store_for(runtime)
        if store is None or not outcome.written:
            return
        store.ledger.record_restore(
            now_iso(), RestoreRecord(runtime.id, from_leaf, to_leaf, outcome.written)
        )

    def is_restore_save(self, path: Path, text: str) -> bool:
        """Whether the editor saving ``path`` with ``text`` only saves what a restore put there
        (not a user's edit)."""
        key = str(path)
        if key in self._restored_in_editor and self._restored_in_editor[key] == content_hash(
            text.encode("utf-8")
        ):
            del self._restored_in_editor[key]
            return True
        return False

    # ------------------------------------------------------------------ internals

    def _journey(self, runtime: SessionRuntime, from_leaf: str | None, to_leaf: str | None):
        session = runtime.session
        from_path = session.branch(from_leaf) if from_leaf is not None else []
        to_path = session.branch(to_leaf) if to_leaf is not None else []
        return plan_journey(from_path, to_path, session.cwd)

    async def _assess(
        self,
        runtime: SessionRuntime,
        store: CheckpointStore,
        journey: Journey,
        to_leaf: str | None,
        force: bool,
        actual: bool,
    ) -> list[_Assessed]:
        """Each file's decision; ``actual``: against the files as they are now (else as the tree
        says they were at the origin)."""
        max_bytes = self.max_bytes()
        if not actual:
            origins = await asyncio.to_thread(_origin_contents, store, journey.files)
            return [
                self._decide_one(file, current, data, None, False, True)
                for file, (current, data) in zip(journey.files, origins, strict=True)
            ]
        open_texts = [self.editor.open_document_text(Path(file.path)) for file in journey.files]
        readings = await asyncio.to_thread(
            _read_currents, [file.path for file in journey.files], open_texts, max_bytes
        )
        going_back = self._going_back(store, runtime, to_leaf)
        assessed = []
        for planned, (current, data, access) in zip(journey.files, readings, strict=True):
            clean = store.ledger.clean_contents(planned.path)
            returning = going_back.get(planned.path)
            file = planned
            if returning is not None and returning.restored == current.digest:
                file = attrs.evolve(planned, target=Content(returning.replaced))
            # Replacing a content needs the file writable; creating or deleting, its folder.
            replacing = current.digest is not None and file.target.digest is not None
            writable = access.file if replacing else access.folder
            assessed.append(self._decide_one(file, current, data, clean, force, writable))
        return assessed

    def _decide_one(self, file: FileJourney, current, data, clean, force, writable) -> _Assessed:
        if clean is None:  # the ledger has no word on it: trust the tree
            contents = None if file.origin.unknown else frozenset({file.origin.digest})
            reason = file.origin.unknown
        else:
            contents, reason = (
                (None, clean.unknown_reason) if clean.unknown_reason else (clean.contents, None)
            )
        decision = decide(
            file.target, current, contents, force=force, writable=writable, unknown_reason=reason
        )
        forced = decision.writes and (contents is None or current.digest not in contents)
        return _Assessed(file.path, decision, current, data, file.target, forced)

    def _going_back(
        self, store: CheckpointStore, runtime: SessionRuntime, to_leaf: str | None
    ) -> dict[str, RestoredFile]:
        """The files of the session's last restore, if this move undoes it."""
        last = store.ledger.last_restore(runtime.id)
        if last is None or last.to_leaf != runtime.session.leaf_id or last.from_leaf != to_leaf:
            return {}
        return {item.path: item for item in last.files}

    async def _keep_replaced(self, store: CheckpointStore, writes: list[_Assessed]) -> None:
        def keep() -> None:
            for item in writes:
                if item.current_bytes is not None:
                    store.blobs.put(item.current_bytes, item.current.digest)

        try:
            await asyncio.to_thread(keep)
        except OSError as error:
            raise PiError(
                "could not keep a copy of the files' current contents "
                f"({describe_os_error(error)}); nothing was changed"
            ) from None

    async def _apply(
        self, store: CheckpointStore, writes: list[_Assessed], to_leaf: str | None
    ) -> dict[str, str]:
        """Apply the writes; the paths that failed, with why (disk only)."""
        targets = await asyncio.to_thread(_target_contents, store, writes)
        edits = [_file_edit(item, target) for item, target in zip(writes, targets, strict=True)]
        applied = await self.editor.apply_file_edits(edits, f"pi: restore files to {to_leaf}")
        if applied is None:
            return await asyncio.to_thread(_write_disk, writes, targets)
        if not applied.applied:
            reason = f" ({applied.failure_reason})" if applied.failure_reason else ""
            raise FilesNotRestoredError(
                f"the editor refused the file changes{reason}; nothing was changed: the files "
                "and the session's leaf are as they were"
            )
        for item in writes:
            self._restored_in_editor[item.path] = item.target.digest
        return {}


def _file_edit(item: _Assessed, target: bytes | None) -> FileEdit:
    text = None if target is None else target.decode("utf-8")
    path = Path(item.path)
    if item.decision.action == "deleted":
        return FileEdit(path, "delete")
    if item.decision.action == "created":
        return FileEdit(path, "create", text)
    current = None if item.current_bytes is None else item.current_bytes.decode("utf-8")
    return FileEdit(path, "replace", text, current)


def _target_contents(store: CheckpointStore, writes: Sequence[_Assessed]) -> list[bytes | None]:
    return [
        None if item.target.digest is None else store.blobs.get(item.target.digest)
        for item in writes
    ]


def _origin_contents(
    store: CheckpointStore, files: Sequence[FileJourney]
) -> list[tuple[Current, bytes | None]]:
    found: list[tuple[Current, bytes | None]] = []
    for file in files:
        if file.origin.unknown is not None:
            found.append((Current(problem=f"not recorded: {file.origin.unknown}"), None))
        elif file.origin.digest is None:
            found.append((Current(None), None))
        else:
            found.append((Current(file.origin.digest), store.blobs.get(file.origin.digest)))
    return found


@attrs.frozen
class _Access:
    file: bool = False
    """The file may be written."""
    folder: bool = False
    """Its folder (or the nearest existing ancestor) may be written: the file may be created or
    deleted."""


def _read_currents(
    paths: Sequence[str], open_texts: Sequence[str | None], max_bytes: int
) -> list[tuple[Current, bytes | None, _Access]]:
    return [
        _read_current(path, text, max_bytes) for path, text in zip(paths, open_texts, strict=True)
    ]


_EMPTY_BUFFER = ("", "\n", "\r\n")
"""The text of an empty buffer (Neovim sends one empty line, with its line break)."""


def _read_current(
    path: str, open_text: str | None, max_bytes: int
) -> tuple[Current, bytes | None, _Access]:
    """(the file's content as a ``Current``, its bytes, what this process may do to it)."""
    if open_text in _EMPTY_BUFFER and not os.path.exists(path):
        open_text = None  # an empty buffer of a missing file holds nothing: the file is absent
    if open_text is not None:
        data: bytes | None = open_text.encode("utf-8")
    else:
        try:
            if os.path.isdir(path):
                return Current(problem="a directory is in its place"), None, _Access()
            if os.path.getsize(path) > max_bytes:
                return Current(problem=f"it is {size_limit_text(max_bytes)} now"), None, _Access()
            with open(path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            data = None
        except OSError as error:
            problem = f"it cannot be read: {describe_os_error(error)}"
            return Current(problem=problem), None, _Access()
    reason = None if data is None else unrestorable_reason(data, max_bytes)
    if reason is not None:
        return Current(problem=f"it holds {reason} now"), None, _Access()
    digest = None if data is None else content_hash(data)
    folder = _folder_writable(path)
    file = os.access(path, os.W_OK) if os.path.exists(path) else folder
    return Current(digest), data, _Access(file, folder)


def _folder_writable(path: str) -> bool:
    """Whether this process may create or delete ``path`` in its folder (or the nearest existing
    ancestor, for a file whose folders are created with it)."""
    directory = os.path.dirname(path)
    while directory and not os.path.isdir(directory):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return os.access(directory, os.W_OK | os.X_OK)


def _write_disk(writes: Sequence[_Assessed], targets: Sequence[bytes | None]) -> dict[str, str]:
    failures = {}
    for item, target in zip(writes, targets, strict=True):
        try:
            if target is None:
                os.unlink(item.path)
            else:
                os.makedirs(os.path.dirname(item.path), exist_ok=True)
                with open(item.path, "wb") as handle:
                    handle.write(target)
        except OSError as error:
            failures[item.path] = f"could not be written: {describe_os_error(error)}"
    return failures
