"""Streaming benchmark: the server's CPU per streamed text delta, and the notification rate.

A warm server (``server_common.WarmServer``) answers a prompt whose scripted reply streams
thousands of tiny chunks at once: the server's CPU time (utime + stime from /proc) divided by the
chunk count, and how many ``pi/event`` notifications a second the client received; then a paced
stream (a chunk every few milliseconds, like a fast real model) for the rate the client sees.
litellm alone in this process, on the same replies, tells pi-lsp's share from its LLM client's.
Asserts nothing. ``--quick`` runs fewer repetitions.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from server_common import (
    LitellmLoader,
    ModelThread,
    TimedScriptedLLM,
    WarmServer,
    line,
    litellm_call,
    many_small_chunks,
    median_of,
    run_alone,
    warm_litellm,
)

PACED_CHUNKS, PACED_DELAY_SECONDS = 600, 0.005
DEFAULT_CHUNKS = 5_000


async def prompt_on_new_session(server: WarmServer, reply) -> dict[str, float]:
    await server.client.request("pi/newSession", {})
    server.llm.enqueue(reply)
    return await server.timed_prompt("stream")


async def measure_streaming(server: WarmServer, chunks: int, repeats: int) -> dict[str, Any]:
    """A burst of chunks next to a one-chunk turn (to tell the turn's fixed cost apart), then a
    paced stream."""
    burst, one = [], []
    for _ in range(repeats):
        burst.append(await prompt_on_new_session(server, many_small_chunks(chunks)))
        one.append(await prompt_on_new_session(server, many_small_chunks(1)))
    paced = await prompt_on_new_session(
        server, many_small_chunks(PACED_CHUNKS, PACED_DELAY_SECONDS)
    )
    return {"chunks": chunks, "burst": burst, "one": one, "paced": paced}


async def measure_litellm_alone(litellm, chunks: int, repeats: int) -> dict[str, Any]:
    """What litellm costs by itself for the same replies."""
    with ModelThread() as model:
        await warm_litellm(litellm, model)
        return {
            "burst": [
                await litellm_call(litellm, model, many_small_chunks(chunks))
                for _ in range(repeats)
            ],
            "one": [await litellm_call(litellm, model, many_small_chunks(1)) for _ in range(5)],
            "paced": await litellm_call(
                litellm, model, many_small_chunks(PACED_CHUNKS, PACED_DELAY_SECONDS)
            ),
        }


async def measure(scratch: Path, chunks: int, repeats: int) -> tuple[dict, dict, float]:
    loader = LitellmLoader()
    async with TimedScriptedLLM() as llm:
        loader.start()
        async with WarmServer(scratch, llm) as server:
            litellm = await asyncio.to_thread(loader.wait)  # its import must not compete
            figures = await measure_streaming(server, chunks, repeats)
    alone = await measure_litellm_alone(litellm, chunks, repeats)
    return figures, alone, server.warm_up_seconds


def print_streaming(figures: dict[str, Any], alone: dict[str, Any]) -> None:
    chunks, burst, one, paced = (
        figures["chunks"],
        figures["burst"],
        figures["one"],
        figures["paced"],
    )
    cpu_burst, cpu_one = median_of(burst, "cpu"), median_of(one, "cpu")
    wall_burst = median_of(burst, "wall")
    server_marginal = (cpu_burst - cpu_one) / (chunks - 1)
    alone_marginal = (median_of(alone["burst"], "cpu") - median_of(alone["one"], "cpu")) / (
        chunks - 1
    )
    notifications = median_of(burst, "notifications")
    print(
        f"\n(b) streaming: a scripted reply of {chunks:,} text chunks sent at once "
        f"(median of {len(burst)})"
    )
    line("server CPU, whole turn (ms)", cpu_burst * 1000)
    line("server CPU, the same turn with 1 chunk (ms)", cpu_one * 1000)
    line("server CPU per delta, whole turn / chunks (us)", cpu_burst / chunks * 1e6, "goal < 50 us")
    line("server CPU per delta, marginal (us)", server_marginal * 1e6)
    line("litellm alone, same reply, marginal (us)", alone_marginal * 1e6)
    line("difference: pi-lsp's share, within noise (us)", (server_marginal - alone_marginal) * 1e6)
    line("turn wall time (ms)", wall_burst * 1000)
    line("pi/event notifications received", notifications)
    line("pi/event notifications per second", notifications / wall_burst)
    print(
        f"  paced: {PACED_CHUNKS} chunks, one every {PACED_DELAY_SECONDS * 1000:.0f} ms "
        "(a fast real model)"
    )
    line("  turn wall time (ms)", paced["wall"] * 1000)
    line("  server CPU per delta (us)", paced["cpu"] / PACED_CHUNKS * 1e6)
    line("  litellm alone, same reply (us)", alone["paced"]["cpu"] / PACED_CHUNKS * 1e6)
    line(
        "  pi/event notifications per second",
        paced["notifications"] / paced["wall"],
        "deltas coalesced to ~30/s",
    )


def run(scratch: Path, quick: bool, chunks: int = DEFAULT_CHUNKS) -> None:
    figures, alone, warm_up = asyncio.run(measure(scratch, chunks, 1 if quick else 3))
    print(f"\n(server warm-up, litellm's import included: {warm_up:.1f} s)")
    print_streaming(figures, alone)


def add_chunks_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--chunks", type=int, default=DEFAULT_CHUNKS, help="text chunks of the streamed reply"
    )


if __name__ == "__main__":
    run_alone(
        __doc__,
        "pi-lsp streaming benchmark",
        lambda scratch, options: run(scratch, options.quick, options.chunks),
        add_chunks_argument,
    )
