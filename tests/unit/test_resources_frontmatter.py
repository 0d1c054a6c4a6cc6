"""Frontmatter splitting and the YAML subset (pi's frontmatter.test cases plus line numbers)."""

from __future__ import annotations

import pytest

from pi_lsp.resources.frontmatter import parse_frontmatter, strip_frontmatter


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


def test_strip_frontmatter():
    assert strip_frontmatter("---\na: 1\n---\n  body  \n") == "body"
