"""Skill discovery and validation (pi's skills.test
fixtures), the prompt index and /skill: expansion."""

from __future__ import annotations

from pathlib import Path

from pi_lsp.resources.skills import (
    Skill,
    SkillLocation,
    expand_skill_command,
    format_skills_for_prompt,
    load_skill_file,
    load_skills,
    skill_files,
)


def write_skill(
    root: Path, folder: str, frontmatter: str | None, body: str = "Do the thing."
) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = body if frontmatter is None else f"---\n{frontmatter}\n---\n\n{body}\n"
    path.write_text(text, encoding="utf-8")
    return path


def load_one(root: Path, folder: str, frontmatter: str | None, body: str = "Do the thing."):
    return load_skill_file(write_skill(root, folder, frontmatter, body), "project")


def messages(diagnostics) -> list[str]:
    return [diagnostic.message for diagnostic in diagnostics]


def test_valid_skill(tmp_path):
    skill, diagnostics = load_one(
        tmp_path, "valid-skill", "name: valid-skill\ndescription: A valid skill."
    )
    assert diagnostics == []
    assert skill == Skill(
        "valid-skill",
        "A valid skill.",
        str(tmp_path / "valid-skill" / "SKILL.md"),
        str(tmp_path / "valid-skill"),
        False,
        "project",
        "Do the thing.",
    )


def test_name_mismatch_warns_but_loads(tmp_path):
    skill, diagnostics = load_one(tmp_path, "name-mismatch", "name: other-name\ndescription: x")
    assert skill is not None and skill.name == "other-name"
    assert messages(diagnostics) == ['name "other-name" does not match its folder "name-mismatch"']
    assert diagnostics[0].line == 2 and diagnostics[0].severity == "warning"


def test_invalid_characters_warn(tmp_path):
    skill, diagnostics = load_one(tmp_path, "Invalid_Name", "name: Invalid_Name\ndescription: x")
    assert skill is not None
    assert any("invalid characters" in message for message in messages(diagnostics))


def test_long_name_warns(tmp_path):
    name = "a" * 65
    skill, diagnostics = load_one(tmp_path, name, f"name: {name}\ndescription: x")
    assert skill is not None
    assert messages(diagnostics) == ["name exceeds 64 characters (65)"]


def test_consecutive_and_edge_hyphens_warn(tmp_path):
    _, diagnostics = load_one(tmp_path, "bad--name", "name: bad--name\ndescription: x")
    assert messages(diagnostics) == ["name must not contain consecutive hyphens"]
    _, diagnostics = load_one(tmp_path, "-edge-", "name: -edge-\ndescription: x")
    assert "name must not start or end with a hyphen" in messages(diagnostics)


def test_missing_description_skips(tmp_path):
    skill, diagnostics = load_one(tmp_path, "missing-description", "name: missing-description")
    assert skill is None
    assert messages(diagnostics) == ["description is required; the skill is not loaded"]


def test_long_description_warns(tmp_path):
    skill, diagnostics = load_one(tmp_path, "long-description", "description: " + "x" * 1025)
    assert skill is not None
    assert messages(diagnostics) == ["description exceeds 1024 characters (1025)"]


def test_invalid_yaml_skips_with_its_line(tmp_path):
    skill, diagnostics = load_one(
        tmp_path, "invalid-yaml", "name: invalid-yaml\ndescription: [unclosed"
    )
    assert skill is None
    assert len(diagnostics) == 1 and diagnostics[0].line == 3


def test_no_frontmatter_skips(tmp_path):
    skill, diagnostics = load_one(tmp_path, "no-frontmatter", None, "# Just markdown")
    assert skill is None
    assert messages(diagnostics) == ["description is required; the skill is not loaded"]


def test_unknown_fields_are_ignored(tmp_path):
    skill, diagnostics = load_one(
        tmp_path,
        "unknown-field",
        "name: unknown-field\ndescription: x\nlicense: MIT\nfoo: bar\nmetadata:\n  a: 1",
    )
    assert skill is not None and diagnostics == []


def test_multiline_description(tmp_path):
    skill, _ = load_one(
        tmp_path,
        "multiline-description",
        "name: multiline-description\ndescription: |\n  line one\n  line two",
    )
    assert skill is not None and skill.description == "line one\nline two\n"


def test_name_defaults_to_folder(tmp_path):
    skill, diagnostics = load_one(tmp_path, "from-folder", "description: x")
    assert skill is not None and skill.name == "from-folder" and diagnostics == []


def test_disable_model_invocation(tmp_path):
    skill, _ = load_one(
        tmp_path, "disable-model-invocation", "description: x\ndisable-model-invocation: true"
    )
    assert skill is not None and skill.disable_model_invocation
    skill, _ = load_one(tmp_path, "enabled", "description: x")
    assert skill is not None and not skill.disable_model_invocation
    skill, diagnostics = load_one(
        tmp_path, "wrong-type", "description: x\ndisable-model-invocation: 'yes'"
    )
    assert skill is not None and not skill.disable_model_invocation
    assert diagnostics[0].line == 3


def test_nested_skills_are_found_and_root_skill_is_preferred(tmp_path):
    write_skill(tmp_path, "nested/child-skill", "description: child")
    write_skill(tmp_path, "root-skill-preferred", "description: root")
    write_skill(tmp_path, "root-skill-preferred/nested-child", "description: hidden")
    write_skill(tmp_path, ".hidden/secret", "description: hidden")
    write_skill(tmp_path, "node_modules/dep", "description: hidden")
    found = skill_files(tmp_path)
    assert found == [
        tmp_path / "nested/child-skill/SKILL.md",
        tmp_path / "root-skill-preferred/SKILL.md",
    ]


def test_loose_markdown_only_at_the_top_of_pi_style_directories(tmp_path):
    (tmp_path / "loose.md").write_text("---\ndescription: loose\n---\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deeper.md").write_text("---\ndescription: deeper\n---\n")
    assert skill_files(tmp_path, "pi") == [tmp_path / "loose.md"]
    assert skill_files(tmp_path, "agents") == []


def test_collisions_keep_the_first_location(tmp_path):
    first = write_skill(tmp_path / "first", "calendar", "description: first")
    second = write_skill(tmp_path / "second", "calendar", "description: second")
    loaded = load_skills(
        [SkillLocation(tmp_path / "first", "project"), SkillLocation(tmp_path / "second", "user")]
    )
    assert [skill.file_path for skill in loaded.skills] == [str(first)]
    assert len(loaded.diagnostics) == 1
    assert loaded.diagnostics[0].path == str(second) and "calendar" in loaded.diagnostics[0].message


def test_same_file_twice_is_deduplicated_silently(tmp_path):
    write_skill(tmp_path / "skills", "one", "description: x")
    (tmp_path / "link").symlink_to(tmp_path / "skills")
    loaded = load_skills(
        [SkillLocation(tmp_path / "skills", "project"), SkillLocation(tmp_path / "link", "user")]
    )
    assert len(loaded.skills) == 1 and loaded.diagnostics == ()


def test_missing_explicit_path_is_reported_where_declared(tmp_path):
    location = SkillLocation(
        tmp_path / "nope", "user", explicit=True, declared_in="settings.json", declared_line=4
    )
    loaded = load_skills([location])
    assert loaded.skills == ()
    assert (loaded.diagnostics[0].path, loaded.diagnostics[0].line) == ("settings.json", 4)


def test_explicit_markdown_file(tmp_path):
    path = tmp_path / "single.md"
    path.write_text("---\nname: single\ndescription: one file\n---\nbody")
    loaded = load_skills([SkillLocation(path, "user", explicit=True)])
    assert [skill.name for skill in loaded.skills] == ["single"]


def skill(name: str, description: str = "d", disabled: bool = False) -> Skill:
    return Skill(
        name,
        description,
        f"/skills/{name}/SKILL.md",
        f"/skills/{name}",
        disabled,
        "user",
        "Body text.",
    )


def test_format_skills_for_prompt():
    assert format_skills_for_prompt([]) == ""
    assert format_skills_for_prompt([skill("hidden", disabled=True)]) == ""
    text = format_skills_for_prompt(
        [skill("a", "Use <this> & \"that\" 'x'"), skill("b"), skill("c", disabled=True)]
    )
    assert "read tool" in text
    assert text.endswith(
        "<available_skills>\n"
        "  <skill>\n"
        "    <name>a</name>\n"
        "    <description>Use &lt;this&gt; &amp; &quot;that&quot; &apos;x&apos;</description>\n"
        "    <location>/skills/a/SKILL.md</location>\n"
        "  </skill>\n"
        "  <skill>\n"
        "    <name>b</name>\n"
        "    <description>d</description>\n"
        "    <location>/skills/b/SKILL.md</location>\n"
        "  </skill>\n"
        "</available_skills>"
    )


def test_expand_skill_command():
    skills = [skill("demo")]
    block = (
        '<skill name="demo" location="/skills/demo/SKILL.md">\nReferences '
        "are relative to /skills/demo.\n\nBody text.\n</skill>"
    )
    assert expand_skill_command("/skill:demo", skills) == block
    assert expand_skill_command("/skill:demo  fix the bug ", skills) == block + "\n\nfix the bug"
    assert expand_skill_command("/skill:unknown args", skills) == "/skill:unknown args"
    assert expand_skill_command("please /skill:demo", skills) == "please /skill:demo"
