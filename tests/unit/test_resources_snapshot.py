"""The composed resource snapshot: pi's locations and
precedence, trust, settings paths, diffs, speed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import attrs
import pytest

from pi_lsp.protocol import ResourceChange
from pi_lsp.resources.snapshot import diff_snapshots, load_resources


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_skill(directory: Path, name: str, description: str = "d") -> Path:
    return write(
        directory / name / "SKILL.md",
        f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n",
    )


@attrs.frozen
class Layout:
    root: Path
    repo: Path
    workspace: Path
    agent_dir: Path
    home: Path

    def load(self, *, trusted: bool = True, previous=None):
        return load_resources(
            self.workspace, self.agent_dir, trusted=trusted, previous=previous, home=self.home
        )


@pytest.fixture
def layout(tmp_path) -> Layout:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    workspace = repo / "packages" / "app"
    workspace.mkdir(parents=True)
    return Layout(tmp_path, repo, workspace, tmp_path / "home" / ".pi" / "agent", tmp_path / "home")


def test_skill_precedence_across_locations(layout):
    sources = {
        "project-settings": layout.workspace / "extra-skills",
        "project-pi": layout.workspace / ".pi" / "skills",
        "project-agents": layout.workspace / ".agents" / "skills",
        "ancestor-agents": layout.repo / ".agents" / "skills",
        "user-settings": layout.agent_dir / "more-skills",
        "user-pi": layout.agent_dir / "skills",
        "user-agents": layout.home / ".agents" / "skills",
    }
    for label, directory in sources.items():
        write_skill(directory, "shared", label)  # every location defines "shared"
        write_skill(directory, f"only-{label}")
    write_skill(
        layout.root / ".agents" / "skills", "above-git-root"
    )  # beyond the git root: not searched
    write(layout.workspace / ".pi" / "settings.json", json.dumps({"skills": ["../extra-skills"]}))
    write(
        layout.agent_dir / "settings.json",
        json.dumps({"skills": ["more-skills", "npm:pkg", "!pattern"]}),
    )
    snapshot = layout.load()
    names = [skill.name for skill in snapshot.skills]
    labels = list(sources)
    # Within a directory skills come in name order; "shared"
    # is first found in the project settings' path.
    assert names == [f"only-{labels[0]}", "shared"] + [f"only-{label}" for label in labels[1:]]
    shared = next(skill for skill in snapshot.skills if skill.name == "shared")
    assert shared.description == "project-settings" and shared.source == "project"
    assert {skill.name: skill.source for skill in snapshot.skills}["only-user-agents"] == "user"
    collisions = [d for d in snapshot.diagnostics if "collides" in d.message]
    assert len(collisions) == len(sources) - 1


def test_untrusted_workspace_loads_only_user_resources(layout):
    write_skill(layout.workspace / ".pi" / "skills", "project-skill")
    write_skill(layout.workspace / ".agents" / "skills", "agents-skill")
    write_skill(layout.agent_dir / "skills", "user-skill")
    write(layout.workspace / ".pi" / "prompts" / "p.md", "project prompt")
    write(layout.agent_dir / "prompts" / "u.md", "user prompt")
    write(layout.workspace / ".pi" / "SYSTEM.md", "project system")
    write(layout.workspace / ".pi" / "settings.json", json.dumps({"defaultModel": "project"}))
    write(layout.workspace / "AGENTS.md", "context needs no trust")
    snapshot = layout.load(trusted=False)
    assert [skill.name for skill in snapshot.skills] == ["user-skill"]
    assert [template.name for template in snapshot.templates] == ["u"]
    assert snapshot.system_prompt is None
    assert snapshot.settings.settings.default_model is None
    assert [f.content for f in snapshot.context_files] == ["context needs no trust"]
    (trust,) = [d for d in snapshot.diagnostics if "not trusted" in d.message]
    for skipped in (
        ".pi/settings.json",
        ".pi/skills",
        ".pi/prompts",
        ".pi/SYSTEM.md",
        ".agents/skills",
    ):
        assert skipped in trust.message
    trusted = layout.load(trusted=True)
    assert [skill.name for skill in trusted.skills] == [
        "project-skill",
        "agents-skill",
        "user-skill",
    ]
    assert not any("not trusted" in d.message for d in trusted.diagnostics)


def test_templates_project_before_user(layout):
    write(layout.workspace / ".pi" / "prompts" / "fix.md", "project fix")
    write(layout.agent_dir / "prompts" / "fix.md", "user fix")
    write(layout.agent_dir / "prompts" / "other.md", "user other")
    write(layout.agent_dir / "listed" / "listed.md", "listed")
    write(layout.agent_dir / "settings.json", json.dumps({"prompts": ["listed"]}))
    snapshot = layout.load()
    assert [(t.name, t.content) for t in snapshot.templates] == [
        ("fix", "project fix"),
        ("listed", "listed"),
        ("other", "user other"),
    ]
    (collision,) = [d for d in snapshot.diagnostics if "collides" in d.message]
    assert collision.path == str(layout.agent_dir / "prompts" / "fix.md")


def test_missing_settings_skill_path_points_at_its_line(layout):
    settings = write(layout.agent_dir / "settings.json", '{\n  "skills": [\n    "gone"\n  ]\n}')
    snapshot = layout.load()
    (missing,) = [d for d in snapshot.diagnostics if "does not exist" in d.message]
    assert (missing.path, missing.line) == (str(settings), 3)


def test_broken_settings_keep_the_previous_snapshot_value(layout):
    settings = write(layout.agent_dir / "settings.json", json.dumps({"defaultModel": "good"}))
    first = layout.load()
    settings.write_text("{ nope", encoding="utf-8")
    second = layout.load(previous=first)
    assert second.settings.settings.default_model == "good"
    assert any(d.path == str(settings) and d.severity == "error" for d in second.diagnostics)


def test_diff_snapshots(layout):
    write_skill(layout.agent_dir / "skills", "stays")
    changing = write_skill(layout.agent_dir / "skills", "changes")
    leaving = write_skill(layout.agent_dir / "skills", "leaves")
    agents = write(layout.workspace / "AGENTS.md", "v1")
    before = layout.load()
    assert diff_snapshots(before, layout.load()).is_empty
    changing.write_text("---\ndescription: new\n---\nNew body.\n", encoding="utf-8")
    leaving.unlink()
    write_skill(layout.agent_dir / "skills", "arrives")
    agents.write_text("v2", encoding="utf-8")
    write(layout.agent_dir / "settings.json", json.dumps({"defaultModel": "m"}))
    changes = diff_snapshots(before, layout.load())
    assert {(ref.kind, ref.name) for ref in changes.added} == {
        ("skill", "arrives"),
        ("settings", str(layout.agent_dir / "settings.json")),
    }
    assert {(ref.kind, ref.name) for ref in changes.changed} == {
        ("skill", "changes"),
        ("contextFile", str(agents)),
    }
    assert changes.removed == [ResourceChange("skill", "leaves", str(leaving))]
    assert {(ref.kind) for ref in diff_snapshots(None, before).added} == {"skill", "contextFile"}


def test_loading_500_skills_is_fast(layout):
    skills_dir = layout.agent_dir / "skills"
    for number in range(500):
        write(
            skills_dir / f"skill-{number:03d}" / "SKILL.md",
            f"---\nname: skill-{number:03d}\ndescription: |\n  Skill number {number}.\n"
            "  Second line.\nmetadata:\n  owner: team\nallowed-tools: [read, bash]\n---\n\n"
            f"# Skill {number}\n\nSteps...\n",
        )
    start = time.perf_counter()
    snapshot = layout.load()
    elapsed = time.perf_counter() - start
    assert len(snapshot.skills) == 500
    print(f"\nloaded 500 skills (whole snapshot) in {elapsed * 1000:.1f} ms")


def test_a_reload_with_a_cache_parses_only_the_files_that_changed(tmp_path):
    from pi_lsp.resources.files import ParsedFileCache

    workspace, agent_dir = tmp_path / "project", tmp_path / "agent"
    for index in range(5):
        folder = workspace / ".pi" / "skills" / f"skill-{index}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{index}\ndescription: Number {index}.\n---\nBody {index}\n"
        )
    (workspace / ".pi" / "prompts").mkdir()
    (workspace / ".pi" / "prompts" / "review.md").write_text("Review $1\n")
    cache = ParsedFileCache()
    first = load_resources(workspace, agent_dir, trusted=True, home=tmp_path, cache=cache)
    assert cache.parsed == 6 and len(first.skills) == 5
    load_resources(workspace, agent_dir, trusted=True, home=tmp_path, cache=cache)
    assert cache.parsed == 6  # nothing changed, nothing read
    (workspace / ".pi" / "skills" / "skill-2" / "SKILL.md").write_text(
        "---\nname: skill-2\ndescription: Changed.\n---\nNew\n"
    )
    changed = load_resources(workspace, agent_dir, trusted=True, home=tmp_path, cache=cache)
    assert cache.parsed == 7
    assert [skill.description for skill in changed.skills if skill.name == "skill-2"] == [
        "Changed."
    ]
    (workspace / ".pi" / "skills" / "skill-4" / "SKILL.md").unlink()
    after_delete = load_resources(workspace, agent_dir, trusted=True, home=tmp_path, cache=cache)
    assert {skill.name for skill in after_delete.skills} == {
        "skill-0",
        "skill-1",
        "skill-2",
        "skill-3",
    }
    assert cache.parsed == 7 and len(cache._entries) == 5  # the deleted file is forgotten
