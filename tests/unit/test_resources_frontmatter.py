"""Frontmatter splitting and YAML 1.2 as pi's ``yaml`` package reads it (pi's frontmatter.test
cases, the YAML a hand-written subset once refused, and line numbers)."""

from __future__ import annotations

import pytest

from pi_lsp.resources.frontmatter import parse_frontmatter
from pi_lsp.resources.yaml_reader import CParser, YamlProblem, read_yaml_mapping


def test_keys_and_body_are_split():
    parsed = parse_frontmatter("---\nname: demo\ndescription: Does things\n---\n\nThe body.\n")
    assert parsed.mapping == {"name": "demo", "description": "Does things"}
    assert parsed.body == "The body."
    assert parsed.diagnostic is None
    assert parsed.key_lines == {"name": 2, "description": 3}


def test_crlf_and_bom_are_normalized():
    parsed = parse_frontmatter("\ufeff---\r\nname: demo\r\n---\r\nbody\r\nmore\r\n")
    assert parsed.mapping == {"name": "demo"}
    assert parsed.body == "body\nmore"


@pytest.mark.parametrize("content", ["no frontmatter\nhere", "---\nname: x\nnever closed"])
def test_missing_or_unterminated_frontmatter_keeps_the_whole_content(content):
    parsed = parse_frontmatter(content)
    assert parsed.mapping is None
    assert parsed.body == content
    assert parsed.diagnostic is None


def test_empty_frontmatter_is_an_empty_mapping():
    parsed = parse_frontmatter("---\n---\nbody")
    assert parsed.mapping == {}
    assert parsed.body == "body"


def test_literal_and_folded_block_scalars():
    content = (
        "---\nliteral: |\n  one\n  two\n"
        "folded: >\n  one\n  two\n\n  three\n"
        "stripped: |-\n  x\n---\n"
    )
    mapping = parse_frontmatter(content).mapping
    assert mapping == {"literal": "one\ntwo\n", "folded": "one two\nthree\n", "stripped": "x"}


def test_scalars_are_typed_like_yaml():
    content = (
        "---\na: true\nb: False\nc: 12\nd: 1.5\ne: null\n"
        'f: \'12\'\ng: "say \\"hi\\""\nh: it\'s # comment\n---\n'
    )
    assert parse_frontmatter(content).mapping == {
        "a": True,
        "b": False,
        "c": 12,
        "d": 1.5,
        "e": None,
        "f": "12",
        "g": 'say "hi"',
        "h": "it's",
    }


def test_lists_nested_mappings_and_plain_continuations():
    content = (
        "---\ndescription: first line\n  second line\nmetadata:\n  owner: me\n  tags: [a, 'b c']\n"
        "allowed-tools:\n  - read\n  - bash\nitems:\n- name: x\n  size: 2\n---\n"
    )
    assert parse_frontmatter(content).mapping == {
        "description": "first line second line",
        "metadata": {"owner": "me", "tags": ["a", "b c"]},
        "allowed-tools": ["read", "bash"],
        "items": [{"name": "x", "size": 2}],
    }


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ("---\nname: ok\ndescription: [unclosed\n---\n", 3),
        ("---\nname: ok\ndescription: has: colon\n---\n", 3),
        ("---\nname: a\nname: b\n---\n", 3),
        ("---\nname: ok\njust some words\n---\n", 3),
        ('---\nname: "open\n---\n', 2),
        ("---\nname: ok\n\tdescription: tab\n---\n", 3),
    ],
)
def test_invalid_yaml_is_a_diagnostic_on_its_line(content, line):
    parsed = parse_frontmatter(content, "skill/SKILL.md")
    assert parsed.mapping is None
    assert parsed.diagnostic is not None
    assert (parsed.diagnostic.path, parsed.diagnostic.line, parsed.diagnostic.severity) == (
        "skill/SKILL.md",
        line,
        "error",
    )


def test_full_yaml_escapes_multiline_quotes_anchors_flow_collections_and_tags():
    content = (
        "---\ndescription: \"caf\\u00e9\n  continued\"\nquote: 'it''s'\n"
        "shared: &text Shared\nalias: *text\nflow: {tags: [a, [b, c]]}\n"
        "tagged: !!str 123\ncustom: !thing value\n---\n"
    )
    assert parse_frontmatter(content).mapping == {
        "description": "café continued",
        "quote": "it's",
        "shared": "Shared",
        "alias": "Shared",
        "flow": {"tags": ["a", ["b", "c"]]},
        "tagged": "123",
        "custom": "value",
    }


def test_the_core_schema_leaves_yes_dates_and_merge_keys_alone():
    content = "---\na: yes\nb: 2024-01-15\nc: 1_000\nbase: &b {x: 1}\nd:\n  <<: *b\n1: one\n---\n"
    assert parse_frontmatter(content).mapping == {
        "a": "yes",
        "b": "2024-01-15",
        "c": "1_000",
        "base": {"x": 1},
        "d": {"<<": {"x": 1}},
        "1": "one",
    }


def test_a_frontmatter_that_is_not_a_mapping_has_no_keys():
    assert parse_frontmatter("---\njust a line\n---\nbody").mapping == {}
    assert parse_frontmatter("---\n- a\n---\nbody").mapping == {}


def test_strip_frontmatter():
    assert parse_frontmatter("---\na: 1\n---\n  body  \n").body == "body"


TRICKY = [
    'description: "caf\\u00e9 \\U0001F600 \\x41 tab\\there"',
    'description: "first line\n  second line\n\n  third"',
    "description: 'it''s\n  folded over lines'",
    "shared: &text Shared\ndescription: *text",
    "metadata: {tags: [a, [b, c]], owner: {name: me, n: 1}}",
    "a: !!str 123\nb: !thing value\nc: !thing [1]",
    "a: yes\nb: 2024-01-15\nc: 1_000\nd: 0x1A\ne: 0o17\nf: 1e3\ng: ~\nh: TRUE",
    "base: &b {x: 1}\nmeta:\n  <<: *b\n  y: 2",
    "a: |\n  one\n  two\nb: |+\n  kept\n\nc: >-\n  folded\n  text\nd: |2\n    indented",
    "1: one\n2.5: two\ntrue: three",
]
BROKEN = [
    "a: 1\na: 2",
    "a: has: colon",
    "a: ok\n\tb: tab",
    "a: [unclosed",
    'a: "open',
    "a: *nowhere",
]


@pytest.mark.parametrize("text", TRICKY)
def test_the_c_and_the_python_parser_read_the_same(text):
    assert CParser is not None, "ruamel.yaml.clib (libyaml) is a dependency"
    assert read_yaml_mapping(text) == read_yaml_mapping(text, pure=True)


@pytest.mark.parametrize("text", BROKEN)
def test_the_c_and_the_python_parser_refuse_the_same(text):
    for pure in (False, True):
        with pytest.raises(YamlProblem):
            read_yaml_mapping(text, pure=pure)
