"""The server's start-up: the command line builds no subcommand for a plain server start, and
garbage collection is paused while the modules load and resumed afterwards."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from pi_lsp import startup
from pi_lsp.cli import _may_name_a_command, build_parser


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], False),
        (["--log-file", "demo", "-v"], False),
        (["--tcp", "127.0.0.1:4000", "--token-file", "session"], False),
        (["--log-file=x"], False),
        (["session", "list"], True),
        (["-v", "acp"], True),
        (["--help"], True),
        (["no-such-command"], True),  # the full parser names the commands in its error
    ],
)
def test_only_a_word_that_may_be_a_command_builds_the_commands(argv, expected):
    assert _may_name_a_command(argv) is expected


def test_the_lean_parser_takes_every_server_option():
    arguments = build_parser(with_commands=False).parse_args(
        ["--log-file", "log", "-v", "--tcp", "127.0.0.1:1", "--token-file", "t"]
    )
    assert (arguments.log_file, arguments.verbose, arguments.tcp) == ("log", True, "127.0.0.1:1")


def test_an_unknown_command_is_still_named_as_such():
    result = subprocess.run(
        [sys.executable, "-m", "pi_lsp", "no-such-command"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "invalid choice: 'no-such-command'" in result.stderr


_SERVER_IMPORTS = """
import sys
from pi_lsp import cli
cli.run_server = lambda arguments: print(sorted(
    name for name in sys.modules
    if name.split(".")[:2] in (["pi_lsp", "demo"], ["pi_lsp", "eval_cli"], ["pi_lsp", "acp"])
))
cli.main(["--log-file", sys.argv[1]])
"""


def test_a_server_start_imports_no_subcommand(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", _SERVER_IMPORTS, str(tmp_path / "log")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "[]"


def test_collection_pauses_and_resumes_once():
    assert gc.isenabled()
    try:
        startup.pause_collection()
        assert not gc.isenabled() and startup.collection_paused()
        startup.resume_collection()
        assert gc.isenabled() and not startup.collection_paused()
        startup.resume_collection()  # a second resume changes nothing
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()


def test_resume_leaves_a_collector_it_did_not_pause_alone():
    gc.disable()
    try:
        startup.pause_collection()  # already off: not ours to turn back on
        startup.resume_collection()
        assert not gc.isenabled()
    finally:
        gc.enable()
