"""The permission policy: trust defaults, rules, allow-patterns, writes outside the root, summaries,
and the ``permissions`` setting's parsing and merging."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_lsp.agent.permission_policy import command_allowed, question_for
from pi_lsp.config import load_config
from pi_lsp.resources.permission_settings import (
    DEFAULT_TIMEOUT_SECONDS,
    PermissionSettings,
    ToolRule,
    parse_permissions,
)


def ask(tool, arguments, root, *, trusted=True, rules=None, files=None):
    settings = PermissionSettings(rules or {})
    return question_for(
        tool,
        arguments,
        root=root,
        trusted=trusted,
        settings=settings,
        read_text=lambda path: (files or {}).get(path.name),
    )


def test_a_trusted_workspace_runs_everything_inside_it(tmp_path):
    assert ask("bash", {"command": "rm -rf build"}, tmp_path) is None
    assert ask("write", {"path": "a.py", "content": "x"}, tmp_path) is None
    assert ask("edit", {"path": "a.py", "edits": []}, tmp_path) is None
    assert ask("read", {"path": "a.py"}, tmp_path) is None


def test_an_untrusted_workspace_asks_for_bash_write_and_edit_only(tmp_path):
    question = ask("bash", {"command": "make"}, tmp_path, trusted=False)
    assert question is not None
    assert (question.tool_name, question.subject) == ("bash", "make")
    assert question.reason == "the workspace is not trusted"
    assert ask("write", {"path": "a.py", "content": "x"}, tmp_path, trusted=False) is not None
    assert ask("edit", {"path": "a.py", "edits": []}, tmp_path, trusted=False) is not None
    for tool in ("read", "grep", "find", "ls"):
        assert ask(tool, {"path": ".", "pattern": "x"}, tmp_path, trusted=False) is None


def test_a_rule_overrides_the_trust_default_both_ways(tmp_path):
    assert ask("bash", {"command": "ls"}, tmp_path, rules={"bash": ToolRule(ask=True)})
    allowed = {"bash": ToolRule(ask=False)}
    assert ask("bash", {"command": "ls"}, tmp_path, trusted=False, rules=allowed) is None
    read_asks = {"readOnly": ToolRule(ask=True)}
    question = ask("grep", {"pattern": "TODO", "path": "src"}, tmp_path, rules=read_asks)
    assert question is not None and question.subject == "TODO in src"
    assert question.session_grant == "readOnly:*"


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("git status", True),
        ("git  status", True),
        ("npm test", True),
        ("npm test -- --watch", True),
        ("git status && npm test", True),
        ("git status; rm -rf /", False),
        ("git status | sh", False),
        ("npm test $(rm -rf /)", False),
        ("npm test `rm -rf /`", False),
        ("npm test > /etc/passwd", False),
        ("git push", False),
        ("", False),
    ],
)
def test_bash_patterns_must_cover_every_part_of_a_command(command, allowed):
    assert command_allowed(command, ("git status", "npm test*")) is allowed


def test_an_allowed_command_runs_without_asking_where_others_ask(tmp_path):
    rules = {"bash": ToolRule(ask=True, allow=("git status",))}
    assert ask("bash", {"command": "git status"}, tmp_path, rules=rules) is None
    question = ask("bash", {"command": "git status; curl evil"}, tmp_path, rules=rules)
    assert question is not None and question.session_grant == "bash:git status; curl evil"


def test_path_patterns_let_writes_inside_the_root_through(tmp_path):
    rules = {"write": ToolRule(ask=True, allow=("docs/**",))}
    assert ask("write", {"path": "docs/a/b.md", "content": ""}, tmp_path, rules=rules) is None
    assert ask("write", {"path": "src/b.py", "content": ""}, tmp_path, rules=rules) is not None


def test_writes_outside_the_root_always_ask_even_when_write_is_allowed(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    outside = tmp_path / "elsewhere" / "notes.md"
    rules = {"write": ToolRule(ask=False)}
    question = ask("write", {"path": str(outside), "content": "a\nb\n"}, root, rules=rules)
    assert question is not None
    assert question.outside_workspace and question.reason == "outside the workspace root"
    assert question.subject == str(outside)
    assert question.session_grant == f"write:{outside}"
    assert ask("edit", {"path": "../elsewhere/notes.md", "edits": []}, root) is not None


def test_an_absolute_pattern_allows_a_write_outside_the_root(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    pattern = str(tmp_path / "elsewhere") + "/**"
    rules = {"write": ToolRule(allow=(pattern,))}
    target = str(tmp_path / "elsewhere" / "notes.md")
    assert ask("write", {"path": target, "content": ""}, root, rules=rules) is None
    # A relative pattern never reaches outside the root.
    rules = {"write": ToolRule(allow=("**",))}
    assert ask("write", {"path": target, "content": ""}, root, rules=rules) is not None


def test_a_symlink_out_of_the_root_counts_as_outside(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (tmp_path / "secret").mkdir()
    (root / "link").symlink_to(tmp_path / "secret")
    question = ask("write", {"path": "link/x.txt", "content": ""}, root)
    assert question is not None and question.outside_workspace


def test_summaries_say_how_big_the_change_is(tmp_path):
    new = ask("write", {"path": "a.py", "content": "1\n2\n3\n"}, tmp_path, trusted=False)
    assert new is not None and new.summary == "new file, 3 lines"
    overwrite = ask(
        "write",
        {"path": "a.py", "content": "1\nTWO\n3\n4\n"},
        tmp_path,
        trusted=False,
        files={"a.py": "1\n2\n3\n"},
    )
    assert overwrite is not None and overwrite.summary == "overwrites the file: −1 +2 lines"
    big = tmp_path / "big.log"
    big.write_bytes(b"x" * 6_000_000)
    huge = ask("write", {"path": "big.log", "content": "x\n"}, tmp_path, trusted=False)
    assert huge is not None and huge.summary == "overwrites a file of 6.0 MB with 1 line"
    edits = [{"oldText": "a\nb", "newText": "c"}, {"oldText": "d", "newText": "e\nf\ng"}]
    edit = ask("edit", {"path": "a.py", "edits": edits}, tmp_path, trusted=False)
    assert edit is not None and edit.summary == "2 replacements, −3 +4 lines"
    assert "pi wants to edit:\na.py\n2 replacements" in edit.message


def test_the_setting_parses_each_form_and_reports_bad_parts():
    settings, problems = parse_permissions(
        {
            "bash": {"ask": True, "allow": ["git status", "npm test*"]},
            "write": "ask",
            "edit": {"allow": ["docs/**"]},
            "readOnly": "allow",
            "ls": 3,
            "timeoutSeconds": 30,
        }
    )
    assert settings.rule_for("bash") == ToolRule(True, ("git status", "npm test*"))
    assert settings.rule_for("write") == ToolRule(True)
    assert settings.rule_for("edit") == ToolRule(None, ("docs/**",))
    assert settings.rule_for("grep") == ToolRule(False)
    assert settings.timeout_seconds == 30
    expected = (
        'setting permissions.ls must be "allow", "ask" or '
        '{"ask": true|false, "allow": ["pattern", …]}; using the default'
    )
    assert problems == [expected]
    settings, problems = parse_permissions({"timeoutSeconds": 0})
    assert settings.timeout_seconds == DEFAULT_TIMEOUT_SECONDS and len(problems) == 1


def test_the_editors_keys_win_over_pis_settings_files(tmp_path: Path):
    config = load_config(
        tmp_path,
        {"permissions": {"bash": "allow", "timeoutSeconds": 5}},
        pi_settings={"permissions": {"bash": "ask", "write": "ask"}},
    )
    settings = config.permission_settings()
    assert settings.rule_for("bash") == ToolRule(False)
    assert settings.rule_for("write") == ToolRule(True)
    assert settings.timeout_seconds == 5
    broken = load_config(tmp_path, {"permissions": {"bash": "sometimes"}})
    assert any("permissions.bash" in problem for problem in broken.problems)
