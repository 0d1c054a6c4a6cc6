"""Tricky skill frontmatter read by pi-lsp and by pi 0.84.2's own skill loader (its ``yaml``
package): the same values where pi reads the YAML, an error (a diagnostic on its line, for us)
where pi's parser throws, and the same skills loaded with the same name, description and
``disable-model-invocation``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_lsp.resources.frontmatter import parse_frontmatter
from pi_lsp.resources.skills import load_skill_file

from .harness import REFERENCE_DIR, run_node_script

SCRIPT = REFERENCE_DIR / "frontmatter_reference.mjs"

FRONTMATTER = {
    "unicode-escapes": 'description: "caf\\u00e9 \\U0001F600 \\x41 tab\\there"',
    "multiline-double": 'description: "first line\n  second line\n\n  third"',
    "multiline-single": "description: 'it''s\n  folded over lines'",
    "plain-continued": "description: a plain scalar\n  continued on the next line",
    "anchors": "shared: &text Shared description\ndescription: *text",
    "nested-flow": "description: Flow\nmetadata: {tags: [a, [b, c]], owner: {name: me, n: 1}}",
    "core-tag": "description: !!str 123\nname: core-tag",
    "custom-tag": "description: !thing Described through a custom tag",
    "yes-is-a-string": "description: yes",
    "date-is-a-string": "description: 2024-01-15",
    "merge-key": "base: &b {x: 1}\nmeta:\n  <<: *b\n  y: 2\ndescription: Merge keys stay keys",
    "literal-block": "description: |\n  line one\n  line two",
    "literal-keep": "description: |+\n  kept\n\nname: literal-keep",
    "folded-block": "description: >-\n  folded\n  text\n\n  next",
    "indented-block": "description: |2\n    indented body",
    "disabled": "description: Only by command\ndisable-model-invocation: true",
    "disabled-upper": "description: Upper\ndisable-model-invocation: TRUE",
    "disabled-yes": "description: Yes is a string\ndisable-model-invocation: yes",
    "numbers": (
        "description: Numbers\nhex: 0x1A\noctal: 0o17\nunderscore: 1_000\nexp: 1e3\nnothing: ~"
    ),
    "number-keys": "description: Keys\n1: one\n2.5: two\ntrue: three",
    "comments": "# a comment\ndescription: value # trailing comment\n# another",
    "quoted-name": "name: \"quoted-name\"\ndescription: 'Quoted'",
    "empty-description": "description:\nname: empty-description",
    "lone-scalar": "just a line of text",
    "lone-list": "- one\n- two",
    "duplicate-key": "description: first\ndescription: second",
    "nested-colon": "description: has: colon",
    "tab-indented": "name: tab-indented\n\tdescription: tab",
    "unclosed-flow": "description: [unclosed",
    "unclosed-quote": 'description: "open',
    "undefined-alias": "description: *nowhere",
}


def write_skills(root: Path) -> dict[str, Path]:
    paths = {}
    for folder, frontmatter in FRONTMATTER.items():
        path = root / folder / "SKILL.md"
        path.parent.mkdir(parents=True)
        path.write_text(f"---\n{frontmatter}\n---\n\nThe body of {folder}.\n", encoding="utf-8")
        paths[folder] = path
    crlf = root / "crlf-file" / "SKILL.md"
    crlf.parent.mkdir()
    crlf.write_bytes(b"---\r\nname: crlf-file\r\ndescription: CRLF lines\r\n---\r\nBody\r\n")
    paths["crlf-file"] = crlf
    return paths


def pi_reads(reference_node: Path, skills_dir: Path) -> dict:
    return json.loads(run_node_script(reference_node, SCRIPT, [str(skills_dir)]))


@pytest.fixture(scope="module")
def layout(reference_node: Path, tmp_path_factory) -> tuple[dict[str, Path], dict]:
    root = tmp_path_factory.mktemp("frontmatter") / "skills"
    paths = write_skills(root)
    return paths, pi_reads(reference_node, root)


@pytest.mark.parametrize("folder", [*FRONTMATTER, "crlf-file"])
def test_the_frontmatter_reads_as_pi_reads_it(folder, layout):
    paths, reference = layout
    path = paths[folder]
    pi = reference["files"][str(path)]
    ours = parse_frontmatter(path.read_text(encoding="utf-8"), str(path))
    if "error" in pi:
        assert ours.mapping is None and ours.diagnostic is not None, (
            f"pi refuses this frontmatter ({pi['error']}) but pi-lsp read {ours.mapping!r}"
        )
        assert ours.diagnostic.line >= 2 and ours.diagnostic.severity == "error"
        return
    assert ours.diagnostic is None, f"pi reads {pi['frontmatter']!r}; pi-lsp: {ours.diagnostic}"
    expected = pi["frontmatter"] if isinstance(pi["frontmatter"], dict) else {}
    assert ours.mapping == expected


@pytest.mark.parametrize("folder", [*FRONTMATTER, "crlf-file"])
def test_the_same_skills_load_with_the_same_fields(folder, layout):
    paths, reference = layout
    path = paths[folder]
    pi = reference["skills"].get(str(path))
    skill, _ = load_skill_file(path, "project")
    ours = (
        None
        if skill is None
        else {
            "name": skill.name,
            "description": skill.description,
            "disableModelInvocation": skill.disable_model_invocation,
        }
    )
    assert ours == pi


def test_a_problem_is_reported_on_its_line(layout):
    paths, _ = layout
    duplicate = parse_frontmatter(paths["duplicate-key"].read_text(), "SKILL.md").diagnostic
    assert duplicate is not None and duplicate.line == 3 and "duplicate key" in duplicate.message
    tab = parse_frontmatter(paths["tab-indented"].read_text(), "SKILL.md").diagnostic
    assert tab is not None and tab.line == 3
