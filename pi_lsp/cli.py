"""The ``pi-lsp`` command: argument parsing and dispatch to the tools it offers.

``pi-lsp session …`` inspects and plans on session files (see ``session_cli``). Every command prints
its result on stdout and, for bad input, exits non-zero with a one-line error on stderr.
"""

from __future__ import annotations

import argparse
import sys

from pi_lsp import __version__
from pi_lsp.errors import PiError


def build_parser() -> argparse.ArgumentParser:
    from pi_lsp import session_cli

    parser = argparse.ArgumentParser(
        prog="pi-lsp",
        description="pi's session tree, compaction and branch summaries for LSP editors.",
    )
    parser.add_argument("--version", action="version", version=f"pi-lsp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    session_cli.add_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    arguments = parser.parse_args(argv)
    try:
        return arguments.handler(arguments)
    except PiError as error:
        print(f"pi-lsp: error: {error.message}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    except OSError as error:
        print(f"pi-lsp: error: {error.strerror or error}: {error.filename or ''}".rstrip(": "), file=sys.stderr)
        return 1
