"""Context files and SYSTEM.md / APPEND_SYSTEM.md lookup, and the untrusted-workspace diagnostic."""

from __future__ import annotations

from pathlib import Path

from pi_lsp.resources.context_files import (
    find_append_system_prompt,
    find_system_prompt,
    load_context_files,
)
from pi_lsp.resources.trust import untrusted_workspace_diagnostic


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_global_first_then_root_down_to_workspace(tmp_path):
    agent_dir = tmp_path / "agent"
    workspace = tmp_path / "repo" / "pkg" / "app"
    workspace.mkdir(parents=True)
    write(agent_dir / "AGENTS.md", "global")
    write(tmp_path / "repo" / "CLAUDE.md", "repo claude")
    write(tmp_path / "repo" / "pkg" / "AGENTS.md", "pkg agents")
    write(tmp_path / "repo" / "pkg" / "CLAUDE.md", "pkg claude (loses)")
    write(workspace / "AGENTS.md", "\ufeffapp")
    write(workspace / "sub" / "AGENTS.md", "below the workspace: never")
    files, diagnostics = load_context_files(workspace, agent_dir)
    assert [(Path(f.path).relative_to(tmp_path).as_posix(), f.content) for f in files] == [
        ("agent/AGENTS.md", "global"),
        ("repo/CLAUDE.md", "repo claude"),
        ("repo/pkg/AGENTS.md", "pkg agents"),
        ("repo/pkg/app/AGENTS.md", "app"),
    ]
    assert diagnostics == ()


def test_override_file_wins(tmp_path):
    write(tmp_path / "AGENTS.md", "normal")
    write(tmp_path / "AGENTS.override.md", "override")
    files, _ = load_context_files(tmp_path, tmp_path / "agent")
    assert [f.content for f in files] == ["override"]


def test_agent_dir_inside_the_walk_is_not_repeated(tmp_path):
    write(tmp_path / "AGENTS.md", "once")
    files, _ = load_context_files(tmp_path, tmp_path)
    assert [f.content for f in files] == ["once"]


def test_system_prompt_files_prefer_the_trusted_project(tmp_path):
    agent_dir, workspace = tmp_path / "agent", tmp_path / "ws"
    write(agent_dir / "SYSTEM.md", "global system")
    write(workspace / ".pi" / "SYSTEM.md", "project system")
    write(agent_dir / "APPEND_SYSTEM.md", "global append")
    assert find_system_prompt(workspace, agent_dir, trusted=True)[0].content == "project system"
    assert find_system_prompt(workspace, agent_dir, trusted=False)[0].content == "global system"
    assert (
        find_append_system_prompt(workspace, agent_dir, trusted=True)[0].content == "global append"
    )
    assert find_append_system_prompt(workspace / "x", tmp_path / "none", trusted=True) == (None, ())


def test_untrusted_diagnostic_lists_what_was_skipped(tmp_path):
    assert untrusted_workspace_diagnostic(tmp_path) is None
    write(tmp_path / ".pi" / "settings.json", "{}")
    (tmp_path / ".pi" / "skills").mkdir()
    diagnostic = untrusted_workspace_diagnostic(tmp_path)
    assert diagnostic is not None and diagnostic.severity == "warning"
    assert ".pi/settings.json" in diagnostic.message and ".pi/skills" in diagnostic.message
    assert ".pi/prompts" not in diagnostic.message
