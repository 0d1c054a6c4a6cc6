"""Ignore files in resource folders and the include/exclude patterns of settings arrays."""

from pathlib import Path

from pi_lsp.resources.ignore_rules import IgnoreRules
from pi_lsp.resources.patterns import is_pattern, patterns_of
from pi_lsp.resources.skills import skill_files


def test_ignore_rules_are_prefixed_with_the_directory_they_come_from(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / ".gitignore").write_text("# comment\n/build/\n*.tmp\n!keep.tmp\n")
    rules = IgnoreRules(tmp_path)
    rules.enter(tmp_path)
    rules.enter(tmp_path / "a")
    assert rules.ignores(tmp_path / "a" / "build", is_directory=True)
    assert rules.ignores(tmp_path / "a" / "x.tmp", is_directory=False)
    assert not rules.ignores(tmp_path / "a" / "keep.tmp", is_directory=False)
    assert not rules.ignores(tmp_path / "build", is_directory=True)  # the rule belongs to a/


def test_a_skill_scan_skips_ignored_folders_and_searches_below_an_ignored_skill_file(tmp_path):
    for folder in ("one", "two", "three/inner"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "SKILL.md").write_text("---\ndescription: x\n---\n")
    (tmp_path / ".gitignore").write_text("two/\n")
    (tmp_path / "three" / ".ignore").write_text("SKILL.md\n")
    found = skill_files(tmp_path)
    assert found == [tmp_path / "one" / "SKILL.md", tmp_path / "three" / "inner" / "SKILL.md"]


def test_override_patterns_exclude_by_glob_and_force_by_exact_path(tmp_path):
    entries = ["!d*", "+skills/delta", "-skills/dusk", "inc*", "plain/path"]
    assert [entry for entry in entries if is_pattern(entry)] == entries[:4]
    auto = patterns_of(entries, tmp_path, heed_includes=False)
    assert not auto.enables(tmp_path / "skills" / "dawn" / "SKILL.md")
    assert auto.enables(tmp_path / "skills" / "delta" / "SKILL.md")
    assert not auto.enables(tmp_path / "skills" / "dusk" / "SKILL.md")
    assert auto.enables(
        tmp_path / "skills" / "other" / "SKILL.md"
    )  # includes limit only named paths
    named = patterns_of(entries, tmp_path, heed_includes=True)
    assert not named.enables(tmp_path / "skills" / "other" / "SKILL.md")
    assert named.enables(tmp_path / "skills" / "include-me" / "SKILL.md")
    assert patterns_of([], Path("/"), heed_includes=True).enables(Path("/anything.md"))
