"""What ``pi/context`` (the context inspector) costs the server on big sessions.

Two shapes per size: a session written the way long pi sessions look (``generate_session.py``:
tool outputs, compactions every ~170k tokens, branch summaries; the context at the leaf is a small
part of the file), and a worst case with no compaction at all, where every entry of the path is a
message the inspector lists (user and assistant messages with usage, one context edit near the
start so every message is estimated). Each session is opened by a real service graph (the one the
server builds at ``initialize``, with the in-process model double), then ``pi/context`` runs
through its real handler, its result turned into JSON as pygls sends it. "first" is the first
request after opening (it builds the context at the leaf); the other figure is the median of
repeated requests, as an editor refreshing its Context view asks again. The goal: at most 50 ms at
10k entries and 200 ms at 100k.

pi has no such request (its ``/context``-like views draw from memory), so there is no ratio.

    python bench/context_bench.py [--sizes 10000 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from session_bench import session_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pi_lsp import protocol
from pi_lsp.handlers.base import HANDLERS
from tests.agent_harness import AgentHarness

GOALS_MS = {10_000: 50, 100_000: 200}


def worst_case_session(path: Path, entries: int) -> None:
    """``entries`` messages on one path, no compaction, a context edit after the first answer."""
    lines = [
        json.dumps(
            {"type": "session", "version": 3, "id": f"worst-{entries}", "timestamp": _at(0)}
            | {"cwd": "/project"}
        )
    ]
    parent = None
    for index in range(entries):
        entry_id = f"{index:08x}"
        role = "user" if index % 2 == 0 else "assistant"
        message: dict[str, Any] = {
            "role": role,
            "content": [{"type": "text", "text": _text(index)}],
        }
        if role == "assistant":
            usage = {"input": 1000, "output": 50, "cacheRead": 0, "cacheWrite": 0}
            message |= {"api": "openai-completions", "provider": "openai", "model": "scripted"}
            message |= {"usage": usage | {"totalTokens": 1050}, "stopReason": "stop"}
        message["timestamp"] = 1_767_225_600_000 + index
        line = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": _at(index)}
        lines.append(json.dumps(line | {"message": message}))
        parent = entry_id
        if index == 1:
            edit = {"type": "context_edit", "id": "ed170001", "parentId": parent}
            edit |= {"timestamp": _at(index), "targetId": f"{0:08x}", "replacement": None}
            lines.append(json.dumps(edit))
            parent = "ed170001"
    path.write_text("\n".join(lines) + "\n")


def _at(index: int) -> str:
    return f"2026-01-01T00:00:{index % 60:02d}.000Z"


def _text(index: int) -> str:
    return f"message {index}: " + "the context inspector lists every part " * 3


async def request_ms(services: Any) -> tuple[float, int, dict]:
    started = time.perf_counter()
    params = protocol.parse_params(protocol.CONTEXT, {})
    result = protocol.to_json(await HANDLERS[protocol.CONTEXT](services, params))
    payload = json.dumps(result, separators=(",", ":"))
    return (time.perf_counter() - started) * 1000, len(payload), result


async def measure(source: Path, repeats: int) -> dict[str, Any]:
    workspace = Path(tempfile.mkdtemp(prefix="pi-lsp-context-bench-")) / "project"
    sessions = workspace / ".pi" / "sessions"
    sessions.mkdir(parents=True)
    file = sessions / source.name
    shutil.copyfile(source, file)
    harness = AgentHarness(workspace)
    try:
        services = harness.services
        services.client_configuration_ready.set()
        services.sessions.open_path(file)
        first, size, result = await request_ms(services)
        runs = [(await request_ms(services))[0] for _ in range(repeats)]
        return {
            "firstMs": round(first, 1),
            "repeatMs": round(statistics.median(runs), 1),
            "parts": len(result["parts"]),
            "payloadKB": round(size / 1024, 1),
        }
    finally:
        harness.close()
        shutil.rmtree(workspace.parent, ignore_errors=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from pi_lsp.handlers import context  # noqa: F401 - registers the handler

    print(f"{'session':<28}{'first ms':>10}{'repeat ms':>11}{'parts':>8}{'KB':>8}{'goal ms':>9}")
    worst_dir = Path(tempfile.mkdtemp(prefix="pi-lsp-context-worst-"))
    try:
        for size in args.sizes:
            worst = worst_dir / f"worst-{size}.jsonl"
            worst_case_session(worst, size)
            for name, path in ((f"pi-shaped {size}", session_file(size)), (f"worst {size}", worst)):
                figures = await measure(path, args.repeats)
                goal = GOALS_MS.get(size, "")
                print(
                    f"{name:<28}{figures['firstMs']:>10}{figures['repeatMs']:>11}"
                    f"{figures['parts']:>8}{figures['payloadKB']:>8}{goal:>9}"
                )
    finally:
        shutil.rmtree(worst_dir, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
