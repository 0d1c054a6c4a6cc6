"""The ``pi-lsp`` command: argument parsing and dispatch.

``pi-lsp`` alone serves the language server over stdio (``--tcp HOST:PORT`` for TCP on loopback,
with a token; see ``tcp``);
``pi-lsp acp`` serves the Agent Client Protocol over stdio (see ``acp``);
``pi-lsp session …`` inspects and plans on session files (see ``session_cli``); ``pi-lsp demo`` runs
a complete story through the real server (see ``demo``); ``pi-lsp eval compaction`` measures how
much a compaction summary keeps (see ``eval_cli``). Every command prints
its result on stdout and, for bad input, exits non-zero with a one-line error on stderr.
"""

from __future__ import annotations

import argparse
import os
import sys

from pi_lsp import REPOSITORY_URL, __version__
from pi_lsp.errors import InvalidParamsError, PiError


def build_parser(with_commands: bool = True) -> argparse.ArgumentParser:
    """The command line; without ``with_commands`` only the server's options, which spares the
    server's start the import of every subcommand's modules (a tenth of a second or more)."""
    parser = argparse.ArgumentParser(
        prog="pi-lsp",
        description="pi's session tree, compaction and branch summaries for LSP editors. With no "
        "command, pi-lsp is the language server: an editor starts it and speaks LSP on its stdin "
        "and stdout (or over --tcp).",
        epilog=f"Documentation: {REPOSITORY_URL}#readme",
    )
    parser.add_argument("--version", action="version", version=f"pi-lsp {__version__}")
    parser.add_argument(
        "--tcp",
        metavar="HOST:PORT",
        help="serve LSP over TCP on a loopback address instead of stdio; clients must send the "
        "token (see --token-file) as initializationOptions.token",
    )
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help="with --tcp: where to write the connection token (default: tcp-PORT.token in the "
        "user runtime directory; the path is printed on stderr)",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="with --tcp: allow a host that is not loopback (the token is still required)",
    )
    parser.add_argument(
        "--log-file",
        metavar="PATH",
        help="where to write the log (default: the user log directory)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages too")
    sharing = parser.add_mutually_exclusive_group()
    sharing.add_argument(
        "--shared",
        action="store_true",
        default=None,
        help="connect to one server process shared by this user's editor windows, starting it "
        "if none runs (also PI_LSP_SHARED=1); later windows then start in a fraction of a second",
    )
    sharing.add_argument(
        "--no-shared",
        dest="shared",
        action="store_false",
        help="serve this editor from a process of its own even if PI_LSP_SHARED=1",
    )
    parser.add_argument("--serve-shared", action="store_true", help=argparse.SUPPRESS)
    parser.set_defaults(handler=run_server)
    if with_commands:
        _add_commands(parser)
    return parser


def _add_commands(parser: argparse.ArgumentParser) -> None:
    from pi_lsp import demo, eval_cli, session_cli
    from pi_lsp.acp import command_line as acp_command

    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    session_cli.add_commands(commands)
    demo.add_command(commands)
    eval_cli.add_command(commands)
    acp_command.add_command(commands)


def run_server(arguments: argparse.Namespace) -> int:
    """Serve LSP over stdio (the default) or TCP until the client exits."""
    if arguments.serve_shared:
        from pi_lsp.startup import pause_collection

        pause_collection()
        from pi_lsp.transport import shared_daemon

        return shared_daemon.run(arguments.log_file, arguments.verbose)
    if not arguments.tcp:
        _say_what_stdin_waits_for(sys.stdin)
    if not arguments.tcp and _sharing(arguments):
        from pi_lsp.transport import shared_forwarder

        connection = shared_forwarder.connect(os.environ, _server_options(arguments))
        if connection is not None:
            return shared_forwarder.forward(connection)
    from pi_lsp.startup import pause_collection

    pause_collection()
    from pi_lsp.logs import configure_logging
    from pi_lsp.server import build_server
    from pi_lsp.transport.client_gone import leave_when_stdin_ends
    from pi_lsp.transport.stdio import serve_stdio

    if not arguments.tcp and (arguments.token_file or arguments.allow_remote):
        raise InvalidParamsError("--token-file and --allow-remote apply only with --tcp")
    configure_logging(arguments.log_file, verbose=arguments.verbose)
    _skip_the_final_collection()
    server = build_server()
    if arguments.tcp:
        from pi_lsp.transport import tcp

        tcp.run(
            server,
            arguments.tcp,
            allow_remote=arguments.allow_remote,
            token_file=arguments.token_file,
        )
    else:
        # stdout carries the LSP stream and nothing else: anything written through sys.stdout
        # (litellm logs INFO records there, libraries print) goes to stderr instead.
        lsp_output = sys.stdout.buffer
        sys.stdout = sys.stderr
        serve_stdio(server, sys.stdin.buffer, lsp_output, leave_when_stdin_ends(server))
    return 0


def _say_what_stdin_waits_for(stdin) -> None:
    """Typed bare in a terminal, the server would wait in silence for LSP messages."""
    if stdin is not None and stdin.isatty():
        print(
            "pi-lsp: waiting for an editor's LSP messages on stdin (this is the language server; "
            "editors start it for you). Ctrl-D ends it; pi-lsp --help lists the commands.",
            file=sys.stderr,
        )


def _sharing(arguments: argparse.Namespace) -> bool:
    from pi_lsp.transport import shared_address

    return shared_address.enabled(os.environ) if arguments.shared is None else arguments.shared


def _server_options(arguments: argparse.Namespace) -> list[str]:
    """The options a shared server started by this invocation takes from it."""
    options = ["--log-file", arguments.log_file] if arguments.log_file else []
    return options + (["--verbose"] if arguments.verbose else [])


def _skip_the_final_collection() -> None:
    """Leave the heap to the operating system when the server exits.

    Python collects every object once more as it shuts down; with litellm loaded that took 4 to 6
    seconds on the 2-core CI machine, after the client's ``exit``, while editors and the demo wait
    for the process. Registered first, ``gc.freeze`` runs after every other exit handler (they
    still close what they hold); the frozen objects are then left out of that last collection.
    """
    import atexit
    import gc

    atexit.register(gc.freeze)


_VALUE_OPTIONS = frozenset({"--tcp", "--token-file", "--log-file"})


def _may_name_a_command(argv: list[str]) -> bool:
    """Whether ``argv`` may need the subcommands: a word that is not an option or an option's
    value (a command, or a typo the full parser names the commands for), or a request for help."""
    words = iter(argv)
    for word in words:
        if word in ("-h", "--help") or not word.startswith("-"):
            return True
        if word in _VALUE_OPTIONS:
            next(words, None)
    return False


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(with_commands=_may_name_a_command(words))
    arguments = parser.parse_args(words)
    try:
        return arguments.handler(arguments)
    except PiError as error:
        print(f"pi-lsp: error: {error.message}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    except OSError as error:
        print(
            f"pi-lsp: error: {error.strerror or error}: {error.filename or ''}".rstrip(": "),
            file=sys.stderr,
        )
        return 1
