"""Session files open only inside the session directory or an allowed one, symlinks followed."""

from __future__ import annotations

import pytest

from pi_lsp.errors import InvalidParamsError
from pi_lsp.session.confinement import is_inside, require_inside


def test_paths_resolve_before_they_are_compared(tmp_path):
    sessions = tmp_path / "sessions"
    (sessions / "nested").mkdir(parents=True)
    outside = tmp_path / "secret.jsonl"
    outside.write_text("{}\n")
    (sessions / "link.jsonl").symlink_to(outside)
    assert is_inside(sessions / "a.jsonl", [sessions])
    assert is_inside(sessions / "nested" / "b.jsonl", [sessions])
    assert not is_inside(sessions / ".." / "secret.jsonl", [sessions])
    assert not is_inside(outside, [sessions])
    assert not is_inside(sessions / "link.jsonl", [sessions])
    assert not is_inside(tmp_path / "sessions-other" / "a.jsonl", [sessions])  # not a prefix match


def test_a_session_directory_that_is_a_symlink_still_contains_its_files(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    assert is_inside(tmp_path / "alias" / "a.jsonl", [tmp_path / "alias"])
    assert is_inside(real / "a.jsonl", [tmp_path / "alias"])


def test_an_allowed_directory_admits_its_files_and_the_refusal_names_the_setting(tmp_path):
    sessions, pi_sessions = tmp_path / "sessions", tmp_path / "pi"
    require_inside(pi_sessions / "x.jsonl", sessions, [pi_sessions])
    with pytest.raises(
        InvalidParamsError, match=r"outside the session directory.*allowedSessionDirs"
    ):
        require_inside(pi_sessions / "x.jsonl", sessions)
