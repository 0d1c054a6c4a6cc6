"""Whether a context file, ``SYSTEM.md`` or ``APPEND_SYSTEM.md`` changed since a snapshot read them,
without waiting for the file watcher.

An editor that saves in place truncates the file, then writes it: the watcher may reload between
the two, and its reload for the write comes tens of milliseconds later. So every turn asks this
module before it builds its system prompt (``ResourceService.snapshot``); it must be cheap.

A signature records, for each folder a prompt file may be read from (the agent directory, the
workspace and each ancestor, the project's ``.pi``), the folder's own status and the status of
each candidate name present in it. Checking stats each folder and only the candidates that were
present: a file created, deleted or renamed in a folder changes the folder's modification and
change times (and a rename over a present file its inode), and a file written in place changes
its own. When a folder changed (a build wrote a file next to AGENTS.md), its candidates are all
looked at again: if they are as they were, the signature takes the folder's new status and the
snapshot stays. Typically that is 6–10 stats a check instead of one for each of the 30–40 places
a prompt file could be.

File times come from a coarse clock (a tick of up to 10 ms): a file created in the same tick as
an earlier change of its folder would leave the folder's times as they were. So a folder changed
less than ``SETTLED_NS`` before it was looked at is not trusted to show the next change: each check
looks at all its candidates until it has been quiet that long. A present candidate that is a
dangling symbolic link is recorded as present with no status, so its target appearing shows.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import attrs

from pi_lsp.resources.context_files import (
    APPEND_SYSTEM_PROMPT_FILE,
    CONTEXT_FILE_CANDIDATES,
    PROJECT_CONFIG_DIR,
    SYSTEM_PROMPT_FILE,
)

Status = tuple[int, int, int, int]
"""Size, modification and change times (ns), inode."""
SETTLED_NS = 50_000_000
"""How long after its last change a folder's times are sure to change again with the next one
(several ticks of the clock file times are taken from)."""


@attrs.frozen
class FolderSignature:
    folder: str
    names: tuple[str, ...]
    """The candidate file names a prompt file may be read under in this folder."""
    status: Status | None
    """The folder's own (None when it does not exist)."""
    present: tuple[tuple[str, Status | None], ...]
    """Each candidate present in the folder, with its status (None: a dangling link)."""
    settled: bool
    """Whether the folder's times were old enough, when looked at, to change with the next entry
    created or deleted in it."""


PromptFilesSignature = tuple[FolderSignature, ...]


def prompt_file_folders(workspace: Path, agent_dir: Path) -> dict[str, tuple[str, ...]]:
    """Every folder a context file, ``SYSTEM.md`` or ``APPEND_SYSTEM.md`` may be read from, with
    the names it may have there."""
    prompt_names = (SYSTEM_PROMPT_FILE, APPEND_SYSTEM_PROMPT_FILE)
    places: list[tuple[Path, tuple[str, ...]]] = [
        (agent_dir, CONTEXT_FILE_CANDIDATES + prompt_names)
    ]
    places += [(folder, CONTEXT_FILE_CANDIDATES) for folder in (workspace, *workspace.parents)]
    places.append((workspace / PROJECT_CONFIG_DIR, prompt_names))
    folders: dict[str, tuple[str, ...]] = {}
    for folder, names in places:  # the agent directory may be one of the others
        folders[str(folder)] = tuple(dict.fromkeys(folders.get(str(folder), ()) + names))
    return folders


def prompt_files_signature(folders: dict[str, tuple[str, ...]]) -> PromptFilesSignature:
    """The signature of ``prompt_file_folders`` as they are now (one stat per candidate)."""
    return tuple(_folder_signature(folder, names) for folder, names in folders.items())


def check_prompt_files(signature: PromptFilesSignature) -> PromptFilesSignature | None:
    """None when a prompt file was written, created or deleted since ``signature`` was taken;
    else the signature to check against next time (a folder's new status once its candidates
    proved unchanged)."""
    checked: list[FolderSignature] = []
    for recorded in signature:
        if recorded.settled and _status(recorded.folder) == recorded.status:
            for name, status in recorded.present:
                if _status(os.path.join(recorded.folder, name)) != status:
                    return None
            checked.append(recorded)
            continue
        again = _folder_signature(recorded.folder, recorded.names)
        if again.present != recorded.present:
            return None
        checked.append(again)
    return tuple(checked)


def _folder_signature(folder: str, names: tuple[str, ...]) -> FolderSignature:
    # The folder first: an entry created after this stat changes it again.
    status = _status(folder)
    present: list[tuple[str, Status | None]] = []
    if status is not None:
        for name in names:
            path = os.path.join(folder, name)
            if os.path.lexists(path):  # one call for each absent name, the usual case
                present.append((name, _status(path)))
    settled = status is None or time.time_ns() - max(status[1], status[2]) > SETTLED_NS
    return FolderSignature(folder, names, status, tuple(present), settled)


def _status(path: str) -> Status | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)
