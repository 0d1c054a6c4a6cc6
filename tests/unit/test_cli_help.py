"""What ``pi-lsp --help`` and its commands' help tell someone who has only the wheel."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pi_lsp import REPOSITORY_URL
from pi_lsp.cli import main

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def help_text(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_the_repository_url_is_pyprojects():
    urls = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["urls"]
    assert urls["Source"] == REPOSITORY_URL


def test_the_bare_command_says_it_is_the_language_server_on_stdio(capsys):
    text = help_text(capsys)
    assert "With no command, pi-lsp is the language server" in text
    assert "stdin and stdout" in text
    assert f"{REPOSITORY_URL}#readme" in text


def test_session_help_describes_the_command(capsys):
    text = help_text(capsys, "session")
    assert "Read pi's session files" in text
    assert "plan a compaction" in text


def test_acp_help_gives_the_docs_url_not_a_path_a_wheel_lacks(capsys):
    text = help_text(capsys, "acp")
    assert f"{REPOSITORY_URL}/blob/main/docs/acp.md" in text
    assert "See docs/acp.md" not in text
    assert "--options" in text
