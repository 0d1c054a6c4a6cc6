"""Prompt templates: loading, argument parsing and
substitution (pi 0.84.2's prompt-templates rules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_lsp.resources.templates import (
    PromptTemplate,
    TemplateLocation,
    expand_template,
    load_templates,
    parse_command_args,
    substitute_args,
)


@pytest.mark.parametrize(
    ("content", "args", "expected"),
    [
        ("$1 and $2", ["a", "b"], "a and b"),
        ("$ARGUMENTS", ["a", "b c"], "a b c"),
        ("$@", ["a", "b c"], "a b c"),
        ("[$3]", ["a"], "[]"),
        ("[$0]", ["a"], "[]"),
        ("$1", ["$2", "x"], "$2"),  # values are not substituted again
        ("$1 $ARGUMENTS", ["$@", "y"], "$@ $@ y"),
        ("${@:2}", ["a", "b", "c"], "b c"),
        ("${@:2:1}", ["a", "b", "c"], "b"),
        ("${@:0}", ["a", "b"], "a b"),
        ("${@:1:0}", ["a", "b"], ""),
        ("${@:9}", ["a"], ""),
        ("${1:-none} ${2:-none}", ["a"], "a none"),
        ("${@:-empty}|${ARGUMENTS:-empty}", [], "empty|empty"),
        ("héllo $1 ✓", ["wörld"], "héllo wörld ✓"),
        ("$10", [str(n) for n in range(1, 11)], "10"),
        ("cost: $5.00", [], "cost: .00"),
    ],
)
def test_substitute_args(content, args, expected):
    assert substitute_args(content, args) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a b  c", ["a", "b", "c"]),
        ("a\tb\nc", ["a", "b", "c"]),
        ("\"a b\" 'c d'", ["a b", "c d"]),
        ('x"y z"w', ["xy zw"]),  # a quote may open mid-word
        ('a "" b', ["a", "b"]),  # empty quoted arguments vanish
        ('say "a\\"b"', ["say", "a\\b"]),  # no escapes inside quotes
        ('"unclosed quote', ["unclosed quote"]),
        ("", []),
    ],
)
def test_parse_command_args(text, expected):
    assert parse_command_args(text) == expected


def template(name: str, content: str) -> PromptTemplate:
    return PromptTemplate(name, "", content, f"/prompts/{name}.md", "user")


def test_expand_template():
    templates = [template("review", "Review $1 focusing on ${@:2}")]
    assert expand_template('/review src/app.py "error handling" tests', templates) == (
        "Review src/app.py focusing on error handling tests"
    )
    assert expand_template("/review", templates) == "Review  focusing on "
    assert expand_template("/other x", templates) == "/other x"
    assert expand_template("review x", templates) == "review x"
    assert (
        expand_template("/review\nmultiline args", templates) == "Review multiline focusing on args"
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_load_templates_descriptions_and_bodies(tmp_path):
    write(
        tmp_path / "p" / "with-frontmatter.md",
        "---\ndescription: Explicit\nargument-hint: <file>\n---\n\nBody $1\n",
    )
    write(tmp_path / "p" / "first-line.md", "\n\n  " + "x" * 70 + "\nrest")
    write(tmp_path / "p" / "short.md", "Short line\n")
    write(tmp_path / "p" / "nested" / "ignored.md", "not a direct child")
    write(tmp_path / "p" / "notes.txt", "not markdown")
    loaded = load_templates([TemplateLocation(tmp_path / "p", "user")])
    by_name = {t.name: t for t in loaded.templates}
    assert sorted(by_name) == ["first-line", "short", "with-frontmatter"]
    assert by_name["with-frontmatter"].description == "Explicit"
    assert by_name["with-frontmatter"].argument_hint == "<file>"
    assert by_name["with-frontmatter"].content == "Body $1"
    assert by_name["first-line"].description == ("  " + "x" * 70)[:60] + "..."
    assert by_name["short"].description == "Short line"
    assert by_name["short"].content == "Short line\n"  # no frontmatter: untrimmed
    assert loaded.diagnostics == ()


def test_template_collisions_keep_the_first(tmp_path):
    project = write(tmp_path / "project" / "fix.md", "project")
    user = write(tmp_path / "user" / "fix.md", "user")
    loaded = load_templates(
        [TemplateLocation(project.parent, "project"), TemplateLocation(user.parent, "user")]
    )
    assert [t.file_path for t in loaded.templates] == [str(project)]
    assert [d.path for d in loaded.diagnostics] == [str(user)]


def test_unparseable_template_is_skipped_with_a_diagnostic(tmp_path):
    write(tmp_path / "p" / "broken.md", "---\ndescription: [oops\n---\nbody")
    loaded = load_templates([TemplateLocation(tmp_path / "p", "user")])
    assert loaded.templates == ()
    assert loaded.diagnostics[0].line == 2
