"""Per-turn benchmark: the server's overhead per turn on a new session and on a 10k-entry one.

A warm server (``server_common.WarmServer``) answers prompts whose scripted reply is one short
text: the median turn time minus the scripted model's own time, and the server's CPU per turn;
then the same request sent by litellm alone from this process, to tell pi-lsp's share from its
LLM client's. Then the same short turns on a new session with the example extension
``examples/extensions/team_memory.py`` installed over ``MEMORY_NOTES`` notes: a hook's time counts
in the turn, and the hook alone is timed in this process on the same input. Asserts nothing.
``--quick`` runs fewer repetitions.
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
from types import SimpleNamespace
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
MEMORY_NOTES = 200
TEAM_MEMORY = ROOT / "examples" / "extensions" / "team_memory.py"


def install_team_memory(workspace: Path) -> None:
    """The example extension and ``MEMORY_NOTES`` notes of about 1 KB, a few matching each turn."""
    pi = workspace / ".pi"
    (pi / "extensions").mkdir(parents=True, exist_ok=True)
    (pi / "memory").mkdir(exist_ok=True)
    (pi / "extensions" / "team_memory.py").write_text(TEAM_MEMORY.read_text())
    for index in range(MEMORY_NOTES):
        topic = "question" if index % 50 == 0 else f"topic{index}"
        body = f"Something the team learned about {topic} number {index}. " * 16
        (pi / "memory" / f"note{index:03}.md").write_text(f"# Note on {topic}\n{body}\n")


def time_context_hook(workspace: Path, calls: int) -> float:
    """Seconds per call of team_memory's ``context`` hook alone, on a short-turn context."""
    from pi_lsp.extensions import load_file
    from pi_lsp.resources.extension_files import discover_extension_files

    [file], _ = discover_extension_files(workspace, workspace / "none", [], trusted=True)
    extension, problem = load_file(file)
    assert extension is not None, problem
    event = SimpleNamespace(
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "short question 1"}]},
        ]
    )
    start = time.perf_counter()
    for _ in range(calls):
        extension.handler.context(event)
    return (time.perf_counter() - start) / calls


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
    # The generated session picked Anthropic models (model_change entries), which a resumed
    # session keeps: point it back at the scripted model.
    await server.client.request("pi/setModel", {"model": "openai/scripted"})
    big, big_cpu = await short_turns(server, turns)
    install_team_memory(server.workspace)
    await server.client.request("pi/reload", {})
    await server.client.request("pi/newSession", {})
    hooked, hooked_cpu = await short_turns(server, turns)
    return {
        "small": small,
        "big": big,
        "hooked": hooked,
        "hookAlone": time_context_hook(server.workspace, 20),
        "cpuPerTurn": {"small": small_cpu, "big": big_cpu, "hooked": hooked_cpu},
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
    print_hooked(figures)


def print_hooked(figures: dict[str, Any]) -> None:
    small, hooked = figures["small"], figures["hooked"]
    without = statistics.median(run["wall"] - run["model"] for run in small)
    with_hook = statistics.median(run["wall"] - run["model"] for run in hooked)
    cpu = figures["cpuPerTurn"]
    print(
        f"\n(d) the same short turns on a new session with examples/extensions/team_memory.py "
        f"over {MEMORY_NOTES} notes (median of {len(hooked)})"
    )
    print(f"  {'':50} {'no extension':>12} {'team_memory':>12}")
    row("turn minus the model (ms)", without * 1000, with_hook * 1000)
    row("server CPU per turn, mean (ms)", cpu["small"] * 1000, cpu["hooked"] * 1000)
    row(
        "request sent to the model (KB)",
        median_of(small, "requestBytes") / 1000,
        median_of(hooked, "requestBytes") / 1000,
    )
    print(
        f"  the context hook alone, in this process: {figures['hookAlone'] * 1000:.2f} ms per call "
        "(one call per model request)"
    )


def row(label: str, small: float, big: float) -> None:
    print(f"  {label:50} {small:>12.1f} {big:>12.1f}")


def run(scratch: Path, quick: bool) -> None:
    figures, alone = asyncio.run(measure(scratch, 5 if quick else 20))
    print_turns(figures, alone)


if __name__ == "__main__":
    run_alone(
        __doc__, "pi-lsp per-turn benchmark", lambda scratch, options: run(scratch, options.quick)
    )
