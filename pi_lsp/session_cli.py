"""``pi-lsp session …``: inspect session files and plan compactions and branch summaries from a
shell.

The JSON these commands print is a contract other tools compare against (pi's own functions give
the same documents for the same file): messages are pi's AgentMessage JSON, exactly as pi 0.84.2
builds them. Files are opened read-only; only ``fork`` writes, and only a new file, ``gc``
removes the file checkpoints' contents no session refers to any more, and ``delete`` moves a
session file to the system trash.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from pi_lsp.errors import EntryNotFoundError, InvalidParamsError, SessionNotFoundError
from pi_lsp.session import js_json
from pi_lsp.session.context import UNSET, LeafId
from pi_lsp.session.session import Session

DEFAULT_BRANCH_SUMMARY_BUDGET = 128_000 - 16_384


def add_commands(commands: argparse._SubParsersAction) -> None:
    session_parser = commands.add_parser(
        "session",
        help="inspect session files and plan compactions",
        description="Read pi's session files (.pi/sessions/*.jsonl) from a shell: the context "
        "the model would see, the tree, the sessions of a folder; plan a compaction or a branch "
        "summary without calling a model; fork a session into a new file; remove the file "
        "checkpoints no session refers to. Files are opened read-only, except that fork writes "
        "a new file and gc removes unreferenced checkpoint contents; the JSON printed is what "
        "pi's own functions give for the same file.",
    )
    actions = session_parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    context = actions.add_parser("context", help="the LLM context at the leaf, as pi builds it")
    context.add_argument("file")
    context.add_argument(
        "--leaf", metavar="ID", help="entry to build the context at (default: the leaf)"
    )
    context.set_defaults(handler=run_context)

    plan = actions.add_parser(
        "plan-compaction", help="what a compaction at the leaf would summarize and keep"
    )
    plan.add_argument("file")
    plan.add_argument("--leaf", metavar="ID")
    plan.add_argument("--keep-recent-tokens", type=_non_negative, default=20_000, metavar="N")
    plan.add_argument("--reserve-tokens", type=_non_negative, default=16_384, metavar="N")
    _add_tokenizer(plan)
    plan.set_defaults(handler=run_plan_compaction)

    branch = actions.add_parser(
        "plan-branch-summary", help="what a branch summary from one entry to another covers"
    )
    branch.add_argument("file")
    branch.add_argument(
        "--from", dest="from_id", required=True, metavar="ID", help="the leaf being left"
    )
    branch.add_argument(
        "--to", dest="to_id", required=True, metavar="ID", help="the entry being navigated to"
    )
    branch.add_argument(
        "--token-budget", type=_non_negative, default=DEFAULT_BRANCH_SUMMARY_BUDGET, metavar="N"
    )
    _add_tokenizer(branch)
    branch.set_defaults(handler=run_plan_branch_summary)

    listing = actions.add_parser("list", help="the sessions in a directory, newest first")
    listing.add_argument("directory", nargs="?", default=".pi/sessions")
    listing.set_defaults(handler=run_list)

    tree = actions.add_parser("tree", help="the session tree, active path marked, labels shown")
    tree.add_argument("file")
    tree.add_argument("--json", action="store_true", help="print the tree as JSON instead of text")
    tree.set_defaults(handler=run_tree)

    fork = actions.add_parser(
        "fork", help="a new session file holding the path from the root to an entry"
    )
    fork.add_argument("file")
    fork.add_argument("--at", dest="entry_id", required=True, metavar="ID")
    fork.set_defaults(handler=run_fork)

    delete = actions.add_parser(
        "delete", help="move a session file to the system trash (refused while it is written)"
    )
    delete.add_argument("file")
    delete.set_defaults(handler=run_delete)

    gc = actions.add_parser(
        "gc",
        help="remove the file checkpoints' contents no session refers to; print the store's size",
    )
    gc.add_argument("directory", nargs="?", default=".pi/sessions")
    gc.add_argument(
        "--min-age",
        type=_non_negative,
        default=3600,
        metavar="SECONDS",
        help="keep unreferenced contents younger than this (a running agent's; default 3600)",
    )
    gc.set_defaults(handler=run_gc)


def _add_tokenizer(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tokenizer",
        choices=("tiktoken", "chars4"),
        default="tiktoken",
        help="token counting: real BPE counts (default) or pi's chars/4 estimate",
    )


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum``."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a number >= {minimum}, got {value}")
        return value

    return whole_number


_non_negative = at_least(0)


def _print_json(document: Any) -> int:
    sys.stdout.write(js_json.dumps(document) + "\n")
    return 0


def _open(path: str) -> Session:
    if not os.path.isfile(path):
        raise SessionNotFoundError(f"no session file at {path}")
    return Session.open(path, writable=False)


def _leaf(session: Session, leaf_id: str | None) -> LeafId:
    if leaf_id is None:
        return UNSET
    session.require_entry(leaf_id)
    return leaf_id


def run_context(arguments: argparse.Namespace) -> int:
    session = _open(arguments.file)
    return _print_json(session.build_context(_leaf(session, arguments.leaf)).to_json())


def run_plan_compaction(arguments: argparse.Namespace) -> int:
    from pi_lsp.compaction.prepare import prepare_compaction
    from pi_lsp.compaction.settings import CompactionSettings
    from pi_lsp.compaction.tokens import get_token_counter

    session = _open(arguments.file)
    leaf = _leaf(session, arguments.leaf)
    settings = CompactionSettings(
        reserve_tokens=arguments.reserve_tokens, keep_recent_tokens=arguments.keep_recent_tokens
    )
    preparation = prepare_compaction(
        session.branch(leaf), settings, get_token_counter(arguments.tokenizer)
    )
    return _print_json(None if preparation is None else preparation.to_json())


def run_plan_branch_summary(arguments: argparse.Namespace) -> int:
    from pi_lsp.compaction.branch import plan_branch_summary
    from pi_lsp.compaction.tokens import get_token_counter

    session = _open(arguments.file)
    for entry_id in (arguments.from_id, arguments.to_id):
        session.require_entry(entry_id)
    plan = plan_branch_summary(
        session.by_id,
        arguments.from_id,
        arguments.to_id,
        arguments.token_budget,
        get_token_counter(arguments.tokenizer),
    )
    return _print_json(plan.to_json())


def run_list(arguments: argparse.Namespace) -> int:
    from pi_lsp import protocol
    from pi_lsp.session.listing import list_sessions

    return _print_json([protocol.to_json(info) for info in list_sessions(arguments.directory)])


def run_tree(arguments: argparse.Namespace) -> int:
    from pi_lsp import protocol
    from pi_lsp.session.tree_view import tree_text_lines, tree_view

    session = _open(arguments.file)
    if arguments.json:
        return _print_json(protocol.to_json(tree_view(session)))
    sys.stdout.writelines(tree_text_lines(session))
    return 0


def run_gc(arguments: argparse.Namespace) -> int:
    from pathlib import Path

    from pi_lsp.checkpoints.gc import collect_garbage

    directory = Path(arguments.directory)
    if not directory.is_dir():
        raise SessionNotFoundError(f"no session directory at {directory}")
    report = collect_garbage(directory, min_age_seconds=arguments.min_age)
    return _print_json(report.to_json())


def run_delete(arguments: argparse.Namespace) -> int:
    from pathlib import Path

    from pi_lsp.project_memory.session_files import move_to_trash

    path = Path(os.path.abspath(arguments.file))
    if not path.is_file():
        raise SessionNotFoundError(f"no session file at {path}")
    move_to_trash(path)
    return _print_json({"path": str(path), "trashed": True})


def run_fork(arguments: argparse.Namespace) -> int:
    from pi_lsp.session.fork import fork_session, holds_conversation

    source = _open(arguments.file)
    if source.get_entry(arguments.entry_id) is None:
        raise EntryNotFoundError(f"entry {arguments.entry_id} not found in {arguments.file}")
    if not holds_conversation(source, arguments.entry_id):
        raise InvalidParamsError(
            f"nothing to fork: the path to {arguments.entry_id} holds no user or assistant message"
        )
    with fork_session(source, arguments.entry_id) as fork:
        return _print_json(
            {
                "id": fork.id,
                "path": str(fork.path),
                "written": fork.is_persisted,
                "leafId": fork.leaf_id,
            }
        )
