"""pi 0.84.2 and pi-lsp reading the same session files: one Node process for every file.

``read_in_pi`` loads each file with pi's real ``SessionManager`` (through the conformance suite's
``pi_reference.mjs batch``, so Node starts once for the whole batch) and returns the entries and
the context pi builds; ``read_in_pi_lsp`` gives pi-lsp's answer to the same questions, and
``assert_same_reading`` compares them file by file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.conformance.harness import REFERENCE_SCRIPT, run_node_script, run_our_cli_in_process


def read_in_pi(node: Path, files: Sequence[Path]) -> dict[Path, dict[str, Any]]:
    """pi's ``tree`` and ``context`` answers per file (``ok`` false with ``error`` on failure)."""
    queries = [[command, str(path)] for path in files for command in ("tree", "context")]
    output = run_node_script(
        node, REFERENCE_SCRIPT, ["batch", "-"], stdin=json.dumps(queries).encode()
    )
    answers = json.loads(output.decode("utf-8"))
    read: dict[Path, dict[str, Any]] = {}
    for index, path in enumerate(files):
        tree, context = answers[2 * index], answers[2 * index + 1]
        read[path] = {"tree": tree, "context": context}
    return read


def read_in_pi_lsp(path: Path) -> dict[str, Any]:
    """pi-lsp's ``session tree --json`` and ``session context`` answers for one file."""
    tree = run_our_cli_in_process(["session", "tree", str(path), "--json"])
    context = run_our_cli_in_process(["session", "context", str(path)])
    return {
        "tree": {"ok": tree.ok, "result": tree.value, "error": tree.error},
        "context": {"ok": context.ok, "result": context.value, "error": context.error},
    }


def entry_ids(tree_answer: dict[str, Any]) -> list[str]:
    return [entry["id"] for entry in tree_answer["result"]["entries"]]


def assert_same_reading(
    node: Path, files: Sequence[Path], ours: Mapping[Path, dict[str, Any]] | None = None
) -> None:
    """Every file opens in pi 0.84.2 and in pi-lsp, with the same entries, leaf and context.

    ``ours``: pi-lsp's readings (``read_in_pi_lsp``) when they were taken elsewhere, in another
    process; otherwise they are taken here."""
    by_pi = read_in_pi(node, files)
    problems = []
    for path in files:
        ours_of_path = ours[path] if ours is not None else read_in_pi_lsp(path)
        theirs = by_pi[path]
        for question in ("tree", "context"):
            if not theirs[question]["ok"]:
                problems.append(f"{path.name}: pi cannot {question}: {theirs[question]['error']}")
            if not ours_of_path[question]["ok"]:
                error = ours_of_path[question]["error"]
                problems.append(f"{path.name}: pi-lsp cannot {question}: {error}")
        if problems:
            continue
        if entry_ids(ours_of_path["tree"]) != entry_ids(theirs["tree"]):
            problems.append(f"{path.name}: pi and pi-lsp see different entries")
        if ours_of_path["tree"]["result"]["leafId"] != theirs["tree"]["result"]["leafId"]:
            problems.append(f"{path.name}: pi and pi-lsp see different leaves")
        if ours_of_path["context"]["result"]["messages"] != theirs["context"]["result"]["messages"]:
            problems.append(f"{path.name}: pi and pi-lsp build different contexts")
    assert not problems, "\n".join(problems[:20]) + f"\n({len(problems)} problems)"
