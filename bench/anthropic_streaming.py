"""CPU per streamed delta on the Anthropic Messages path: pi-lsp direct, pi-lsp through litellm,
and pi 0.84.2, in one run on the same scripted stream.

The scripted server in this process answers ``POST /v1/messages`` (``scripted_llm/anthropic.py``:
``message_start``, one ``content_block_delta`` per text chunk, ``message_delta``,
``message_stop``). All three agents read the same ``models.json`` custom provider with ``api:
"anthropic-messages"`` (pi-lsp calls it ``anthropic/claude-sonnet-4-5``), and the same
``settings.json`` (retries and compaction off). pi-lsp runs twice: with its own request and
stream (``anthropic_request.py``, ``anthropic_direct.py``) and with
``PI_LSP_LLM_TRANSPORT=litellm`` (litellm's request and streaming). Each agent answers two
warm-up turns, then a reply of ``--deltas`` text chunks sent at once; the figure is the server's
CPU time (utime + stime from /proc) for that turn divided by the chunks, the median over
``--runs`` turns, the agents interleaved so they share the machine's load. Printed with the
ratios to pi. Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from server_common import (
    TimedScriptedLLM,
    bench_environment,
    many_small_chunks,
    process_cpu_seconds,
    replies,
)
from side_by_side import Agent, Pi, PiLsp, side_by_side_scratch, write_agent_files

PROVIDER, MODEL_ID = "scripted-anthropic", "claude-sonnet-4-5"
VARIANTS = (
    ("pi-lsp direct", PiLsp, {}),
    ("pi-lsp via litellm", PiLsp, {"PI_LSP_LLM_TRANSPORT": "litellm"}),
    ("pi 0.84.2", Pi, {}),
)


async def started(
    name: str, kind: type[Agent], extra: dict[str, str], scratch: Path, llm, environment
) -> Agent:
    agent = kind()
    workspace = scratch / name.replace(" ", "-")
    (workspace / ".pi" / "sessions").mkdir(parents=True, exist_ok=True)
    await agent.start(workspace, {**environment, **extra})
    for text in ("warm up", "warm up again"):
        llm.enqueue(replies.text("warm"))
        await agent.prompt(text)
    return agent


async def cpu_per_delta(agent: Agent, llm, deltas: int) -> float:
    llm.enqueue(many_small_chunks(deltas))
    before = process_cpu_seconds(agent.pid)
    await agent.prompt("stream")
    return (process_cpu_seconds(agent.pid) - before) / deltas * 1e6


async def measure(scratch: Path, deltas: int, runs: int) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {name: [] for name, _, _ in VARIANTS}
    async with TimedScriptedLLM() as llm:
        home = scratch / "home"
        write_agent_files(
            home,
            llm.root_url,
            provider=PROVIDER,
            model_id=MODEL_ID,
            api="anthropic-messages",
            context_window=200_000,
            api_key="scripted-key",
        )
        environment = bench_environment(home)
        agents = [
            (name, await started(name, kind, extra, scratch, llm, environment))
            for name, kind, extra in VARIANTS
        ]
        try:
            for _ in range(runs):
                for name, agent in agents:
                    figures[name].append(await cpu_per_delta(agent, llm, deltas))
        finally:
            for _, agent in agents:
                await agent.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=3000, help="chunks of the streamed reply")
    parser.add_argument("--runs", type=int, default=5, help="streamed turns per agent")
    arguments = parser.parse_args()
    started_at = time.perf_counter()
    title = (
        f"Anthropic Messages stream, {arguments.deltas:,} text deltas, median of {arguments.runs}"
    )
    with side_by_side_scratch("pi-lsp-anthropic-", title) as scratch:
        figures = asyncio.run(measure(scratch, arguments.deltas, arguments.runs))
    medians = {name: statistics.median(values) for name, values in figures.items()}
    pi = medians["pi 0.84.2"]
    print(f"\n{'server CPU per streamed delta':32} {'us':>8} {'/ pi':>7}   runs (us)")
    for name, value in medians.items():
        runs = " ".join(f"{run:.0f}" for run in figures[name])
        print(f"{name:32} {value:>8.1f} {value / pi:>6.2f}x   {runs}")
    print(f"\nbenchmark took {time.perf_counter() - started_at:.0f} s")


if __name__ == "__main__":
    main()
