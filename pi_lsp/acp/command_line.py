"""The ``pi-lsp acp`` command: its arguments, then serving ACP over stdio (``stdio.py``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pi_lsp import REPOSITORY_URL
from pi_lsp.errors import InvalidParamsError


def add_command(commands) -> None:
    parser = commands.add_parser(
        "acp",
        help="serve the Agent Client Protocol over stdio (Zed, JetBrains, Emacs, Neovim)",
        description="Serve the Agent Client Protocol on stdin/stdout: pi's session tree, "
        "compaction and branch summaries for ACP clients. Configure the client to run "
        "`pi-lsp acp` in the project's folder; the model and keys come from pi's settings and "
        "auth files, the environment (PI_LSP_MODEL, provider keys) or --options, and sessions "
        "are the project's .pi/sessions files, shared with the editors and pi. "
        f"Documentation: {REPOSITORY_URL}/blob/main/docs/acp.md",
    )
    parser.add_argument(
        "--options",
        metavar="JSON_OR_FILE",
        help="settings as a JSON object or a JSON file, with the same keys as the LSP "
        'initializationOptions (for example \'{"model": "anthropic/claude-sonnet-4-5"}\')',
    )
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    from pi_lsp.acp.stdio import serve
    from pi_lsp.logs import configure_logging

    options = parse_options(arguments.options)
    configure_logging(arguments.log_file, verbose=arguments.verbose)
    serve(options)
    return 0


def parse_options(value: str | None) -> dict[str, Any]:
    """``--options``: a JSON object, inline or in a file."""
    if not value:
        return {}
    text = value
    if not value.lstrip().startswith("{"):
        try:
            text = Path(value).read_text(encoding="utf-8")
        except OSError as error:
            raise InvalidParamsError(f"--options: cannot read {value}: {error.strerror}") from error
    try:
        options = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidParamsError(f"--options: not valid JSON: {error}") from error
    if not isinstance(options, dict):
        raise InvalidParamsError("--options: must be a JSON object")
    return options
