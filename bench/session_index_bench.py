"""Session index benchmark: building the index of 1,000 sessions / 1 million entries, searching
it, indexing an append, and a turn with the index against one without.

1. Writes ``--sessions`` session files of ``--entries`` entries each (user questions, assistant
   answers with tool calls, tool results; words from a 5,000-word vocabulary plus a few rare
   markers), then builds the index with ``ProjectMemory`` as the server does, and prints the build
   time (wall and CPU) and the database size.
2. Times searches of the full index (median and worst of ``SEARCH_REPEATS``): a word found
   nowhere, one in about 1% of entries, one in about 30%, one in every entry, a phrase, a
   vocabulary word, an excluded word; newest first and best match first. The goal is 50 ms.
3. Appends entries to one session file, told to the index and waited for, and prints the
   index's CPU per appended entry (this process's CPU; the file writes are timed apart and left
   out): ``APPENDS`` entries one at a time, each continuing the active path and newer than every
   entry (as a turn writes them; the goal is 1 ms); the same in passes of ``TURN_ENTRIES`` (the
   server gathers a turn's appends into one pass); and ``BRANCHES`` entries each branching off
   the middle of the path (its ancestors are marked on the active path again).
4. Runs ``--turns`` short turns on a warm server with the index and on one without
   (``sessionIndex: false``) and prints the median turn time and server CPU of each, and the
   ratio. The goal is 1.05.

Asserts nothing. ``--quick`` writes 100 sessions and runs fewer turns.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import attrs
from server_common import WarmServer, compile_bytecode, median_of, replies

from pi_lsp.project_memory.service import ProjectMemory
from pi_lsp.scripted_llm import ScriptedLLM
from pi_lsp.session.timestamps import epoch_ms_to_iso

SEARCH_REPEATS = 20
BASE_EPOCH_MS = 1_735_689_600_000
APPENDS = 300
TURN_ENTRIES = 4
BRANCHES = 20
VOCABULARY = [f"w{index:04d}" for index in range(5000)]
COMMON_WORDS = ["the", "file", "function", "error", "test"]


def write_sessions(directory: Path, sessions: int, entries: int, seed: int = 7) -> int:
    """``sessions`` files of ``entries`` entries; the bytes written."""
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    written = 0
    for number in range(sessions):
        lines = [
            {
                "type": "session",
                "version": 3,
                "id": f"session-{number:05d}",
                "timestamp": "2025-01-01T00:00:00.000Z",
                "cwd": "/bench",
            }
        ]
        parent = None
        for index in range(entries):
            entry_id = f"{number:05d}{index:06d}"
            lines.append(_entry(rng, entry_id, parent, number * entries + index))
            parent = entry_id
        data = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
        (directory / f"2025-01-01T00-00-00-000Z_session-{number:05d}.jsonl").write_text(data)
        written += len(data)
    return written


def _sentence(rng: random.Random, words: int) -> str:
    chosen = [rng.choice(VOCABULARY) for _ in range(words)]
    if rng.random() < 0.3:
        chosen.append(rng.choice(COMMON_WORDS[1:]))
    chosen.append("the")
    if rng.random() < 0.01:
        chosen.append("uncommonword")
    if rng.random() < 0.00001:
        chosen.append("needleinthehaystack")
    rng.shuffle(chosen)
    return " ".join(chosen)


def _entry(rng: random.Random, entry_id: str, parent: str | None, clock: int) -> dict:
    kind = clock % 4
    timestamp = epoch_ms_to_iso(BASE_EPOCH_MS + clock * 1000)
    if kind == 0:
        message: dict = {"role": "user", "content": _sentence(rng, 20), "timestamp": clock}
    elif kind == 1:
        message = {
            "role": "assistant",
            "content": [
                {"type": "text", "text": _sentence(rng, 40)},
                {
                    "type": "toolCall",
                    "id": f"c{entry_id}",
                    "name": "read",
                    "arguments": {"path": f"src/{rng.choice(VOCABULARY)}.py"},
                },
            ],
            "timestamp": clock,
        }
    elif kind == 2:
        message = {
            "role": "toolResult",
            "toolCallId": f"c{entry_id}",
            "toolName": "read",
            "content": [{"type": "text", "text": _sentence(rng, 120)}],
            "isError": False,
            "timestamp": clock,
        }
    else:
        message = {
            "role": "assistant",
            "content": [{"type": "text", "text": _sentence(rng, 30)}],
            "timestamp": clock,
        }
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": timestamp,
        "message": message,
    }


def cpu() -> float:
    return time.process_time()


def build(directory: Path, database: Path) -> tuple[ProjectMemory, float, float]:
    # Changes are indexed as soon as they are told (the server waits SETTLE_SECONDS to gather a
    # turn's appends into one pass), so the cost of one appended entry is measured alone.
    memory = ProjectMemory(database, lambda: [directory], sweep_seconds=3600, settle_seconds=0)
    wall, processor = time.perf_counter(), cpu()
    memory.start()
    memory.wait_until_current()
    return memory, time.perf_counter() - wall, cpu() - processor


def time_searches(memory: ProjectMemory) -> list[tuple[str, str, int, float, float]]:
    queries = [
        "needleinthehaystack",
        "uncommonword",
        "function",
        "the",
        f'"{VOCABULARY[10]} the"',
        VOCABULARY[1],
        "uncommonword -function",
    ]
    figures = []
    for query in queries:
        for order in ("newest", "best"):
            times = []
            total = 0
            for _ in range(SEARCH_REPEATS):
                start = time.perf_counter()
                result = memory.search(query, limit=50, order=order)  # type: ignore[arg-type]
                times.append((time.perf_counter() - start) * 1000)
                total = result.page.total
            figures.append((query, order, total, statistics.median(times), max(times)))
    return figures


@attrs.frozen
class AppendShape:
    label: str
    per_pass: int
    """Entries appended before the index is told (a turn's appends are indexed in one pass)."""
    branching: bool
    """Each entry's parent is the middle of the active path (a branch), not the last entry."""


APPEND_SHAPES = (
    AppendShape("an appended entry", 1, False),
    AppendShape(f"a turn's {TURN_ENTRIES} appends, per entry", TURN_ENTRIES, False),
    AppendShape("an entry branching off mid-path", 1, True),
)


def time_appends(
    memory: ProjectMemory, path: Path, clock: int, shape: AppendShape
) -> tuple[float, float]:
    """CPU ms per appended entry for the index, and the wall ms until it is searchable.

    Every entry is newer than every entry written so far (``clock``), as a turn's appends are;
    it continues the active path unless the shape branches."""
    rng = random.Random(3)
    processor = wall = 0.0
    ids = [json.loads(line)["id"] for line in path.read_bytes().splitlines()[1:]]
    count = APPENDS if not shape.branching else BRANCHES
    for first in range(0, count, shape.per_pass):
        lines = []
        for index in range(first, first + shape.per_pass):
            entry_id = f"{clock + index:012d}"
            parent = ids[len(ids) // 2] if shape.branching else ids[-1]
            lines.append(json.dumps(_entry(rng, entry_id, parent, clock + index)) + "\n")
            ids.append(entry_id)
        with open(path, "a") as stream:
            stream.write("".join(lines))
        start_cpu, start_wall = cpu(), time.perf_counter()
        memory.notice(path)
        memory.wait_until_current()
        processor += cpu() - start_cpu
        wall += time.perf_counter() - start_wall
    return processor / count * 1000, wall / count * 1000


async def turns_with_and_without(scratch: Path, turns: int) -> dict[str, dict[str, float]]:
    figures = {}
    for label, options in (("with the index", {}), ("without", {"sessionIndex": False})):
        async with ScriptedLLM() as llm:
            directory = scratch / label.replace(" ", "-")
            directory.mkdir()
            async with WarmServer(directory, llm, options) as server:
                runs = []
                for index in range(turns):
                    llm.enqueue(replies.text("ok", chunks=1))
                    runs.append(await server.timed_prompt(f"short question {index}"))
                figures[label] = {
                    "wall": median_of(runs, "wall") * 1000,
                    "cpu": sum(run["cpu"] for run in runs) / turns * 1000,
                }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--quick", action="store_true")
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.sessions, arguments.turns = 100, 10
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="pi-lsp-index-bench-") as scratch_name:
        scratch = Path(scratch_name)
        sessions = scratch / "sessions"
        start = time.perf_counter()
        written = write_sessions(sessions, arguments.sessions, arguments.entries)
        total = arguments.sessions * arguments.entries
        print(
            f"session index benchmark: {arguments.sessions} sessions, {total:,} entries, "
            f"{written / 1e6:.0f} MB of JSONL (written in {time.perf_counter() - start:.0f} s)"
        )
        database = scratch / "index.sqlite3"
        memory, wall, processor = build(sessions, database)
        size = sum(path.stat().st_size for path in scratch.glob("index.sqlite3*"))
        print(
            f"  build: {wall:.1f} s wall, {processor:.1f} s CPU "
            f"({total / wall:,.0f} entries/s); database {size / 1e6:.0f} MB "
            f"({size / written:.2f}x the JSONL)"
        )
        print("  search (limit 50)                      order    matches   median ms   worst ms")
        for query, order, matches, median, worst in time_searches(memory):
            print(f"    {query:36} {order:7} {matches:9,} {median:11.1f} {worst:10.1f}")
        first = min(sessions.glob("*.jsonl"))
        clock = total
        for shape in APPEND_SHAPES:
            per_entry_cpu, per_entry_wall = time_appends(memory, first, clock, shape)
            clock += APPENDS
            print(
                f"  {shape.label}: {per_entry_cpu:.2f} ms CPU to index "
                f"({per_entry_wall:.2f} ms until searchable)"
            )
        memory.close()
        figures = asyncio.run(turns_with_and_without(scratch, arguments.turns))
        for label, values in figures.items():
            print(
                f"  a short turn {label:15} {values['wall']:7.1f} ms wall (median), "
                f"{values['cpu']:6.1f} ms server CPU"
            )
        with_index, without = figures["with the index"], figures["without"]
        print(
            f"  ratio with/without: {with_index['wall'] / without['wall']:.3f} wall, "
            f"{with_index['cpu'] / without['cpu']:.3f} server CPU"
        )


if __name__ == "__main__":
    sys.exit(main())
