"""Per-turn benchmark: the server's overhead per turn on a new session and on a 10k-entry one.

A warm server (``server_common.WarmServer``) answers prompts whose scripted reply is one short
text: the median turn time minus the scripted model's own time, and the server's CPU per turn;
then the same request sent by litellm alone from this process, to tell pi-lsp's share from its
LLM client's. Asserts nothing. ``--quick`` runs fewer repetitions.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from server_common import (
    ROOT,
    LitellmLoader,
    ModelThread,
    TimedScriptedLLM,
    WarmServer,
    litellm_call,
    median_of,
    process_cpu_seconds,
    replies,
    run_alone,
    warm_litellm,
)

SESSION_ENTRIES = 10_000


def generate_big_session(workspace: Path, entries: int) -> Path:
    path = workspace / ".pi" / "sessions" / f"bench-{entries}.jsonl"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generate_session.py"), str(path), str(entries)],
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return path


async def measure_turns(server: WarmServer, turns: int) -> dict[str, Any]:
    """``turns`` one-line turns on a new session, then on the 10k-entry one."""
    llm = server.llm
    await server.client.request("pi/newSession", {})
    small, small_cpu = await short_turns(server, turns)
    small_request = llm.requests[-1]
    path = generate_big_session(server.workspace, SESSION_ENTRIES)
    start = time.perf_counter()
    await server.client.request("pi/openSession", {"path": str(path)})
    open_seconds = time.perf_counter() - start
    big, big_cpu = await short_turns(server, turns)
    return {
        "small": small,
        "big": big,
        "cpuPerTurn": {"small": small_cpu, "big": big_cpu},
        "openSeconds": open_seconds,
        "sizeMb": path.stat().st_size / 1e6,
        "requests": {"small": small_request, "big": llm.requests[-1]},
    }


async def short_turns(server: WarmServer, turns: int) -> tuple[list[dict[str, float]], float]:
    """The figures of each turn, and the server's mean CPU seconds per turn.

    The mean comes from the CPU time of all the turns together: /proc counts in 10 ms ticks, too
    coarse for one turn.
    """
    llm = server.llm
    results = []
    cpu_before = process_cpu_seconds(server.pid)
    for index in range(turns):
        llm.enqueue(replies.text("ok", chunks=1))
        handled_before = len(llm.handling_seconds)
        figures = await server.timed_prompt(f"short question {index}")
        figures["model"] = sum(llm.handling_seconds[handled_before:])
        figures["requestBytes"] = len(json.dumps(llm.requests[-1]))
        results.append(figures)
    return results, (process_cpu_seconds(server.pid) - cpu_before) / turns


async def measure_litellm_alone(litellm, requests: dict[str, dict], turns: int) -> dict[str, Any]:
    """What litellm costs by itself for the very requests the server sent."""
    with ModelThread() as model:
        await warm_litellm(litellm, model)
        return {
            size: [
                await litellm_call(litellm, model, replies.text("ok", chunks=1), body)
                for _ in range(turns)
            ]
            for size, body in requests.items()
        }


async def measure(scratch: Path, turns: int) -> tuple[dict, dict]:
    loader = LitellmLoader()
    async with TimedScriptedLLM() as llm:
        loader.start()
        async with WarmServer(scratch, llm) as server:
            litellm = await asyncio.to_thread(loader.wait)  # its import must not compete
            figures = await measure_turns(server, turns)
    alone = await measure_litellm_alone(litellm, figures.pop("requests"), turns)
    return figures, alone


def print_turns(figures: dict[str, Any], alone: dict[str, Any]) -> None:
    small, big = figures["small"], figures["big"]
    print(
        "\n(c) short turns: the scripted reply is one short text without delay "
        f"(median of {len(big)})"
    )
    print(
        f"  {SESSION_ENTRIES:,}-entry session: {figures['sizeMb']:.1f} MB, "
        f"pi/openSession {figures['openSeconds'] * 1000:.0f} ms"
    )
    print(f"  {'':50} {'new session':>12} {f'{SESSION_ENTRIES // 1000}k entries':>12}")
    row(
        "request sent to the model (KB)",
        median_of(small, "requestBytes") / 1000,
        median_of(big, "requestBytes") / 1000,
    )
    row("turn wall time (ms)", median_of(small, "wall") * 1000, median_of(big, "wall") * 1000)
    row(
        "scripted model's own time (ms)",
        median_of(small, "model") * 1000,
        median_of(big, "model") * 1000,
    )
    small_overhead = statistics.median(run["wall"] - run["model"] for run in small)
    big_overhead = statistics.median(run["wall"] - run["model"] for run in big)
    row("turn minus the model (ms)       goal < 5 ms", small_overhead * 1000, big_overhead * 1000)
    server_cpu = figures["cpuPerTurn"]
    alone_cpu = {
        size: statistics.mean(run["cpu"] for run in alone[size]) for size in ("small", "big")
    }
    row("server CPU per turn, mean (ms)", server_cpu["small"] * 1000, server_cpu["big"] * 1000)
    row(
        "litellm alone, same request: CPU, mean (ms)",
        alone_cpu["small"] * 1000,
        alone_cpu["big"] * 1000,
    )
    row(
        "difference: pi-lsp's own CPU per turn (ms)",
        (server_cpu["small"] - alone_cpu["small"]) * 1000,
        (server_cpu["big"] - alone_cpu["big"]) * 1000,
    )
    print("  (litellm alone: this process sends the very request the server sent through")
    print("   litellm.acompletion to a scripted model on another thread and reads the reply;")
    print("   its CPU is the process's minus the model's.)")


def row(label: str, small: float, big: float) -> None:
    print(f"  {label:50} {small:>12.1f} {big:>12.1f}")


def run(scratch: Path, quick: bool) -> None:
    figures, alone = asyncio.run(measure(scratch, 5 if quick else 20))
    print_turns(figures, alone)


if __name__ == "__main__":
    run_alone(
        __doc__, "pi-lsp per-turn benchmark", lambda scratch, options: run(scratch, options.quick)
    )
