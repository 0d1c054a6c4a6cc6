"""Which skill and prompt-template files load: pi-lsp's discovery against pi 0.84.2's own
``DefaultPackageManager.resolve()`` on the same folders — ``.gitignore``/``.ignore``/``.fdignore``
files in resource folders, ``!glob``/``+path``/``-path`` override entries and include globs in
the settings files' ``skills`` and ``prompts`` arrays, ``.agents/skills`` up to the git root; and
which context files load in a git worktree nested inside its main checkout."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pi_lsp.resources.context_files import load_context_files
from pi_lsp.resources.snapshot import load_resources

from .harness import REFERENCE_DIR, run_node_script

SCRIPT = REFERENCE_DIR / "resources_reference.mjs"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def skill(path: Path, name: str) -> None:
    write(path, f"---\nname: {name}\ndescription: The {name} skill.\n---\nDo {name} things.\n")


def build_layout(root: Path) -> tuple[Path, Path, Path]:
    home, agent, workspace = root / "home", root / "agent", root / "home" / "code" / "project"
    (workspace / ".git").mkdir(parents=True)
    skills = workspace / ".pi" / "skills"
    for name in ("alpha", "gamma", "delta", "epsilon"):
        skill(skills / name / "SKILL.md", name)
    skill(skills / "drafts" / "beta" / "SKILL.md", "beta")
    skill(skills / "notes.md", "notes")
    skill(skills / "wip.md", "wip")
    write(skills / ".gitignore", "# drafts are not ready\ndrafts/\n/wip.md\n")
    skill(skills / "nested" / "keep" / "SKILL.md", "keep")
    skill(skills / "nested" / "skip" / "SKILL.md", "skip")
    write(skills / "nested" / ".ignore", "*/\n!keep/\n")
    skill(skills / "hidden-root" / "SKILL.md", "hidden-root")
    skill(skills / "hidden-root" / "inner" / "SKILL.md", "inner")
    write(skills / "hidden-root" / ".fdignore", "SKILL.md\n")
    agents = workspace / ".agents" / "skills"
    skill(agents / "agent-one" / "SKILL.md", "agent-one")
    skill(agents / "ignored-agent" / "SKILL.md", "ignored-agent")
    write(agents / ".gitignore", "ignored-agent/\n")
    skill(workspace / "extra" / "e1" / "SKILL.md", "e1")
    skill(workspace / "extra" / "e2" / "SKILL.md", "e2")
    prompts = workspace / ".pi" / "prompts"
    for name in ("review", "draft", "cleanup"):
        write(prompts / f"{name}.md", f"---\ndescription: {name}\n---\n{name} $1\n")
    write(prompts / ".gitignore", "draft.md\n")
    write(
        workspace / ".pi" / "settings.json",
        json.dumps(
            {
                "skills": ["!gamma", "!d*", "+skills/delta", "../extra", "e1*", "-skills/epsilon"],
                "prompts": ["!cleanup.md"],
            }
        ),
    )
    skill(agent / "skills" / "global-one" / "SKILL.md", "global-one")
    skill(agent / "skills" / "global-off" / "SKILL.md", "global-off")
    write(agent / "prompts" / "user-prompt.md", "---\ndescription: user\n---\nHi\n")
    write(agent / "settings.json", json.dumps({"skills": ["-skills/global-off"]}))
    skill(home / ".agents" / "skills" / "home-skill" / "SKILL.md", "home-skill")
    return home, agent, workspace


def pi_enabled(reference_node: Path, home: Path, agent: Path, workspace: Path) -> dict:
    variables = {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent)}
    return json.loads(
        run_node_script(reference_node, SCRIPT, [str(workspace), str(agent)], variables=variables)
    )


def test_enabled_skills_and_templates_match_pi(reference_node: Path, tmp_path: Path):
    home, agent, workspace = build_layout(tmp_path)
    reference = pi_enabled(reference_node, home, agent, workspace)
    ours = load_resources(workspace, agent, trusted=True, home=home)
    our_skills = sorted(skill.file_path for skill in ours.skills)
    assert our_skills == sorted(reference["skills"])
    assert sorted(template.file_path for template in ours.templates) == sorted(reference["prompts"])
    names = {skill.name for skill in ours.skills}
    # The layout exercises each rule; make sure the expectations are not vacuous.
    assert {
        "alpha",
        "delta",
        "notes",
        "keep",
        "inner",
        "agent-one",
        "e1",
        "global-one",
        "home-skill",
    } <= names
    assert not names & {
        "gamma",
        "beta",
        "wip",
        "skip",
        "hidden-root",
        "ignored-agent",
        "e2",
        "epsilon",
        "global-off",
    }


def git(directory: Path, *arguments: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *arguments],
        cwd=directory,
        check=True,
        capture_output=True,
        timeout=60,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to make a worktree")
def test_a_nested_worktree_shadows_its_main_checkouts_context_file_as_in_pi(
    reference_node: Path, tmp_path: Path
):
    home, agent = tmp_path / "home", tmp_path / "agent"
    main = home / "repo"
    (main / "docs").mkdir(parents=True)
    agent.mkdir()
    write(main / "AGENTS.md", "main rules\n")
    git(main, "init", "-q")
    git(main, "add", "AGENTS.md")
    git(main, "commit", "-q", "-m", "rules")
    git(main, "worktree", "add", "-q", "feature")
    write(main / "feature" / "AGENTS.md", "feature rules\n")
    write(home / "CLAUDE.md", "home rules\n")
    cases = {
        main / "feature": [home / "CLAUDE.md", main / "feature" / "AGENTS.md"],
        main / "docs": [home / "CLAUDE.md", main / "AGENTS.md"],
    }
    for workspace, expected in cases.items():
        reference = pi_enabled(reference_node, home, agent, workspace)["contextFiles"]
        files, _ = load_context_files(workspace, agent)
        ours = [file.path for file in files]
        assert [path for path in ours if path.startswith(str(tmp_path))] == [
            str(path) for path in expected
        ]
        assert ours == reference
