"""``pi-lsp demo``: pi-lsp's memory story through the real server, printed as a transcript.

The command writes a small project with a bug (``script.py`` holds its files, the prompts and the
scripted answers), starts ``python -m pi_lsp`` over stdio with pi-lsp's own client
(``client.py``), chooses the model (a scripted OpenAI-compatible server on 127.0.0.1 playing the
story, unless ``PI_LSP_MODEL`` or ``--model`` names a real one) and tells the story an editor user
lives (``story.py``): prompts with tool calls, the user's own reads and saves in the editor, a
compaction with its file lists, a prompt after it, a summarized branch switch, files restored and
brought forward again, the tree and a fork. Each step prints what happens (``transcript.py``) and
checks its facts; ``--quiet`` prints only the step titles and the checks.

Only the argument parser is built at import time: every ``pi-lsp`` command imports this module to
build its command line, and must not pay for asyncio, the client, aiohttp or the scripted server.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pi_lsp.demo.errors import DemoError
from pi_lsp.errors import PiError

DEFAULT_DIRECTORY_NAME = "pi-lsp-demo"


def add_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "demo",
        help="run pi-lsp's memory story through the real server and print it",
        description=(
            "Create a small project with a bug in DIR, start the pi-lsp server over stdio and run "
            "a story through it: prompts the model answers with read and edit tool calls, files "
            "opened and saved in the editor, a compaction with its file lists, a prompt after it, "
            "a summarized branch switch, files restored and brought forward again, the tree and a "
            "fork. Uses a scripted local model unless PI_LSP_MODEL or --model names a real one."
        ),
    )
    parser.add_argument(
        "directory",
        nargs="?",
        metavar="DIR",
        type=Path,
        help=f"the demo workspace (default: ./{DEFAULT_DIRECTORY_NAME}; must be empty or new)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="run in DIR even if it is not empty, keeping its files and earlier sessions "
        "(the demo's project files are rewritten)",
    )
    parser.add_argument(
        "--model", help="a litellm model string to use instead of the scripted model"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="print only the step titles and the checks"
    )
    parser.set_defaults(handler=run_demo)


def run_demo(arguments: argparse.Namespace) -> int:
    """The ``demo`` command: prepare the workspace, run the story, report where its files are."""
    _tolerate_unencodable_output()
    workspace = prepare_workspace(
        arguments.directory or Path.cwd() / DEFAULT_DIRECTORY_NAME, keep=arguments.keep
    )
    model = _requested_model(arguments.model)
    import asyncio

    from pi_lsp.demo.story import run_story
    from pi_lsp.demo.transcript import Transcript

    try:
        asyncio.run(run_story(workspace, model, Transcript(quiet=arguments.quiet)))
    except PiError:
        raise
    except Exception as error:  # noqa: BLE001 — a demo ends with one line, whatever went wrong
        raise DemoError(f"demo failed: {_describe(error)}") from None
    return 0


def prepare_workspace(directory: Path, *, keep: bool) -> Path:
    """Write the buggy project into ``directory``, refusing to mix it into a non-empty folder."""
    from pi_lsp.demo.script import PROJECT_FILES

    workspace = directory.expanduser().resolve()
    if workspace.exists() and not workspace.is_dir():
        raise DemoError(f"{workspace} exists and is not a directory")
    if workspace.is_dir() and any(workspace.iterdir()) and not keep:
        raise DemoError(
            f"{workspace} is not empty; give an empty or "
            "new DIR, or pass --keep to run there anyway"
        )
    workspace.mkdir(parents=True, exist_ok=True)
    for name, text in PROJECT_FILES.items():
        (workspace / name).write_text(text, encoding="utf-8")
    return workspace


def _requested_model(option: str | None) -> str | None:
    """The real model to use, or ``None`` for the scripted one."""
    return (option or os.environ.get("PI_LSP_MODEL", "")).strip() or None


def _tolerate_unencodable_output() -> None:
    # Previews contain arrows and ellipses; a terminal
    # without UTF-8 should get "?" rather than a crash.
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")


def _describe(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "the server did not answer in time"
    return str(error) or type(error).__name__
