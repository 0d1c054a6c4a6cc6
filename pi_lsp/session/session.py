"""A session: pi's entry tree held in memory, with its leaf, labels and append operations.

This is pi's ``SessionManager`` for one file. Appending makes the new entry a child of the leaf and
moves the leaf onto it; branching moves the leaf without touching history. The file is created
lazily, at the first user or assistant message, so opening and closing without chatting leaves
nothing behind, while a first prompt whose turn fails is still kept.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Self, cast

from pi_lsp.errors import (
    EntryNotFoundError,
    InvalidParamsError,
    SessionReadOnlyError,
    SessionWriteError,
    echoed,
)
from pi_lsp.session import entries as build
from pi_lsp.session.active_context import ActivePathContext
from pi_lsp.session.context import (
    UNSET,
    LeafId,
    SessionContext,
    branch_path,
    build_session_context,
)
from pi_lsp.session.context_edits import require_editable
from pi_lsp.session.message_types import AgentMessage, MessageRecord
from pi_lsp.session.projection import CONTEXT_EDIT, ProjectedEntry
from pi_lsp.session.store import (
    LoadReport,
    SessionWriter,
    collect_young_objects,
    is_session_header,
    migrate_if_needed,
    parse_session_bytes,
    paused_garbage_collection,
    read_session_bytes,
)
from pi_lsp.session.stored_entry import StoredEntry
from pi_lsp.session.system_messages import current_system_message
from pi_lsp.session.timestamps import file_name_timestamp, iso_to_epoch_ms, now_iso
from pi_lsp.session.tree import TreeNode, build_tree


class Session:
    """One session file's entries, leaf and labels; the single writer of that file."""

    def __init__(
        self,
        header: StoredEntry,
        lines: Iterable[StoredEntry] = (),
        *,
        path: Path | None,
        writer: SessionWriter | None,
        persisted: bool,
        report: LoadReport | None = None,
    ) -> None:
        self.path = path
        self.header = header
        self.report = report or LoadReport()
        self._writer = writer
        self._persisted = persisted
        self.on_written: Callable[[Path], None] | None = None
        """Told the file's path after every write (the session index reads the new lines)."""
        self._entries: list[StoredEntry] = []
        self.stray_headers: list[StoredEntry] = []
        self._by_id: dict[str, StoredEntry] = {}
        self._labels: dict[str, tuple[str, Any]] = {}
        self._leaf_id: str | None = None
        self._active_path: list[StoredEntry] | None = None
        """The root→leaf path, kept while appends extend
        it (long sessions walk it on every turn)."""
        self._active_context: ActivePathContext | None = None
        """The context of ``_active_path``, extended with it (every model request needs it)."""
        self._children: dict[Any, StoredEntry | list[StoredEntry]] = {}
        """Entries by parent id (None: no parent), in file order: the tree's shape, kept as
        entries are indexed so a view of a big session never rebuilds the whole tree. A parent
        with one child maps to the entry itself, not a list: a list per entry would give the
        garbage collector 100k more objects to trace on a 100k-entry session, in every full
        collection (``_children_of`` reads both)."""
        self._branch_points: set[Any] = set()
        """Ids of the entries with more than one child (where the tree branches)."""
        self._name_entry: StoredEntry | None = None
        """The latest ``session_info`` entry."""
        self.has_context_edits = False
        """Whether any entry is a context edit (most sessions have none: the tree's rows then
        need not look for what edits did, on a path of 100k entries)."""
        self._unknown_parents: set[Any] = set()
        """Parent ids that were unknown when a child was indexed (orphans, or parents later in
        the file)."""
        for entry in lines:
            self._index(entry)

    # ----------------------------------------------------------------- opening and creating

    @classmethod
    def open(
        cls, path: str | os.PathLike, *, writable: bool = True, cwd: str | None = None
    ) -> Session:
        """Open a session file; a missing file becomes a new session that will be written there."""
        resolved = Path(os.path.abspath(path))
        if not resolved.exists():
            return cls.create(resolved.parent, cwd or os.getcwd(), path=resolved, writable=writable)
        writer = SessionWriter(resolved) if writable else None
        try:
            data = writer.open_existing() if writer else read_session_bytes(resolved)
            with paused_garbage_collection():
                loaded = parse_session_bytes(data, resolved)
            if not loaded.lines:  # an empty file: start it like a new session
                header = _new_header(cwd or os.getcwd())
                return cls(
                    header, path=resolved, writer=writer, persisted=False, report=loaded.report
                )
            if migrate_if_needed(loaded) and writer:
                writer.replace_contents([line.raw for line in loaded.lines])
        except BaseException:
            if writer:
                writer.close()
            raise
        with paused_garbage_collection():
            session = cls(
                loaded.lines[0],
                loaded.lines[1:],
                path=resolved,
                writer=writer,
                persisted=True,
                report=loaded.report,
            )
        collect_young_objects()
        return session

    @classmethod
    def create(
        cls,
        session_dir: str | os.PathLike | None,
        cwd: str,
        *,
        path: Path | None = None,
        session_id: str | None = None,
        parent_session: str | None = None,
        writable: bool = True,
    ) -> Session:
        """A new, empty session in ``session_dir`` (``None``: in memory only, never written)."""
        header = _new_header(cwd, session_id=session_id, parent_session=parent_session)
        if path is None and session_dir is not None:
            file_name = f"{file_name_timestamp(header['timestamp'])}_{header['id']}.jsonl"
            path = Path(os.path.abspath(session_dir)) / file_name
        writer = SessionWriter(path) if path is not None and writable else None
        return cls(header, path=path, writer=writer, persisted=False)

    def close(self) -> None:
        """Release the writer lock; the session stays readable in memory."""
        if self._writer:
            self._writer.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ----------------------------------------------------------------- reading

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def cwd(self) -> str:
        cwd = self.header.get("cwd")
        return cwd if isinstance(cwd, str) else ""

    @property
    def leaf_id(self) -> str | None:
        return self._leaf_id

    @property
    def is_persisted(self) -> bool:
        """Whether the file exists on disk with this session's header."""
        return self._persisted

    @property
    def writable(self) -> bool:
        return self._writer is not None or self.path is None

    @property
    def entries(self) -> list[StoredEntry]:
        """Every entry except the header, in file order."""
        return self._entries

    @property
    def by_id(self) -> dict[str, StoredEntry]:
        return self._by_id

    def get_entry(self, entry_id: str) -> StoredEntry | None:
        return self._by_id.get(entry_id)

    def require_entry(self, entry_id: str) -> StoredEntry:
        entry = self._by_id.get(entry_id)
        if entry is None:
            raise EntryNotFoundError(f"entry {echoed(entry_id)} not found in session {self.id}")
        return entry

    def branch(self, from_id: LeafId = UNSET) -> list[StoredEntry]:
        """Root-first path to ``from_id`` (default: the leaf); empty when the id is unknown."""
        if from_id is UNSET or from_id == self._leaf_id:
            return list(self._walked_active_path())
        with paused_garbage_collection():
            return self._path_to(from_id)

    def _walked_active_path(self) -> list[StoredEntry]:
        """The root→leaf path itself (not a copy), walked once per leaf move."""
        if self._active_path is None:
            with paused_garbage_collection():
                self._active_path = self._path_to(self._leaf_id)
        return self._active_path

    def _context_at_leaf(self) -> ActivePathContext:
        path = self._walked_active_path()
        if self._active_context is None or not self._active_context.follows(path):
            with paused_garbage_collection():
                self._active_context = ActivePathContext(path)
        return self._active_context

    def projection(self) -> list[ProjectedEntry]:
        """What each entry of the context at the leaf gives (``project_path`` of the branch),
        extended from the previous call's as entries are appended."""
        with paused_garbage_collection():
            return self._context_at_leaf().projection()

    def _path_to(self, entry_id: Any) -> list[StoredEntry]:
        # The path is made of this session's own entries, looked up in ``_by_id``.
        return cast("list[StoredEntry]", branch_path(self._by_id, entry_id))

    def named_thinking_level(self) -> str | None:
        """The level of the active path's last thinking level change that names one."""
        with paused_garbage_collection():
            return self._context_at_leaf().named_thinking_level()

    def children(self, parent_id: str) -> list[StoredEntry]:
        """The entries whose parent is ``parent_id``, in file order (a duplicate id counts once,
        as its later entry)."""
        return [
            entry for entry in self._children_of(parent_id) if self._by_id.get(entry.id) is entry
        ]

    def child_count(self, parent_id: str) -> int:
        """``len(children(parent_id))``, without a list for the many entries with one child."""
        children = self._children.get(parent_id)
        if children is None:
            return 0
        if not isinstance(children, list):
            return 1 if self._by_id.get(children.id) is children else 0
        return len(self.children(parent_id))

    def only_child(self, parent_id: str) -> StoredEntry | None:
        """The child of ``parent_id`` when it has exactly one (fast: long runs walk it)."""
        children = self._children.get(parent_id)
        if children is None:
            return None
        if not isinstance(children, list):
            return children if self._by_id.get(children.id) is children else None
        kept = self.children(parent_id)
        return kept[0] if len(kept) == 1 else None

    @property
    def branch_points(self) -> set[Any]:
        """Ids of the entries with more than one child (read-only; a damaged file's duplicate ids
        may put an entry here that has only one)."""
        return self._branch_points

    def root_entries(self) -> list[StoredEntry]:
        """The entries without a known parent (null, themselves or unknown), in file order."""
        by_id = self._by_id
        roots = [entry for entry in self._children_of(None) if by_id.get(entry.id) is entry]
        orphans = [
            entry
            for parent_id in self._unknown_parents
            if parent_id not in by_id
            for entry in self._children_of(parent_id)
            if by_id.get(entry.id) is entry
        ]
        if not orphans:
            return roots
        position = {id(entry): index for index, entry in enumerate(self._entries)}
        return sorted(roots + orphans, key=lambda entry: position[id(entry)])

    def label_of(self, entry_id: str) -> str | None:
        found = self._labels.get(entry_id)
        return found[0] if found else None

    @property
    def labels(self) -> dict[str, str]:
        """Current label per target entry (the latest label entry wins; empty clears)."""
        return {target: label for target, (label, _) in self._labels.items()}

    @property
    def name(self) -> str | None:
        """The name from the latest ``session_info`` entry; an empty name clears it."""
        entry = self._name_entry
        if entry is None:
            return None
        name = entry.get("name")
        return name.strip() or None if isinstance(name, str) else None

    def tree(self) -> list[TreeNode]:
        """Root nodes of the whole tree, children oldest first, with labels resolved."""
        return build_tree(self._entries, self._labels)

    def build_context(self, leaf_id: LeafId = UNSET) -> SessionContext:
        """What the LLM sees at ``leaf_id`` (default: the leaf), as pi's ``buildSessionContext``."""
        if leaf_id is UNSET or (leaf_id == self._leaf_id and leaf_id is not None):
            with paused_garbage_collection():
                return self._context_at_leaf().context()
        with paused_garbage_collection():
            return build_session_context(self._entries, leaf_id, self._by_id)

    # ----------------------------------------------------------------- appending

    def append_message(self, message: AgentMessage | MessageRecord) -> str:
        return self._append(
            lambda entry_id, parent, at: build.message(entry_id, parent, at, message)
        )

    def append_thinking_level_change(self, thinking_level: str) -> str:
        return self._append(
            lambda entry_id, parent, at: build.thinking_level_change(
                entry_id, parent, at, thinking_level
            )
        )

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._append(
            lambda entry_id, parent, at: build.model_change(
                entry_id, parent, at, provider, model_id
            )
        )

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
        usage: dict | None = None,
    ) -> str:
        """Append a compaction. On a path holding pi 1.6 system messages it carries their replay
        (``systemMessage``), as pi 1.6's own compactions do, so pi keeps its prompt state."""
        messages = self.build_context().messages
        return self._append(
            lambda entry_id, parent, at: build.compaction(
                entry_id,
                parent,
                at,
                summary=summary,
                first_kept_entry_id=first_kept_entry_id,
                tokens_before=tokens_before,
                details=details,
                usage=usage,
                from_hook=from_hook,
                system_message=current_system_message(messages, iso_to_epoch_ms(at) or 0),
            )
        )

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        return self._append(
            lambda entry_id, parent, at: build.custom(entry_id, parent, at, custom_type, data)
        )

    def append_custom_message(
        self, custom_type: str, content: str | list, display: bool, details: Any = None
    ) -> str:
        return self._append(
            lambda entry_id, parent, at: build.custom_message(
                entry_id,
                parent,
                at,
                custom_type=custom_type,
                content=content,
                display=display,
                details=details,
            )
        )

    def append_session_info(self, name: str) -> str:
        return self._append(
            lambda entry_id, parent, at: build.session_info(entry_id, parent, at, name)
        )

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or with an empty label, clear) the label of
        ``target_id``; the label entry becomes the leaf."""
        self.require_entry(target_id)
        return self._append(
            lambda entry_id, parent, at: build.label(entry_id, parent, at, target_id, label)
        )

    def append_context_edit(self, target_id: str, replacement: dict | None) -> str:
        """pi 1.6's ``appendContextEdit``: ``replacement`` (already normalized, see
        ``context_edits``) changes what ``target_id`` gives future context; null leaves it out.
        The target must be an editable message on the active branch, as pi requires."""
        target = self.require_entry(target_id)
        require_editable(target)
        if not self.is_on_active_branch(target_id):
            raise InvalidParamsError(
                f"entry {echoed(target_id)} is not on the active branch of session {self.id}: "
                "navigate to it first"
            )
        return self._append(
            lambda entry_id, parent, at: build.context_edit(
                entry_id, parent, at, target_id, replacement
            )
        )

    def is_on_active_branch(self, entry_id: str) -> bool:
        """Whether ``entry_id`` is on the path from the root to the leaf."""
        target = self._by_id.get(entry_id)
        return target is not None and any(entry is target for entry in self._walked_active_path())

    def append_raw(self, body: dict) -> str:
        """Append an entry built elsewhere (any type), given
        everything but id, parentId and timestamp."""

        def with_position(entry_id: str, parent: str | None, at: str) -> dict:
            entry = {"type": body["type"], "id": entry_id, "parentId": parent, "timestamp": at}
            entry.update((key, value) for key, value in body.items() if key not in entry)
            return entry

        return self._append(with_position)

    # ----------------------------------------------------------------- moving the leaf

    def move_leaf(self, entry_id: str) -> None:
        """Continue from ``entry_id``: the next append becomes its child (pi's ``branch``)."""
        self.require_entry(entry_id)
        self._set_leaf(entry_id)

    def reset_leaf(self) -> None:
        """The next append becomes a new root."""
        self._set_leaf(None)

    def branch_with_summary(
        self,
        target_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool | None = None,
        usage: dict | None = None,
    ) -> str:
        """Move to ``target_id`` and attach a summary of the branch being left there.

        ``fromId`` is the leaf being left (``"root"`` if there was none), as pi's documentation
        says; pi 0.84.2 itself wrote the target there, a bug fixed in 0.84.3.
        """
        if target_id is not None:
            self.require_entry(target_id)
        from_id = self._leaf_id or "root"
        previous_leaf = self._leaf_id
        self._set_leaf(target_id)
        try:
            return self._append(
                lambda entry_id, parent, at: build.branch_summary(
                    entry_id,
                    parent,
                    at,
                    from_id=from_id,
                    summary=summary,
                    details=details,
                    usage=usage,
                    from_hook=from_hook,
                )
            )
        except BaseException:
            self._set_leaf(previous_leaf)
            raise

    def adopt_entries(self, entries: list[StoredEntry]) -> None:
        """Fill a new, empty session with prepared entries (a
        fork) and write them if they hold a conversation."""
        if self._entries:
            raise ValueError("adopt_entries needs an empty session")
        for entry in entries:
            self._index(entry)
        if self._writer is not None and any(_starts_conversation(entry) for entry in entries):
            try:
                self._writer.create([self.header.raw, *(entry.raw for entry in entries)])
            except OSError as error:
                raise SessionWriteError(
                    f"could not write session file {self.path}: {error.strerror or error}"
                ) from error
            self._persisted = True
            self._tell_written()

    @property
    def label_timestamps(self) -> dict[str, tuple[str, Any]]:
        """Label and label-entry timestamp per target, in the order pi keeps them."""
        return dict(self._labels)

    # ----------------------------------------------------------------- internals

    def _set_leaf(self, entry_id: str | None) -> None:
        if entry_id != self._leaf_id:
            self._active_path = [] if entry_id is None else None
        self._leaf_id = entry_id

    def _append(self, make_entry) -> str:
        if self.path is not None and self._writer is None:
            raise SessionReadOnlyError(f"session opened read-only: {self.path}")
        body = make_entry(build.new_entry_id(self._by_id), self._leaf_id, now_iso())
        entry = StoredEntry.from_dict(body)
        self._write(entry)
        self._index(entry)
        return entry.id

    def _write(self, entry: StoredEntry) -> None:
        """Write ``entry`` (or, at the first conversation message, everything so far) to disk."""
        if self._writer is None:
            return
        try:
            if self._persisted:
                self._writer.append([entry.raw])
            elif _starts_conversation(entry):
                lines = [self.header.raw, *(line.raw for line in self._entries), entry.raw]
                if self._writer.is_open:
                    self._writer.append(lines)
                else:
                    self._writer.create(lines)
                self._persisted = True
            else:
                return
        except OSError as error:
            raise SessionWriteError(
                f"could not write session file {self.path}: {error.strerror or error}"
            ) from error
        self._tell_written()

    def _tell_written(self) -> None:
        if self.on_written is not None and self.path is not None:
            self.on_written(self.path)

    def _index(self, entry: StoredEntry) -> None:
        if is_session_header(entry):
            self.stray_headers.append(
                entry
            )  # a second header line: left in the file, not in the tree
            return
        entry_id = entry.id
        entry_type = entry.type
        if entry_id in self._by_id:
            self.report.duplicate_ids.append(entry_id)
        if entry_type not in build.KNOWN_ENTRY_TYPES and isinstance(entry_type, str):
            unknown = self.report.unknown_entry_types
            unknown[entry_type] = unknown.get(entry_type, 0) + 1
        self._entries.append(entry)
        self._by_id[entry_id] = entry
        self._index_parent(entry)
        if entry_type == "session_info":
            self._name_entry = entry
        elif entry_type == CONTEXT_EDIT:
            self.has_context_edits = True
        path = self._active_path
        if (
            path is not None
            and entry.parent_id == self._leaf_id
            and (path[-1].id if path else None) == self._leaf_id
        ):
            path.append(entry)  # the new entry extends the active path
        else:
            self._active_path = None
        self._leaf_id = entry_id
        if entry_type == "label":
            target = entry.get("targetId")
            label = entry.get("label")
            if label:
                self._labels[target] = (label, entry.get("timestamp"))
            else:
                self._labels.pop(target, None)

    def _index_parent(self, entry: StoredEntry) -> None:
        parent_id = entry.parent_id
        if not isinstance(parent_id, str) or parent_id == entry.id:
            parent_id = None  # a root: no parent, or itself (pi's getTree makes both roots)
        elif parent_id not in self._by_id:
            self._unknown_parents.add(parent_id)
        siblings = self._children.get(parent_id)
        if siblings is None:
            self._children[parent_id] = entry
        elif isinstance(siblings, list):
            siblings.append(entry)
        else:
            self._children[parent_id] = [siblings, entry]
            if parent_id is not None:
                self._branch_points.add(parent_id)

    def _children_of(self, parent_id: Any) -> Sequence[StoredEntry]:
        """The entries indexed under ``parent_id``, duplicates included, in file order."""
        children = self._children.get(parent_id)
        if children is None:
            return ()
        return children if isinstance(children, list) else (children,)


def _new_header(
    cwd: str, *, session_id: str | None = None, parent_session: str | None = None
) -> StoredEntry:
    header = build.header(session_id or build.new_session_id(), now_iso(), cwd, parent_session)
    return StoredEntry.from_dict(header)


def _starts_conversation(entry: StoredEntry) -> bool:
    return entry.type == "message" and entry.role in ("user", "assistant")
