"""Server start-up benchmark: process start → ``initialize`` response, next to the floor and pi.

Prints the median of fresh processes of ``python -m pi_lsp`` spoken to with pi-lsp's own client;
next to it the floor (the interpreter alone, and importing pygls, the LSP library) and pi 0.84.2's
RPC mode (``cli.js --mode rpc``) from process start to its answer to a first ``get_state``
command. Asserts nothing. ``--quick`` runs fewer repetitions.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from server_common import (
    NODE,
    PI_CLI,
    ROOT,
    SERVER_COMMAND,
    PiClient,
    bench_environment,
    run_alone,
)

PI_LABEL = "pi 0.84.2 --mode rpc: get_state answer"
OURS_LABEL = "pi-lsp: initialize response"
GOAL_MS = 150


async def time_our_start(workspace: Path, environment: dict[str, str], log_file: Path) -> float:
    """Seconds from spawning ``python -m pi_lsp`` to its ``initialize`` response."""
    client = PiClient("pi-lsp-bench", timeout=60)
    start = time.perf_counter()
    await client.start_server(
        (*SERVER_COMMAND, "--log-file", str(log_file)),
        env=environment,
        cwd=ROOT,
        stderr=asyncio.subprocess.DEVNULL,
    )
    await client.initialize_workspace(workspace)
    elapsed = time.perf_counter() - start
    await client.close(timeout=10)
    return elapsed


def time_pi_start(workspace: Path, environment: dict[str, str]) -> float:
    """Seconds from spawning pi's RPC mode to its answer to a first ``get_state`` command."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [str(NODE), str(PI_CLI), "--mode", "rpc", "--no-session", "--offline"],
        cwd=workspace,
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    process.stdin.write(b'{"id":"bench-1","type":"get_state"}\n')
    process.stdin.flush()
    for output_line in process.stdout:
        message = json.loads(output_line)
        if message.get("type") == "response" and message.get("id") == "bench-1":
            break
    else:
        raise RuntimeError("pi exited without answering get_state")
    elapsed = time.perf_counter() - start
    if not message.get("success"):
        raise RuntimeError(f"pi's get_state failed: {message}")
    process.stdin.close()  # pi's RPC mode ends at the end of its input
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return elapsed


def time_python(code: str, environment: dict[str, str]) -> float:
    """Seconds for ``python -c code``: the floor under any Python server's start-up."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, check=True)
    return time.perf_counter() - start


async def measure_start_up(scratch: Path, runs: int, floor_runs: int) -> dict[str, list[float]]:
    """Start-up times in seconds by subject, interleaved so every subject sees the same load.

    pi-lsp gets ``runs`` runs; the floor and pi, which only frame the figure, the first
    ``floor_runs``.
    """
    workspace = scratch / "start-up"
    workspace.mkdir()
    environment = bench_environment(scratch / "home")
    log_file = scratch / "start-up.log"
    await time_our_start(workspace, environment, log_file)  # warm the file cache and the bytecode
    times: dict[str, list[float]] = {
        "python -c pass (the interpreter)": [],
        "python -c 'import pygls.lsp.server'": [],
        OURS_LABEL: [],
        PI_LABEL: [],
    }
    for index in range(runs):
        times[OURS_LABEL].append(await time_our_start(workspace, environment, log_file))
        if index >= floor_runs:
            continue
        times["python -c pass (the interpreter)"].append(time_python("pass", environment))
        times["python -c 'import pygls.lsp.server'"].append(
            time_python("import pygls.lsp.server", environment)
        )
        if NODE.exists() and PI_CLI.exists():
            times[PI_LABEL].append(time_pi_start(workspace, environment))
    return times


def print_start_up(times: dict[str, list[float]]) -> None:
    print("\n(a) start-up: process start -> first answer (ms)")
    print(f"  {'':46} {'median':>8} {'min':>8} {'max':>8} {'runs':>5}")
    for label, values in times.items():
        if values:
            milliseconds = [value * 1000 for value in values]
            print(
                f"  {label:46} {statistics.median(milliseconds):>8.0f} {min(milliseconds):>8.0f} "
                f"{max(milliseconds):>8.0f} {len(values):>5}"
            )
    ours, pis = times[OURS_LABEL], times[PI_LABEL]
    if pis:
        ratio = statistics.median(pis) / statistics.median(ours)
        print(f"  pi / pi-lsp: {ratio:.1f}x (above 1: pi-lsp answers sooner)")
    else:
        print("  pi 0.84.2 is not installed (make install-reference): no comparison")
    print(f"  goal for pi-lsp: < {GOAL_MS} ms")


def run(scratch: Path, quick: bool) -> None:
    runs, floor_runs = (5, 3) if quick else (20, 6)
    print_start_up(asyncio.run(measure_start_up(scratch, runs, floor_runs)))


if __name__ == "__main__":
    run_alone(
        __doc__, "pi-lsp start-up benchmark", lambda scratch, options: run(scratch, options.quick)
    )
