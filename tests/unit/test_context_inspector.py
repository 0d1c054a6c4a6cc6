"""The context inspector's pieces that are not the pipeline's: the system prompt's sections (which
must be the prompt a turn sends, split) and what extensions changed in a turn's prompt."""

from __future__ import annotations

from pathlib import Path

import attrs

from pi_lsp.agent.agent import prompt_addition
from pi_lsp.agent.system_prompt import build_system_prompt, system_prompt_sections
from pi_lsp.resources.context_files import ContextFile
from pi_lsp.resources.snapshot import load_resources

READ = {"name": "read", "description": "Read a file.\nMore.", "parameters": {}}


def snapshot(tmp_path: Path, **files: str):
    workspace = tmp_path / "project"
    agent_dir = tmp_path / "agent"
    for folder in (workspace / ".pi", agent_dir):
        folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (workspace / name).write_text(text)
    return workspace, load_resources(workspace, agent_dir, trusted=True, home=tmp_path)


def test_the_sections_are_the_prompt_split(tmp_path):
    workspace, resources = snapshot(tmp_path, **{"AGENTS.md": "Use tabs.", "CLAUDE.md": "x"})
    sections = system_prompt_sections(workspace, [READ], resources)
    assert "\n\n".join(s.text for s in sections) == build_system_prompt(
        workspace, [READ], resources
    )
    kinds = [section.kind for section in sections]
    assert kinds[0] == "base" and kinds[-1] == "environment"
    [agents] = [section for section in sections if section.kind == "contextFile"]
    assert agents.path and agents.path.endswith("AGENTS.md") and "Use tabs." in agents.text


def test_system_and_append_system_files_are_sections_of_their_own(tmp_path):
    workspace, resources = snapshot(tmp_path)
    resources = attrs.evolve(
        resources,
        system_prompt=ContextFile("/p/.pi/SYSTEM.md", "You are terse."),
        append_system_prompt=ContextFile("/p/.pi/APPEND_SYSTEM.md", "Be kind."),
    )
    sections = system_prompt_sections(workspace, [], resources)
    assert [(s.kind, s.text) for s in sections[:2]] == [
        ("systemFile", "You are terse."),
        ("appendSystem", "Be kind."),
    ]
    assert "\n\n".join(s.text for s in sections) == build_system_prompt(workspace, [], resources)


def test_what_extensions_changed_in_a_prompt():
    assert prompt_addition("base", "base") == ""
    assert prompt_addition("base", "base\n\nMore rules.") == "\n\nMore rules."
    assert prompt_addition("base", "Intro.\nbase") == "Intro.\n"
    assert prompt_addition("base", "Something else") == "Something else"
