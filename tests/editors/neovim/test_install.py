""":PiInstall, as a new user runs it: on a PATH without pi-lsp, it installs the server of this
repository into a virtualenv under stdpath("data")/pi-lsp, setup()'s default cmd then uses it,
and ``:Pi hello`` streams the scripted answer. Again it does nothing; ``:PiInstall!`` starts
over (and a failing pip is reported); without Python 3.11 or without venv it says what is
missing. pip installs from the wheelhouse of this CI run (``tests/wheelhouse.py``), offline,
so the test is quick.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pi_lsp import __version__
from tests.editors.neovim.conftest import running_editor
from tests.editors.neovim.test_health import health_report
from tests.wheelhouse import (
    BUILD_TIMEOUT_S,
    building_from_the_checkout,
    offline_pip_environment,
    wheelhouse_for,
)

pytestmark = pytest.mark.timeout(BUILD_TIMEOUT_S)

BASE_PYTHON = Path(sys.base_prefix) / "bin" / "python3"


def path_without_pi_lsp(bin_directory: Path) -> str:
    """``bin_directory`` and the system's folders, leaving out every one that has a pi-lsp."""
    folders = [str(bin_directory), "/usr/local/bin", "/usr/bin", "/bin"]
    return ":".join(folder for folder in folders if not (Path(folder) / "pi-lsp").exists())


def infos(editor) -> list[str]:
    return [note["message"] for note in editor.lua("return _G.pi_test.notes")]


@pytest.fixture(scope="module")
def installed(tmp_path_factory, scripted_model):
    """A Neovim that ran :PiInstall on a PATH without pi-lsp, with the install's messages."""
    base = tmp_path_factory.mktemp("pi-install")
    bin_directory = base / "bin"
    bin_directory.mkdir()
    (bin_directory / "python3").symlink_to(BASE_PYTHON.resolve())
    with (
        building_from_the_checkout(),  # pip builds pi-lsp in the checkout
        running_editor(base, {"PATH": path_without_pi_lsp(bin_directory)}) as editor,
    ):
        assert editor.lua("return vim.fn.exepath('pi-lsp')") == ""
        python = editor.lua("return (require('pi.install').find_python())")
        assert python, "no Python 3.11+ on the test's PATH"
        # Byte-compiling every module at install time is for users; the test's server compiles
        # only what it imports.
        pip = offline_pip_environment(wheelhouse_for(python), base={"PIP_NO_COMPILE": "1"})
        editor.lua("for key, value in pairs(...) do vim.env[key] = value end", pip)
        editor.command("PiInstall")
        yield editor, scripted_model


def test_pi_install_installs_the_server_and_pi_streams_the_answer(installed):
    editor, scripted_model = installed
    messages = infos(editor)
    assert any("[1/3] creating a virtualenv" in message for message in messages), messages
    assert any("[2/3] installing pi-lsp and its dependencies" in message for message in messages)
    assert any(f"pi-lsp {__version__} installed in " in message for message in messages), messages
    venv = Path(editor.lua("return require('pi.install').paths().venv"))
    assert venv.is_relative_to(editor.home / "data"), "the virtualenv is not under stdpath('data')"
    cmd, source = editor.lua("return { require('pi.config').server_cmd() }")
    assert cmd == [str(venv / "bin" / "pi-lsp")] and source == ":PiInstall's virtualenv"

    assert editor.lua(
        "return require('pi').setup({ settings = ... })",
        {"model": "openai/scripted", "apiBase": scripted_model.base_url, "autoName": False},
    )
    scripted_model.enqueue(
        {"kind": "text", "text": "Hello from the installed server.", "chunks": 4}
    )
    editor.command("Pi hello")
    editor.wait_for("agent_end")
    lines = editor.chat_lines(containing="Hello from the installed server.")
    assert "hello" in lines and "Hello from the installed server." in lines
    assert editor.request("pi/state")["model"]["model"] == "openai/scripted"
    assert editor.lua("return require('pi.client').get().config.cmd[1]") == cmd[0]


def test_checkhealth_names_the_installed_server_and_its_version(installed):
    editor, _ = installed
    report = health_report(editor)
    assert "OK server command found: " in report and "(:PiInstall's virtualenv)" in report, report
    assert f"OK version: pi-lsp {__version__}, the plugin's version" in report, report


def test_pi_install_again_changes_nothing(installed):
    editor, _ = installed
    stamp = Path(editor.lua("return require('pi.install').paths().stamp"))
    written = stamp.stat().st_mtime_ns
    editor.lua("_G.pi_test.notes = {}")
    editor.command("PiInstall")
    venv = editor.lua("return require('pi.install').paths().venv")
    assert infos(editor) == [
        f"pi: pi-lsp {__version__} is already installed in {venv} (:PiInstall! reinstalls it)"
    ]
    assert stamp.stat().st_mtime_ns == written


def test_pi_install_bang_starts_over_and_reports_a_failed_pip(installed, tmp_path):
    """:PiInstall! throws the virtualenv away and installs again; here pip finds no wheels (an
    empty wheelhouse), which must end in an error with pip's words and no stamp left behind."""
    editor, _ = installed
    editor.lua("require('pi.client').stop(); _G.pi_test.notes = {}")
    editor.lua("vim.env.PIP_FIND_LINKS = ...", str(tmp_path))
    paths = editor.lua("return require('pi.install').paths()")
    leftover = Path(paths["venv"]) / "left-over-from-before"
    leftover.write_text("")
    editor.lua("pcall(vim.cmd, 'PiInstall!')")
    messages = infos(editor)
    assert any("[1/3] creating a virtualenv" in message for message in messages), messages
    assert not leftover.exists(), ":PiInstall! did not start from a fresh virtualenv"
    failure = messages[-1]
    assert failure.startswith("pi: :PiInstall failed: ") and "pip install" in failure, failure
    assert "No matching distribution" in failure or "Could not find" in failure, failure
    assert not Path(paths["stamp"]).exists(), "a failed install left a stamp: :PiInstall would skip"
    assert editor.lua("return (require('pi.config').server_cmd())") == ["pi-lsp"]


def fake_python(directory: Path, version: str, has_venv: bool) -> None:
    """A `python3` that reports `version` and, when asked, lacks venv/ensurepip as Debian's does."""
    directory.mkdir()
    script = directory / "python3"
    ensurepip = "exit 0" if has_venv else 'echo "No module named ensurepip" >&2; exit 1'
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        f"  *version_info*) echo {version} ;;\n"
        f"  *ensurepip*) {ensurepip} ;;\n"
        "  *) exit 1 ;;\n"
        "esac\n"
    )
    script.chmod(0o755)


@pytest.mark.parametrize(
    ("version", "has_venv", "message"),
    [
        ("3.9.2", True, ":PiInstall needs Python 3.11 or newer (found: {bin}/python3 is 3.9.2)"),
        ("3.12.1", False, ":PiInstall: {bin}/python3 cannot create a virtualenv"),
    ],
)
def test_pi_install_says_what_is_missing(tmp_path, version, has_venv, message):
    bin_directory = tmp_path / "bin"
    fake_python(bin_directory, version, has_venv)
    with running_editor(tmp_path, {"PATH": str(bin_directory)}) as editor:
        editor.lua("pcall(vim.cmd.PiInstall)")  # the error message fails the command, as it should
        [note] = editor.lua("return _G.pi_test.notes")
        assert note["level"] == editor.lua("return vim.log.levels.ERROR")
        assert note["message"].startswith("pi: " + message.format(bin=bin_directory)), note
        if not has_venv:
            assert "sudo apt install python3-venv" in note["message"]
        assert not Path(editor.lua("return require('pi.install').paths().venv")).exists()
