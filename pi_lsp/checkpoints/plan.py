"""Restore planning: which files a move between two entries concerns, what each should contain at
the target, and what to do with each given what it contains now.

A move from the leaf ``L`` to a target ``T`` leaves the branch ``A→L`` (``A`` their deepest common
ancestor) and takes ``A→T``. The files concerned are those a checkpoint on either branch changed.
For each, the content at ``T`` is the content after its last recorded change on the path
``root→T``, or, when that path never changed it, the content before its first change on ``A→L``
(the agent created it there: it is deleted; it deleted it there: it comes back). The content at
``L`` is found the same way, with the roles swapped; it is what the agent left there, as far as
the tree can tell (the ledger knows better, see ``ledger.py``).

``decide`` then picks the action for one file: ``skipped`` when its contents were never kept
(binary, too large), when it is already as it should be, or when it cannot be written;
``conflict`` when its content is not one pi-lsp left there (unless forced); else ``restored``,
``created`` or ``deleted``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from pi_lsp.checkpoints.records import FileChange, absolute_path, changes_of
from pi_lsp.protocol import FileAction

WRITING_ACTIONS = ("restored", "created", "deleted")

Entry = Mapping[str, Any]


@attrs.frozen
class Content:
    """A file's content as the tree knows it: a hash (None: absent), or why it is not known."""

    digest: str | None = None
    unknown: str | None = None
    """Why the content was not kept (``binary content``, ``larger than 5 MB``)."""


@attrs.frozen
class FileJourney:
    """One file a move concerns: its content at both ends."""

    path: str
    """Absolute."""
    target: Content
    origin: Content
    """At the entry moved from, as the tree tells it."""


@attrs.frozen
class Journey:
    """A move between two entries: the files concerned, and the entries on the branches."""

    files: tuple[FileJourney, ...]
    left: tuple[Entry, ...]
    """The entries of the branch being left (``A→L``, without ``A``)."""
    taken: tuple[Entry, ...]
    """The entries of the branch being taken (``A→T``, without ``A``)."""


def plan_journey(from_path: Sequence[Entry], to_path: Sequence[Entry], cwd: str) -> Journey:
    """The files a move from the end of ``from_path`` to the end of ``to_path`` concerns (both
    root-first entry paths); recorded paths are made absolute against ``cwd``."""
    shared = 0
    for mine, theirs in zip(from_path, to_path, strict=False):
        if mine.get("id") != theirs.get("id"):
            break
        shared += 1
    left, taken = tuple(from_path[shared:]), tuple(to_path[shared:])
    first_left, first_taken = _first_changes(left, cwd), _first_changes(taken, cwd)
    concerned = sorted({*first_left, *first_taken})
    last_at_target = _last_changes(to_path, cwd, set(concerned))
    last_at_origin = _last_changes(from_path, cwd, set(concerned))
    files = tuple(
        FileJourney(
            path,
            target=_content_at(last_at_target.get(path), first_left.get(path)),
            origin=_content_at(last_at_origin.get(path), first_taken.get(path)),
        )
        for path in concerned
    )
    return Journey(files, left, taken)


def _changes(entries: Sequence[Entry], cwd: str):
    for entry in entries:
        for change in changes_of(entry):
            yield absolute_path(change.path, cwd), change


def _first_changes(entries: Sequence[Entry], cwd: str) -> dict[str, FileChange]:
    first: dict[str, FileChange] = {}
    for path, change in _changes(entries, cwd):
        first.setdefault(path, change)
    return first


def _last_changes(entries: Sequence[Entry], cwd: str, wanted: set[str]) -> dict[str, FileChange]:
    last: dict[str, FileChange] = {}
    for path, change in _changes(entries, cwd):
        if path in wanted:
            last[path] = change
    return last


def _content_at(last_on_path: FileChange | None, first_elsewhere: FileChange | None) -> Content:
    """After the last change on the path, else before the first change on the other branch."""
    if last_on_path is not None:
        change, digest = last_on_path, last_on_path.after
    else:
        assert first_elsewhere is not None  # a concerned file changed on one branch at least
        change, digest = first_elsewhere, first_elsewhere.before
    if change.unrestorable is not None:
        return Content(unknown=change.unrestorable)
    return Content(digest)


# ------------------------------------------------------------------------------- one file's action


@attrs.frozen
class Current:
    """A file as it is now: its content hash (None: absent), or why it cannot be handled."""

    digest: str | None = None
    problem: str | None = None
    """``binary content``, ``larger than 5 MB``, ``a directory``, ``permission denied``…"""


@attrs.frozen
class Decision:
    action: FileAction
    reason: str | None = None

    @property
    def writes(self) -> bool:
        return self.action in WRITING_ACTIONS


ALREADY_THERE = "already as it was there"
CONFLICT = "changed since pi-lsp last wrote it (by you or a command); left as it is"
OVERWRITTEN = "overwrote changes made since pi-lsp last wrote it"
UNKNOWN_LAST_WRITE = "pi-lsp kept no copy of its last change to it ({}); left as it is"


def decide(
    target: Content,
    current: Current,
    clean: frozenset[str | None] | None,
    *,
    force: bool,
    writable: bool,
    unknown_reason: str | None = None,
) -> Decision:
    """What a restore does to one file.

    ``clean`` holds the contents pi-lsp left in the file (None: not known, any content is a
    conflict; ``unknown_reason`` says why); ``writable`` whether it may be written (or created, or
    deleted) by this process.
    """
    if target.unknown is not None:
        return Decision("skipped", f"not restorable: {target.unknown}")
    if current.problem is not None:
        return Decision("skipped", f"left as it is: {current.problem}")
    if current.digest == target.digest:
        return Decision("skipped", ALREADY_THERE)
    conflicted = clean is None or current.digest not in clean
    if conflicted and not force:
        reason = UNKNOWN_LAST_WRITE.format(unknown_reason) if unknown_reason else CONFLICT
        return Decision("conflict", reason)
    if not writable:
        return Decision("skipped", "permission denied")
    action: FileAction = (
        "deleted" if target.digest is None else "created" if current.digest is None else "restored"
    )
    return Decision(action, OVERWRITTEN if conflicted else None)
