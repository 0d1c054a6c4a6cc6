"""What the editors' views of a big session cost the server: the first screen and the refresh after
a turn, windowed (``pi/treeWindow``, ``pi/messages`` pages, ``tree_changed`` with its entries)
next to the whole ``pi/tree`` the editors fetched before; and ACP's ``/tree`` message, drawn from
the same windows, next to the whole text tree it drew before.

For sessions of 10k and 100k entries written the way pi writes them (``generate_session.py``,
generated once into ``.bench-data/``), each request runs through its real handler, its typed
result is turned into JSON and serialized as pygls sends it; the figures are that server time and
the payload size, without the transport. "cold" is the first request after opening the session
(and "treeSearch first" the first search, which builds the session's search index); "right after
opening" are the two first screens the editors ask for after ``pi/openSession`` and
``pi/state`` (which builds the context and adds up the usage of every entry), in either order,
on the session opened afresh (medians of ``FIRST_VIEW_OPENS``); the other figures are medians of
repeated requests. A turn is
four entries appended (prompt, tool call, tool result, answer); after it the server sends one
``tree_changed`` event, where before each editor fetched ``pi/tree`` again.

pi has no request that serves a tree to an editor (its TUI draws from memory), so there is no
ratio against pi here; ``session_bench.py`` compares opening and context building with pi 0.84.2.

Last, ``pi-lsp session tree FILE`` (the text tree on stdout) runs as a user runs it, in a fresh
process per size with its address space capped at ``CLI_MEMORY_CAP_MB``: its wall time, peak RSS
and output size, next to the same process only opening the session (what the tree itself adds is
the difference).

    python bench/tree_bench.py [--sizes 10000 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from session_bench import session_file

from pi_lsp import protocol
from pi_lsp.acp.tree_text import tree_text
from pi_lsp.agent.events import EventStream
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.handlers.base import HANDLERS
from pi_lsp.session.session import Session
from pi_lsp.session.tree_view import render_tree_text

EDITOR_PAGE = 100
"""The rows and history entries the editors fetch at once (their first screen and each page)."""


def _handlers_loaded() -> None:
    from pi_lsp.handlers import sessions, tree  # noqa: F401 - registers the handlers


def call(services: Any, method: str, params: dict) -> tuple[float, int, Any]:
    """Server time (ms), payload (bytes) and result of one request through its handler."""
    started = time.perf_counter()
    result = protocol.to_json(HANDLERS[method](services, protocol.parse_params(method, params)))
    payload = json.dumps(result, separators=(",", ":"))
    return (time.perf_counter() - started) * 1000, len(payload), result


def median_call(services: Any, method: str, params: dict, repeats: int) -> tuple[float, int]:
    runs = [call(services, method, params) for _ in range(repeats)]
    return statistics.median(run[0] for run in runs), runs[0][1]


def median_text(render: Any, repeats: int) -> tuple[float, int]:
    """Server time (ms) and size (bytes) of a tree drawn as text (ACP's ``/tree`` message)."""
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        text = render()
        runs.append(((time.perf_counter() - started) * 1000, len(text.encode())))
    return statistics.median(run[0] for run in runs), runs[0][1]


def one_turn(session: Session, index: int) -> None:
    at = 1_800_000_000_000 + index
    session.append_message({"role": "user", "content": f"turn {index}: go on", "timestamp": at})
    call_block = {"type": "toolCall", "id": f"c{index}", "name": "read", "arguments": {"path": "a"}}
    session.append_message(
        {"role": "assistant", "content": [call_block], "stopReason": "toolUse", "timestamp": at}
    )
    session.append_message(
        {
            "role": "toolResult",
            "toolCallId": f"c{index}",
            "toolName": "read",
            "content": [{"type": "text", "text": "contents " * 200}],
            "isError": False,
            "timestamp": at,
        }
    )
    session.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "timestamp": at}
    )


def editors_tree_screen(services: Any) -> tuple[float, int]:
    """What both editors ask to show the tree of a session: the window, then the levels above it
    they fetch whole (every one in a small session; in a big one the other branches of the three
    branch points nearest the leaf, as TreeWindowModel.levelsToFill and tree_window.lua decide)."""
    total_ms, total_bytes, window = call(services, protocol.TREE_WINDOW, {"limit": EDITOR_PAGE})
    partial = [level for level in window["levels"] if len(level["rows"]) < level["total"]][::-1]
    if sum(level["total"] for level in window["levels"]) > 2 * EDITOR_PAGE:
        partial = [level for level in partial if level["total"] <= 10][:3]
    for level in partial:
        params = {"parentId": level["parentId"], "offset": 0, "limit": EDITOR_PAGE}
        ms, size, _ = call(services, protocol.TREE_CHILDREN, params)
        total_ms, total_bytes = total_ms + ms, total_bytes + size
    return total_ms, total_bytes


def tree_screen(services: Any, repeats: int) -> tuple[float, int]:
    runs = [editors_tree_screen(services) for _ in range(repeats)]
    return statistics.median(run[0] for run in runs), runs[0][1]


def served(session: Session, sent: list) -> Any:
    """The services a handler needs, serving ``session`` alone."""
    runtime = SessionRuntime(session, EventStream(session.id, sent.append))
    return SimpleNamespace(sessions=SimpleNamespace(get=lambda _session_id: runtime))


def chat_screen(services: Any) -> tuple[float, int]:
    """What both chats ask first: the last page of the history."""
    ms, size, _ = call(services, protocol.MESSAGES, {"limit": EDITOR_PAGE})
    return ms, size


SEARCHES = (
    ("treeSearch", "branch summary"),
    ("treeSearch a rare word", "module_3.py"),
    ("treeSearch a common word", "the"),
    ("treeSearch non-ASCII, no match", "café"),
)
"""What a user types in the tree's search, 50 results asked: a phrase (``treeSearch``, in about
one entry in twelve of the generated sessions), a file name, a word in nearly every entry, and
a word found nowhere. The first search of a session builds its search index."""

FIRST_VIEW_OPENS = 3
"""How many times the session is opened afresh for each order of the first screens (median)."""


def first_views(path: Path, figures: dict[str, tuple[float, int]]) -> None:
    """The first screens right after opening, as the editors ask for them: ``pi/openSession``,
    then ``pi/state`` (its work on the session, as ``agent/state.py`` does it: the context at
    the leaf, which walks the active path, and the usage of every entry), then the tree's and the
    chat's first screens, in either order; the median of ``FIRST_VIEW_OPENS`` fresh openings."""
    screens = {"tree": editors_tree_screen, "chat": chat_screen}
    for first, then in (("tree", "chat"), ("chat", "tree")):
        runs = []
        for _ in range(FIRST_VIEW_OPENS):
            with Session.open(path, writable=False) as session:
                services = served(session, [])
                session.build_context()
                services.sessions.get(session.id).usage.totals(session.entries)
                runs.append((screens[first](services), screens[then](services)))
        for label, index in ((f"right after opening: {first}", 0), (f"  then the {then}", 1)):
            figures[label] = (statistics.median(run[index][0] for run in runs), runs[0][index][1])


def measure(entries: int, repeats: int) -> dict[str, tuple[float, int]]:
    figures: dict[str, tuple[float, int]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "session.jsonl"
        shutil.copyfile(session_file(entries), path)
        first_views(path, figures)
        started = time.perf_counter()
        session = Session.open(path)
        figures["open"] = ((time.perf_counter() - started) * 1000, 0)
        sent: list[protocol.EventNotification] = []
        services = served(session, sent)
        runtime = services.sessions.get(session.id)

        cold_ms, cold_bytes, window = call(services, protocol.TREE_WINDOW, {})
        figures["treeWindow cold"] = (cold_ms, cold_bytes)
        figures["treeWindow"] = median_call(services, protocol.TREE_WINDOW, {}, repeats)
        figures["messages limit 100"] = median_call(
            services, protocol.MESSAGES, {"limit": EDITOR_PAGE}, repeats
        )
        _, _, tail = call(services, protocol.MESSAGES, {"limit": EDITOR_PAGE})
        figures["messages earlier page"] = median_call(
            services,
            protocol.MESSAGES,
            {"limit": EDITOR_PAGE, "before": tail["entries"][0]["entryId"]},
            repeats,
        )
        figures["tree first screen (editors)"] = tree_screen(services, repeats)
        top = window["levels"][0]
        figures["treeChildren page"] = median_call(
            services,
            protocol.TREE_CHILDREN,
            {"parentId": top["parentId"], "offset": max(0, top["offset"] - 100)},
            repeats,
        )
        search = {"query": SEARCHES[0][1], "limit": 50}
        figures["treeSearch first (index built)"] = call(services, protocol.TREE_SEARCH, search)[:2]
        for label, query in SEARCHES:
            figures[label] = median_call(
                services, protocol.TREE_SEARCH, {"query": query, "limit": 50}, repeats
            )
        figures["tree (whole)"] = median_call(services, protocol.TREE, {}, max(1, repeats // 2))
        figures["ACP /tree (window)"] = median_text(lambda: tree_text(session), repeats)
        figures["ACP /tree before (whole)"] = median_text(
            lambda: render_tree_text(session), max(1, repeats // 2)
        )

        turn_ms, turn_bytes = [], []
        for index in range(repeats):
            one_turn(session, index)
            started = time.perf_counter()
            runtime.tree_changed()
            payload = json.dumps(protocol.to_json(sent[-1]), separators=(",", ":"))
            turn_ms.append((time.perf_counter() - started) * 1000)
            turn_bytes.append(len(payload))
        figures["after a turn: tree_changed"] = (statistics.median(turn_ms), turn_bytes[0])
        session.close()
    return figures


CLI_MEMORY_CAP_MB = 4096
"""The address-space cap of the ``session tree`` process: a drawing that grows faster than the
session stops with MemoryError there instead of taking the machine's memory."""

_CLI_PROCESS = """
import resource, sys, time
cap = int(sys.argv[3]) * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
started = time.perf_counter()
if sys.argv[1] == "tree":
    from pi_lsp.cli import main
    code = main(["session", "tree", sys.argv[2]])
else:
    from pi_lsp.session.session import Session
    Session.open(sys.argv[2], writable=False)
    code = 0
sys.stdout.flush()
elapsed = (time.perf_counter() - started) * 1000
# VmHWM is this process's own peak: ru_maxrss would keep the benchmark's, which forked it.
status = open("/proc/self/status").read()
peak = int(status.split("VmHWM:")[1].split()[0]) / 1024
print(f"{code} {elapsed:.1f} {peak:.1f}", file=sys.stderr)
"""


def cli_tree(entries: int) -> dict[str, str]:
    """``pi-lsp session tree`` in a fresh, memory-capped process, next to opening only."""
    path = session_file(entries)
    figures = {}
    for what in ("open only", "tree"):
        with tempfile.TemporaryFile() as output:
            completed = subprocess.run(
                [sys.executable, "-c", _CLI_PROCESS, what, str(path), str(CLI_MEMORY_CAP_MB)],
                check=False,
                stdout=output,
                stderr=subprocess.PIPE,
                text=True,
            )
            size = output.seek(0, 2)
        if "MemoryError" in completed.stderr:
            figures[what] = f"MemoryError over {CLI_MEMORY_CAP_MB:,} MB"
            continue
        code, elapsed, peak = completed.stderr.split()[-3:]
        figures[what] = (
            f"{float(elapsed):,.0f} ms, peak RSS {float(peak):,.0f} MB"
            + (f", {size / 1e6:.1f} MB printed" if what == "tree" else "")
            + ("" if code == "0" else f", exit {code}")
        )
    return figures


def print_cli_tree(sizes: list[int]) -> None:
    print("pi-lsp session tree FILE (text), one process per size:")
    for size in sizes:
        for what, figure in cli_tree(size).items():
            print(f"  {size:>7,} entries  {what:<10} {figure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=5)
    arguments = parser.parse_args()
    _handlers_loaded()
    results = {size: measure(size, arguments.repeats) for size in arguments.sizes}
    labels = list(next(iter(results.values())))
    header = f"{'server time ms / payload KB':<32}" + "".join(
        f"{f'{size:,} entries':>24}" for size in results
    )
    print(header)
    print("-" * len(header))
    for label in labels:
        cells = []
        for size in results:
            ms, size_bytes = results[size][label]
            cells.append(
                f"{ms:>10.1f} ms" + (f" {size_bytes / 1024:>8.1f} KB" if size_bytes else " " * 12)
            )
        print(f"{label:<32}" + "".join(f"{cell:>24}" for cell in cells))
    print()
    print(
        "before: the editors fetched `tree (whole)` on every tree_changed, i.e. after every turn;"
    )
    print(
        "now: the first screen is `tree first screen (editors)` (treeWindow and the levels the"
        " editors fill) and `messages limit 100`; after a turn the editors patch in"
        " `tree_changed`."
    )
    print(
        "right after opening: the first screen asked for first pays for what the session had"
        " not worked out yet (after pi/openSession and pi/state), then the other one."
    )
    print()
    print_cli_tree(arguments.sizes)


if __name__ == "__main__":
    main()
