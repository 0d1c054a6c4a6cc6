"""ACP streaming benchmark: ``pi-lsp acp``'s CPU per streamed delta next to the LSP server's.

The same scripted replies (thousands of tiny text chunks at once, then one chunk, to tell the
turn's fixed cost apart) stream through a warm ``pi-lsp acp`` process driven by the ACP SDK's
client side, and through a warm language server (``server_common.WarmServer``). Each process's CPU
time (utime + stime from /proc) per delta, the marginal cost per delta, and the notifications the
client received. Asserts nothing. ``--quick`` runs fewer repetitions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import ClientCapabilities
from server_common import (
    ROOT,
    SERVER_COMMAND,
    TimedScriptedLLM,
    WarmServer,
    bench_environment,
    line,
    many_small_chunks,
    median_of,
    process_cpu_seconds,
    run_alone,
)
from server_streaming import add_chunks_argument, measure_streaming

from pi_lsp.scripted_llm import replies


class CountingClient:
    """An ACP client that counts the ``session/update`` notifications it receives."""

    def __init__(self) -> None:
        self.updates = 0

    def on_connect(self, connection: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates += 1


@contextlib.asynccontextmanager
async def warm_acp_agent(scratch: Path, llm: TimedScriptedLLM):
    workspace = scratch / "acp-workspace"
    workspace.mkdir()
    options = {
        "model": "openai/scripted",
        "apiBase": llm.base_url,
        "thinkingLevel": "off",
        "retry": {"enabled": False},
        "compaction": {"enabled": False},
        "autoName": False,
    }
    client = CountingClient()
    async with spawn_agent_process(
        client,
        *SERVER_COMMAND,
        "--log-file",
        str(scratch / "acp.log"),
        "acp",
        "--options",
        json.dumps(options),
        env=bench_environment(scratch / "acp-home"),
        cwd=ROOT,
    ) as (connection, process):
        await connection.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
        agent = AcpAgent(connection, process.pid, client, workspace, llm)
        llm.enqueue(replies.text("warm"), replies.text("warm"))
        await agent.new_session()
        await agent.prompt("warm up")
        await agent.prompt("warm up again")
        yield agent


class AcpAgent:
    def __init__(self, connection, pid: int, client: CountingClient, workspace: Path, llm) -> None:
        self.connection, self.pid, self.client = connection, pid, client
        self.workspace, self.llm = workspace, llm
        self.session_id = ""

    async def new_session(self) -> None:
        session = await self.connection.new_session(cwd=str(self.workspace))
        self.session_id = session.session_id

    async def prompt(self, text: str) -> Any:
        return await self.connection.prompt(session_id=self.session_id, prompt=[text_block(text)])

    async def timed_prompt(self, reply) -> dict[str, float]:
        await self.new_session()
        self.llm.enqueue(reply)
        cpu_before, updates_before = process_cpu_seconds(self.pid), self.client.updates
        start = time.perf_counter()
        answer = await self.prompt("stream")
        wall = time.perf_counter() - start
        if answer.stop_reason != "end_turn":
            raise RuntimeError(f"the benchmark turn ended with {answer.stop_reason}")
        return {
            "wall": wall,
            "cpu": process_cpu_seconds(self.pid) - cpu_before,
            "notifications": self.client.updates - updates_before,
        }


async def measure(scratch: Path, chunks: int, repeats: int) -> tuple[dict, dict]:
    async with TimedScriptedLLM() as llm:
        async with warm_acp_agent(scratch, llm) as agent:
            burst, one = [], []
            for _ in range(repeats):
                burst.append(await agent.timed_prompt(many_small_chunks(chunks)))
                one.append(await agent.timed_prompt(many_small_chunks(1)))
            acp = {"chunks": chunks, "burst": burst, "one": one}
        async with WarmServer(scratch, llm) as server:
            lsp = await measure_streaming(server, chunks, repeats)
    return acp, lsp


def per_delta(figures: dict[str, Any]) -> tuple[float, float, float]:
    chunks = figures["chunks"]
    cpu_burst, cpu_one = median_of(figures["burst"], "cpu"), median_of(figures["one"], "cpu")
    return cpu_burst / chunks, (cpu_burst - cpu_one) / (chunks - 1), cpu_burst


def report(acp: dict[str, Any], lsp: dict[str, Any]) -> None:
    acp_whole, acp_marginal, acp_cpu = per_delta(acp)
    lsp_whole, lsp_marginal, lsp_cpu = per_delta(lsp)
    print(
        f"\nthe same scripted reply of {acp['chunks']:,} text chunks sent at once "
        f"(median of {len(acp['burst'])}), through each front end"
    )
    line("ACP: agent CPU, whole turn (ms)", acp_cpu * 1000)
    line("ACP: CPU per delta, whole turn / chunks (us)", acp_whole * 1e6)
    line("ACP: CPU per delta, marginal (us)", acp_marginal * 1e6)
    line("ACP: session/update notifications received", median_of(acp["burst"], "notifications"))
    line("LSP: server CPU, whole turn (ms)", lsp_cpu * 1000)
    line("LSP: CPU per delta, whole turn / chunks (us)", lsp_whole * 1e6)
    line("LSP: CPU per delta, marginal (us)", lsp_marginal * 1e6)
    line("LSP: pi/event notifications received", median_of(lsp["burst"], "notifications"))
    line("ratio ACP / LSP, CPU per delta (whole turn)", acp_whole / lsp_whole, "1.0 = the same")


def run(scratch: Path, quick: bool, chunks: int) -> None:
    acp, lsp = asyncio.run(measure(scratch, chunks, 1 if quick else 3))
    report(acp, lsp)


if __name__ == "__main__":
    run_alone(
        __doc__,
        "pi-lsp ACP streaming benchmark",
        lambda scratch, options: run(scratch, options.quick, options.chunks),
        add_chunks_argument,
    )
