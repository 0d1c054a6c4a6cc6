"""MCP benchmark: what configured MCP servers cost at start-up, and the server CPU of one MCP call.

(a) Cold start with two stdio servers in ``mcp.json`` (PyPI's ``mcp-server-time`` and the SDK-built
``tests/mcp/misbehaving_server.py``) against none: process start → ``initialize`` response, and
→ the answer to a first ``pi/sessions`` sent right after ``initialized`` (when the servers start
in the background). Runs are interleaved so both see the same load. Goal: ≤ 1.05×.

(b) Server CPU per MCP tool call: a warm server runs a turn of N calls to the misbehaving server's
``echo`` and a turn without calls; the difference in the server process's CPU (utime + stime from
/proc: the MCP server's own CPU is its child's, not counted), divided by N. The same for pi 1.6
(``cli.js --mode rpc``, the same ``mcp.json`` with the server's tools ``direct``, the scripted
model as a ``models.json`` provider, as ``side_by_side.py`` drives pi), and the ratio.

Asserts nothing. ``--quick`` runs fewer repetitions.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from server_common import (
    NODE,
    ROOT,
    SERVER_COMMAND,
    PiClient,
    WarmServer,
    bench_environment,
    process_cpu_seconds,
    run_alone,
)
from side_by_side import Pi, write_agent_files

from pi_lsp.scripted_llm import ScriptedLLM, replies

MISBEHAVING = ROOT / "tests" / "mcp" / "misbehaving_server.py"
PI16_CLI = ROOT / "tests" / "reference" / "node_modules" / "pi16" / "dist" / "cli.js"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"
GOAL_RATIO = 1.05


def two_servers() -> dict:
    return {
        "mcpServers": {
            "time": {"command": str(TIME_SERVER), "exposure": "direct"},
            "tools": {"command": sys.executable, "args": [str(MISBEHAVING)], "exposure": "direct"},
        }
    }


async def time_start(workspace: Path, home: Path) -> tuple[float, float]:
    """Seconds to the ``initialize`` response and to the first ``pi/sessions`` answer."""
    client = PiClient("pi-lsp-mcp-bench", timeout=60)
    start = time.perf_counter()
    await client.start_server(
        (*SERVER_COMMAND, "--log-file", str(home / "server.log")),
        env=bench_environment(home),
        cwd=ROOT,
        stderr=asyncio.subprocess.DEVNULL,
    )
    await client.initialize_workspace(workspace)
    initialized = time.perf_counter() - start
    await client.request("pi/sessions", {})
    first_answer = time.perf_counter() - start
    await client.close(timeout=10)
    return initialized, first_answer


async def measure_start(scratch: Path, runs: int) -> dict[str, list[tuple[float, float]]]:
    subjects = {"no MCP servers": scratch / "bare", "two stdio MCP servers": scratch / "mcp"}
    for name, home in subjects.items():
        (home / "agent").mkdir(parents=True)
        (home / "workspace").mkdir()
        if name != "no MCP servers":
            (home / "agent" / "mcp.json").write_text(json.dumps(two_servers()))
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in subjects}
    for home in subjects.values():  # warm the file cache and the bytecode
        await time_start(home / "workspace", home)
    for _ in range(runs):
        for name, home in subjects.items():
            times[name].append(await time_start(home / "workspace", home))
    return times


def print_start(times: dict[str, list[tuple[float, float]]]) -> None:
    print("\n(a) cold start (ms, median of the runs)")
    print(f"  {'':26} {'initialize':>11} {'first request':>14} {'runs':>5}")
    medians = {}
    for name, values in times.items():
        initialize = statistics.median(value[0] for value in values) * 1000
        first = statistics.median(value[1] for value in values) * 1000
        medians[name] = (initialize, first)
        print(f"  {name:26} {initialize:>11.0f} {first:>14.0f} {len(values):>5}")
    bare, mcp = medians["no MCP servers"], medians["two stdio MCP servers"]
    print(
        f"  with / without: initialize {mcp[0] / bare[0]:.3f}x, "
        f"first request {mcp[1] / bare[1]:.3f}x (goal ≤ {GOAL_RATIO}x)"
    )


async def measure_call_cpu(scratch: Path, calls: int, rounds: int) -> list[float]:
    """Server CPU seconds per MCP call, one figure per round."""
    agent = scratch / "home" / "agent"
    agent.mkdir(parents=True)
    servers = {
        "tools": {"command": sys.executable, "args": [str(MISBEHAVING)], "exposure": "direct"}
    }
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    per_call = []
    async with ScriptedLLM() as llm, WarmServer(scratch, llm) as server:
        echo = [(f"c{index}", "mcp__tools__echo", {"text": f"n{index}"}) for index in range(calls)]
        for _ in range(rounds):
            llm.enqueue(replies.tool_calls(echo), replies.text("done"))
            with_calls = await server.timed_prompt("call the tools")
            llm.enqueue(replies.text("done"))
            without = await server.timed_prompt("no tools")
            per_call.append((with_calls["cpu"] - without["cpu"]) / calls)
        assert process_cpu_seconds(server.pid) > 0
    return per_call


class Pi16(Pi):
    """pi 1.6's RPC mode (side_by_side's driver of pi 0.84.2, on pi 1.6's cli.js)."""

    async def start(self, workspace: Path, environment: dict[str, str]) -> None:
        self.spawned_at = time.perf_counter()
        self.process = await asyncio.create_subprocess_exec(
            str(NODE),
            str(PI16_CLI),
            "--mode",
            "rpc",
            "--offline",
            cwd=workspace,
            env=environment,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=64 * 1024 * 1024,
        )
        self.pid = self.process.pid
        self._reader = asyncio.ensure_future(self._read())


async def measure_pi16_call_cpu(scratch: Path, calls: int, rounds: int) -> list[float]:
    """pi 1.6's CPU seconds per MCP call, one figure per round."""
    home, workspace = scratch / "home", scratch / "workspace"
    workspace.mkdir(parents=True)
    per_call = []
    async with ScriptedLLM() as llm:
        write_agent_files(home, llm.base_url)
        servers = {
            "tools": {"command": sys.executable, "args": [str(MISBEHAVING)], "exposure": "direct"}
        }
        (home / "agent" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        pi = Pi16()
        await pi.start(workspace, bench_environment(home))
        try:
            llm.enqueue(replies.text("warm"), replies.text("warm"))
            await pi.prompt("warm up")
            await pi.prompt("warm up again")
            echo = [
                (f"c{index}", "mcp__tools__echo", {"text": f"n{index}"}) for index in range(calls)
            ]
            for _ in range(rounds):
                llm.enqueue(replies.tool_calls(echo), replies.text("done"))
                before = process_cpu_seconds(pi.pid)
                await pi.prompt("call the tools")
                with_calls = process_cpu_seconds(pi.pid) - before
                llm.enqueue(replies.text("done"))
                before = process_cpu_seconds(pi.pid)
                await pi.prompt("no tools")
                without = process_cpu_seconds(pi.pid) - before
                per_call.append((with_calls - without) / calls)
            echoed = [
                message
                for request in llm.requests
                for message in request.get("messages", [])
                if message.get("role") == "tool" and "echo: n0" in json.dumps(message)
            ]
            if not echoed:
                raise RuntimeError("pi 1.6 did not call the MCP server's echo")
        finally:
            await pi.stop()
    return per_call


def print_call_cpu(per_call: list[float], pi16_per_call: list[float] | None, calls: int) -> None:
    milliseconds = [value * 1000 for value in per_call]
    print(f"\n(b) server CPU per MCP tool call ({calls} calls a turn, minus a turn without)")
    ours = statistics.median(milliseconds)
    print(
        f"  pi-lsp: median {ours:.2f} ms, min {min(milliseconds):.2f} ms, "
        f"max {max(milliseconds):.2f} ms over {len(milliseconds)} rounds"
    )
    if not pi16_per_call:
        print("  pi 1.6 is not installed (make install-reference): no comparison")
        return
    theirs = [value * 1000 for value in pi16_per_call]
    print(
        f"  pi 1.6: median {statistics.median(theirs):.2f} ms, min {min(theirs):.2f} ms, "
        f"max {max(theirs):.2f} ms over {len(theirs)} rounds"
    )
    print(f"  pi-lsp / pi 1.6: {ours / statistics.median(theirs):.2f}x (goal ≤ 1)")


def run(scratch: Path, quick: bool) -> None:
    runs, calls, rounds = (3, 20, 2) if quick else (10, 50, 5)
    print_start(asyncio.run(measure_start(scratch / "start", runs)))
    ours = asyncio.run(measure_call_cpu(scratch / "calls", calls, rounds))
    pi16 = None
    if NODE.exists() and PI16_CLI.exists():
        pi16 = asyncio.run(measure_pi16_call_cpu(scratch / "pi16-calls", calls, rounds))
    print_call_cpu(ours, pi16, calls)


if __name__ == "__main__":
    run_alone(__doc__, "pi-lsp MCP benchmark", lambda scratch, options: run(scratch, options.quick))
