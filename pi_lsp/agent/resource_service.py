"""The agent's procedural memory at run time: the current resource snapshot, reloads and watching.

``ResourceService`` holds the last loaded ``ResourceSnapshot`` (context files, SYSTEM.md and
APPEND_SYSTEM.md, skills, prompt templates, pi's settings). ``reload`` lists every resource folder
again, re-reads only the skill and template files that changed (a parsed-file cache), and
reports what was added, changed and removed; problems (a broken SKILL.md, a settings file with
bad JSON) come back as diagnostics, and the last good values stay in force. ``watch`` runs
watchfiles over the places resources live (``resources/watch_plan.py``: the resource folders
recursively, the folders that hold resource files only for their own entries, so session appends
in ``.pi/sessions`` wake nothing) and reloads, debounced, whenever something there changes; a
resource folder appearing or going away rebuilds the watch and triggers a full rescan, so a
SKILL.md written right after its folder is created is not missed. Skill and template paths named
in settings are watched too, and the watch is rebuilt when that list changes.

Every access to the snapshot first checks that no context or system-prompt file changed since it
was read (``resources/prompt_file_signature.py``: a few stats), so a prompt sent right after an
editor saved AGENTS.md in place never reads it half-written.

Python extensions are resources too: each reload hands the extension files found to the
``ExtensionHost``, which imports what is new or changed (so an edited extension is live at the
next turn); their load problems join the snapshot's diagnostics.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from pi_lsp.extensions import ExtensionHost
from pi_lsp.protocol import ResourcesChanged
from pi_lsp.resources.files import ParsedFileCache
from pi_lsp.resources.prompt_file_signature import PromptFilesSignature, check_prompt_files
from pi_lsp.resources.snapshot import (
    ResourceSnapshot,
    diff_snapshots,
    load_resources,
)
from pi_lsp.resources.watch_plan import WatchPlan, watch_plan

logger = logging.getLogger(__name__)

ChangeListener = Callable[[ResourcesChanged, ResourceSnapshot], None]

WATCH_DEBOUNCE_MS = 50
WATCH_SETTLE_SECONDS = 0.2
RESCAN_SECONDS = 5.0


class ResourceService:
    def __init__(
        self,
        workspace: Path,
        agent_dir: Path,
        *,
        trusted: bool,
        on_change: ChangeListener | None = None,
        extensions: ExtensionHost | None = None,
    ) -> None:
        self.workspace = workspace
        self.extensions = extensions or ExtensionHost()
        """The extensions in force, kept in step with the extension files at every reload."""
        self.agent_dir = agent_dir
        self.trusted = trusted
        self._on_change = on_change
        self._snapshot: ResourceSnapshot | None = None
        self._parsed_files = ParsedFileCache()
        self._stop = asyncio.Event()
        self._watching: WatchPlan | None = None
        self._places_changed = asyncio.Event()
        self._round_stop = asyncio.Event()
        self._prompt_files: PromptFilesSignature = ()
        """The snapshot's signature of its prompt files, as last checked."""

    @property
    def snapshot(self) -> ResourceSnapshot:
        """The resources in force; loaded again first when a context or system-prompt file
        changed since (an editor that truncates, then writes, may be seen by the watcher half-way
        through, and its next reload may not have come yet)."""
        checked = check_prompt_files(self._prompt_files) if self._snapshot is not None else None
        if checked is None:
            self.reload()
        else:
            self._prompt_files = checked
        assert self._snapshot is not None
        return self._snapshot

    @property
    def loaded(self) -> ResourceSnapshot:
        """The resources last loaded, without the check of the context and system-prompt files
        that ``snapshot`` makes (a few stats): for what a turn reads several times and only the
        watcher keeps current anyway (settings, models, credentials, skills and templates)."""
        if self._snapshot is None:
            self.reload()
        assert self._snapshot is not None
        return self._snapshot

    def reload(self) -> ResourcesChanged:
        """Load every resource again; tell the listener what changed (and the new diagnostics)."""
        previous = self._snapshot
        try:
            snapshot = load_resources(
                self.workspace,
                self.agent_dir,
                trusted=self.trusted,
                previous=previous,
                cache=self._parsed_files,
            )
        except Exception:  # a loader bug must not take prompts down: keep the last good snapshot
            logger.exception("loading resources failed; keeping the previous ones")
            return diff_snapshots(previous, previous) if previous else ResourcesChanged()
        extension_problems = self.extensions.sync(snapshot.extension_files)
        if extension_problems:
            snapshot = attrs.evolve(
                snapshot, diagnostics=(*snapshot.diagnostics, *extension_problems)
            )
        changes = diff_snapshots(previous, snapshot)
        self._snapshot = snapshot
        self._prompt_files = snapshot.prompt_files_signature
        if self._watching is not None and self.watch_plan() != self._watching:
            self._places_changed.set()  # settings now name other paths: rebuild the watch
        if (
            self._on_change is not None
            and previous is not None
            and (not changes.is_empty or previous.diagnostics != snapshot.diagnostics)
        ):
            self._on_change(changes, snapshot)
        return changes

    def publish_current(self) -> None:
        """Hand the whole current snapshot to the listener
        (as everything added, with its diagnostics)."""
        if self._on_change is not None:
            self._on_change(diff_snapshots(None, self.snapshot), self.snapshot)

    def expand_prompt(self, text: str) -> str:
        """``/skill:name args`` then ``/template args``, as pi expands a submitted prompt."""
        from pi_lsp.resources.skills import expand_skill_command
        from pi_lsp.resources.templates import expand_template

        snapshot = self.loaded
        if snapshot.settings.settings.enable_skill_commands:
            text = expand_skill_command(text, snapshot.skills)
        return expand_template(text, snapshot.templates)

    def watch_plan(self) -> WatchPlan:
        """The folders to watch now (``resources/watch_plan.py``): the resource folders, not the
        session files that live beside them."""
        return watch_plan(self.workspace, self.agent_dir, Path.home(), self._named_paths())

    def _named_paths(self) -> list[Path]:
        return (
            [Path(path) for path in self._snapshot.named_paths]
            if self._snapshot is not None
            else []
        )

    async def watch(self) -> None:
        """Reload on every change in a watched place until ``stop`` (best effort: never raises).

        When a resource folder (``.pi``, ``.pi/skills``, ``.agents``…) appears where there was
        none, or goes away, the watch is rebuilt on a new plan, and everything is rescanned.
        """
        from watchfiles import awatch

        try:
            while not self._stop.is_set():
                self._watching = plan = self.watch_plan()
                self._places_changed.clear()
                # awatch sets the stop event it is given when it is cancelled: each round gets its
                # own, so rebuilding the watch does not stop watching altogether.
                self._round_stop = asyncio.Event()
                watchers: list[asyncio.Future[Any]] = [
                    asyncio.ensure_future(
                        self._watch_group(awatch, plan, recursive, self._round_stop)
                    )
                    for recursive, paths in ((True, plan.recursive), (False, plan.shallow))
                    if paths
                ]
                if not watchers:
                    return
                watchers.append(asyncio.ensure_future(self._rescan_periodically()))
                watchers.append(asyncio.ensure_future(self._places_changed.wait()))
                done, pending = await asyncio.wait(watchers, return_when=asyncio.FIRST_COMPLETED)
                for watcher in pending:
                    watcher.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                for watcher in done:
                    watcher.result()
                self.reload()  # a new resource folder: rescan everything once the watch is rebuilt
        except Exception:
            logger.exception("watching resources stopped")

    async def _rescan_periodically(self) -> None:
        """A safety net, not the main path: catches what changed while a watch was being set up
        (inotify only watches a folder once it is registered) and what a watcher missed."""
        await asyncio.sleep(WATCH_SETTLE_SECONDS)
        self.reload()
        while not self._stop.is_set():
            await asyncio.sleep(RESCAN_SECONDS)
            self.reload()

    async def _watch_group(
        self, awatch, plan: WatchPlan, recursive: bool, stop_event: asyncio.Event
    ) -> None:
        """Reload on each batch of changes; return when a place appeared or went away."""
        paths = plan.recursive if recursive else plan.shallow
        async for changes in awatch(
            *paths,
            recursive=recursive,
            debounce=WATCH_DEBOUNCE_MS,
            step=20,
            stop_event=stop_event,
            # A folder that went away since it was planned (the next reload finds the plan
            # changed and rebuilds the watch) or cannot be read is skipped, not fatal to the rest.
            ignore_permission_denied=True,
            watch_filter=_resource_filter(paths) if recursive else _shallow_filter(plan),
        ):
            if not recursive and any(path in plan.places for _, path in changes):
                return
            self.reload()

    def stop(self) -> None:
        self._stop.set()
        self._round_stop.set()


IGNORED_PARTS = frozenset({"sessions", "node_modules", ".git", "__pycache__"})


def _resource_filter(roots: tuple[Path, ...]):
    """Inside resource folders, what tools and version control keep there never triggers a
    reload (nor a session file, should settings name a folder that holds sessions)."""

    def accept(change, path: str) -> bool:
        if path.endswith(".jsonl"):
            return False
        candidate = Path(path)
        for root in roots:
            if candidate.is_relative_to(root):
                return not IGNORED_PARTS.intersection(candidate.relative_to(root).parts)
        return True

    return accept


def _shallow_filter(plan: WatchPlan):
    """In a folder watched for its own entries, only its resource files and the resource folders
    appearing or going away matter."""

    def accept(change, path: str) -> bool:
        return plan.is_shallow_resource(path)

    return accept
