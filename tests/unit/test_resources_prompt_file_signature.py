"""The check every snapshot access makes of the context and system-prompt files: it sees each way
such a file changes, and stats only the folders and the files present to do so."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pi_lsp.agent.resource_service import ResourceService
from pi_lsp.resources import prompt_file_signature as signature_module
from pi_lsp.resources.prompt_file_signature import (
    check_prompt_files,
    prompt_file_folders,
    prompt_files_signature,
)


@pytest.fixture
def workspace(tmp_path) -> Path:
    workspace = tmp_path / "project"
    (workspace / ".pi").mkdir(parents=True)
    (workspace / "AGENTS.md").write_text("Always answer in English.\n", encoding="utf-8")
    return workspace


def signature_of(workspace: Path, agent_dir: Path):
    return prompt_files_signature(prompt_file_folders(workspace, agent_dir))


def test_other_files_coming_and_going_beside_the_prompt_files_keep_the_signature(
    tmp_path, workspace
):
    agent_dir = tmp_path / "agent"
    recorded = signature_of(workspace, agent_dir)
    (workspace / "build.log").write_text("a build wrote this")
    (workspace / ".pi" / "sessions").mkdir()
    (tmp_path / "notes.txt").write_text("beside the workspace")
    checked = check_prompt_files(recorded)
    assert checked is not None
    assert check_prompt_files(checked) == checked  # the folders' new times are remembered


@pytest.mark.parametrize(
    "change",
    [
        "write in place",
        "replace by rename",
        "delete",
        "create a higher-precedence file",
        "create in an ancestor",
        "create in the agent directory",
        "create the agent directory with one",
        "create SYSTEM.md in .pi",
    ],
)
def test_every_kind_of_change_to_a_prompt_file_is_seen(tmp_path, workspace, change):
    agent_dir = tmp_path / "agent"
    context = workspace / "AGENTS.md"
    if change == "create in the agent directory":
        agent_dir.mkdir()
    recorded = signature_of(workspace, agent_dir)
    assert check_prompt_files(recorded) is not None
    if change == "write in place":
        with context.open("r+", encoding="utf-8") as file:
            file.write("Always answer in French, briefly.\n")
    elif change == "replace by rename":
        (workspace / ".AGENTS.md.swp").write_text("Always answer in Spanish.\n")
        os.replace(workspace / ".AGENTS.md.swp", context)
    elif change == "delete":
        context.unlink()
    elif change == "create a higher-precedence file":
        (workspace / "AGENTS.override.md").write_text("Override.\n")
    elif change == "create in an ancestor":
        (tmp_path / "CLAUDE.md").write_text("From above.\n")
    elif change == "create SYSTEM.md in .pi":
        (workspace / ".pi" / "SYSTEM.md").write_text("You are terse.")
    else:
        agent_dir.mkdir(exist_ok=True)
        (agent_dir / "AGENTS.md").write_text("Global rules.\n")
    assert check_prompt_files(recorded) is None


def test_a_dangling_link_whose_target_appears_is_seen(tmp_path, workspace):
    target = tmp_path / "shared-rules.md"
    (workspace / "AGENTS.md").unlink()
    (workspace / "AGENTS.md").symlink_to(target)
    recorded = signature_of(workspace, tmp_path / "agent")
    assert check_prompt_files(recorded) is not None
    target.write_text("Shared rules.\n")
    assert check_prompt_files(recorded) is None


def test_an_agent_directory_that_is_also_a_walked_folder_keeps_every_name(tmp_path, workspace):
    folders = prompt_file_folders(workspace, workspace / ".pi")
    assert "SYSTEM.md" in folders[str(workspace / ".pi")]
    assert "AGENTS.md" in folders[str(workspace / ".pi")]


def test_a_check_stats_each_folder_and_each_present_file_once(tmp_path, workspace, monkeypatch):
    service = ResourceService(workspace, tmp_path / "agent", trusted=True)
    first = service.snapshot
    statted: list[str] = []
    real_status = signature_module._status

    def counting_status(path):
        statted.append(str(path))
        return real_status(path)

    monkeypatch.setattr(signature_module, "_status", counting_status)
    time.sleep(signature_module.SETTLED_NS / 1e9)  # the folders the fixture wrote settle
    assert service.snapshot is first
    statted.clear()
    assert service.snapshot is first
    folders = [tmp_path / "agent", *[workspace, *workspace.parents], workspace / ".pi"]
    assert sorted(statted) == sorted([*map(str, folders), str(workspace / "AGENTS.md")])
    # A file written beside AGENTS.md: that folder's candidates are looked at until it settles.
    (workspace / "build.log").write_text("a build wrote this")
    statted.clear()
    assert service.snapshot is first
    assert len(statted) > len(folders) + 1
    time.sleep(signature_module.SETTLED_NS / 1e9)
    assert service.snapshot is first
    statted.clear()
    assert service.snapshot is first
    assert len(statted) == len(folders) + 1


def test_a_file_created_right_after_its_folder_changed_is_seen(tmp_path, workspace):
    # Both changes may fall in one tick of the clock file times come from: the folder's times
    # alone would not show the second.
    for attempt in range(20):
        (workspace / f"build{attempt}.log").write_text("a build wrote this")
        recorded = signature_of(workspace, tmp_path / "agent")
        (workspace / "CLAUDE.md").write_text("Also this.\n")
        assert check_prompt_files(recorded) is None
        (workspace / "CLAUDE.md").unlink()
