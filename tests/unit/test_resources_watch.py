"""The resource watcher watches where resources live and nothing else: a session append wakes no
watch at all, while every resource change (and a resource folder created later) is still seen.

The watcher runs for real here (watchfiles over inotify); ``RustNotify``, the object watchfiles
polls, is wrapped to count the batches of changes it hands to Python: each is a wake-up of the
watcher, whether or not its filter keeps anything. The 5 s safety-net rescan is pushed out of
reach, so what is seen is seen by the watch.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import ClassVar, Self

import pytest
import watchfiles.main

from pi_lsp.agent import resource_service as resources_module
from pi_lsp.agent.resource_service import ResourceService
from pi_lsp.resources.snapshot import ResourceSnapshot
from pi_lsp.resources.watch_plan import watch_plan

SKILL = "---\nname: {name}\ndescription: Does {name}.\n---\nBody\n"


class CountingNotify:
    """watchfiles' ``RustNotify``, noting each batch of changes it returns (a wake-up)."""

    batches: ClassVar[list[tuple[bool, set]]] = []

    def __init__(self, paths, debug, force_polling, poll_delay_ms, recursive, *rest) -> None:
        self.recursive = recursive
        self.inner = REAL_NOTIFY(paths, debug, force_polling, poll_delay_ms, recursive, *rest)

    def __enter__(self):
        self.inner.__enter__()
        return self

    def __exit__(self, *exc_info):
        return self.inner.__exit__(*exc_info)

    def close(self) -> None:
        self.inner.close()

    def watch(self, *arguments):
        result = self.inner.watch(*arguments)
        if not isinstance(result, str):  # "timeout", "stop", "signal" are not changes
            CountingNotify.batches.append((self.recursive, result))
        return result


REAL_NOTIFY = watchfiles.main.RustNotify


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def counted(monkeypatch) -> list[tuple[bool, set]]:
    CountingNotify.batches = []
    monkeypatch.setattr(watchfiles.main, "RustNotify", CountingNotify)
    monkeypatch.setattr(resources_module, "RESCAN_SECONDS", 3600.0)
    return CountingNotify.batches


async def wait_until(condition, timeout: float = 5.0) -> None:
    async def poll():
        while not condition():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


class Watching:
    """A ``ResourceService`` whose ``watch`` runs, and the snapshot of each reload it reports."""

    def __init__(self, workspace: Path, agent_dir: Path) -> None:
        self.reloads: list[ResourceSnapshot] = []
        self.service = ResourceService(
            workspace,
            agent_dir,
            trusted=True,
            on_change=lambda changes, snapshot: self.reloads.append(snapshot),
        )
        self.service.reload()
        self.task: asyncio.Task | None = None

    async def __aenter__(self) -> Self:
        self.task = asyncio.get_running_loop().create_task(self.service.watch())
        await asyncio.sleep(0.5)  # the watches registered, the settle-time rescan done
        return self

    async def __aexit__(self, *exc_info) -> None:
        self.service.stop()
        assert self.task is not None
        await asyncio.wait_for(self.task, 5)

    async def skills_become(self, *names: str) -> None:
        await self.reported(
            lambda snapshot: sorted(skill.name for skill in snapshot.skills) == sorted(names)
        )

    async def reported(self, condition) -> None:
        """Until the newest reload reported meets ``condition`` (no access to the snapshot: an
        access checks the context files itself)."""
        await wait_until(lambda: bool(self.reloads) and condition(self.reloads[-1]))


def write_skill(folder: Path, name: str) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "SKILL.md").write_text(SKILL.format(name=name))


def project(tmp_path: Path) -> tuple[Path, Path]:
    workspace, agent_dir = tmp_path / "project", tmp_path / "home" / ".pi" / "agent"
    (workspace / ".pi" / "sessions").mkdir(parents=True)
    (agent_dir / "sessions" / "--project--").mkdir(parents=True)
    (workspace / "AGENTS.md").write_text("Answer briefly.\n")
    return workspace, agent_dir


def woken_by(counted: list[tuple[bool, set]], *folders: Path) -> list[set]:
    """The batches that hold a change inside ``folders`` (the ancestors' watch, ``/tmp``'s among
    them, wakes for whatever else happens there)."""
    return [
        changes
        for _, changes in counted
        if any(
            Path(path) != folder and Path(path).is_relative_to(folder)
            for _, path in changes
            for folder in folders
        )
    ]


async def append_sessions(*files: Path, lines: int = 15) -> None:
    for index in range(lines):
        for file in files:
            with file.open("a", encoding="utf-8") as session:
                session.write(json.dumps({"type": "message", "id": f"{index:08x}"}) + "\n")
        await asyncio.sleep(0.03)  # appends spread over several debounce windows
    await asyncio.sleep(0.3)  # anything the watch saw has been handed over by now


async def test_session_appends_wake_no_watch_and_resource_changes_still_do(tmp_path, home, counted):
    workspace, agent_dir = project(tmp_path)
    write_skill(workspace / ".pi" / "skills", "lint")
    ours = workspace / ".pi" / "sessions" / "2026-01-01_a.jsonl"
    pis = agent_dir / "sessions" / "--project--" / "2026-01-01_b.jsonl"
    async with Watching(workspace, agent_dir) as watching:
        await append_sessions(ours, pis)  # the session files are created, then appended to
        assert woken_by(counted, ours.parent, pis.parent) == []
        # The same watch still sees resources, inside .pi and beside the sessions.
        write_skill(workspace / ".pi" / "skills", "format")
        await watching.skills_become("lint", "format")
        (agent_dir / "settings.json").write_text('{"enableSkillCommands": false}')
        await watching.reported(
            lambda snapshot: not snapshot.settings.settings.enable_skill_commands
        )
        assert woken_by(counted, workspace / ".pi", agent_dir), "the counting sees wake-ups"


async def test_resource_folders_created_after_the_start_are_watched(tmp_path, home, counted):
    workspace, agent_dir = project(tmp_path)
    async with Watching(workspace, agent_dir) as watching:
        write_skill(workspace / ".pi" / "skills", "lint")  # .pi/skills did not exist
        await watching.skills_become("lint")
        await asyncio.sleep(0.3)  # the rebuilt watch in place: now a change inside the folder
        write_skill(workspace / ".pi" / "skills", "format")
        await watching.skills_become("lint", "format")
        write_skill(agent_dir / "skills", "review")  # the global agent directory's
        await watching.skills_become("lint", "format", "review")
        await asyncio.sleep(0.3)
        (agent_dir / "skills" / "review" / "SKILL.md").unlink()
        await watching.skills_become("lint", "format")
        write_skill(home / ".agents" / "skills", "deploy")  # ~/.agents did not exist
        await watching.skills_become("lint", "format", "deploy")
        await append_sessions(workspace / ".pi" / "sessions" / "2026-01-01_a.jsonl")
        assert woken_by(counted, workspace / ".pi" / "sessions") == []


async def test_a_project_folder_created_after_the_start_is_watched(tmp_path, home, counted):
    workspace, agent_dir = tmp_path / "project", tmp_path / "home" / ".pi" / "agent"
    workspace.mkdir()
    async with Watching(workspace, agent_dir) as watching:
        write_skill(workspace / ".pi" / "skills", "lint")  # .pi itself did not exist
        await watching.skills_become("lint")
        await asyncio.sleep(0.3)
        (workspace / ".pi" / "SYSTEM.md").write_text("You are terse.")
        await watching.reported(lambda snapshot: snapshot.system_prompt is not None)
        (workspace / ".pi" / "sessions").mkdir()
        await append_sessions(workspace / ".pi" / "sessions" / "2026-01-01_a.jsonl")
        assert woken_by(counted, workspace / ".pi" / "sessions") == []


def test_the_plan_watches_resource_folders_deeply_and_session_holders_shallowly(tmp_path, home):
    workspace, agent_dir = project(tmp_path)
    (workspace / ".pi" / "skills").mkdir()
    (agent_dir / "extensions").mkdir()
    named = tmp_path / "team-skills"
    named.mkdir()
    plan = watch_plan(workspace, agent_dir, home, [named, tmp_path / "shared" / "one.md"])
    assert set(plan.recursive) == {workspace / ".pi" / "skills", agent_dir / "extensions", named}
    assert {workspace / ".pi", agent_dir, workspace, tmp_path, home}.issubset(plan.shallow)
    sessions = [workspace / ".pi" / "sessions", agent_dir / "sessions"]
    for folder in plan.recursive:
        assert not any(session.is_relative_to(folder) for session in sessions)
    assert str(workspace / ".pi" / "prompts") in plan.places  # seen appearing in .pi
    assert str(home / ".agents") in plan.places  # seen appearing in the home folder
    assert plan.is_shallow_resource(str(workspace / "agents.md"))
    assert plan.is_shallow_resource(str(workspace / ".pi" / "settings.json"))
    assert plan.is_shallow_resource(str(agent_dir / "auth.json"))
    assert plan.is_shallow_resource(str(tmp_path / "shared" / "one.md"))
    assert not plan.is_shallow_resource(str(workspace / ".pi" / "sessions"))
    assert not plan.is_shallow_resource(str(workspace / "settings.json"))
