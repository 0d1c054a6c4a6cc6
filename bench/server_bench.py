"""Language-server benchmark: start-up, CPU per streamed delta, and per-turn overhead on a big session.

Prints figures, asserts nothing. Three measurements, all against the real ``python -m pi_lsp``
spoken to over stdio by a minimal hand-written JSON-RPC client (Content-Length framing), so the
figures are the server's and not a client library's:

(a) start-up: process start → ``initialize`` response, median of fresh processes; next to it, pi
    0.84.2's RPC mode (``cli.js --mode rpc``) from process start to its answer to a first
    ``get_state`` command, in the same run;
(b) server CPU per streamed text delta: one prompt whose scripted reply streams thousands of tiny
    chunks, the server process's CPU time (utime + stime from /proc) divided by the chunk count,
    plus how many ``pi/event`` notifications a second the client received;
(c) server-side overhead per turn on a 10k-entry session: prompts whose scripted reply is one short
    text, the median turn time minus the scripted model server's own time for the request.

The scripted OpenAI-compatible model runs in this process (``pi_lsp.scripted_llm``). The whole run
takes about a minute or two; ``--quick`` runs fewer repetitions.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout, however (or whether) the package is installed

from pi_lsp.scripted_llm import Reply, ScriptedLLM, replies  # noqa: E402

NODE = ROOT / "tests" / "reference" / "node_modules" / ".bin" / "node"
PI_CLI = ROOT / "tests" / "reference" / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "cli.js"
SERVER_COMMAND = [sys.executable, "-m", "pi_lsp"]
CLOCK_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
SESSION_ENTRIES = 10_000


# ------------------------------------------------------------------------------------ environments


def isolated_environment(home: Path) -> dict[str, str]:
    """The servers' environment: a scratch HOME, so neither the user's settings nor their logs are touched."""
    environment = dict(os.environ)
    environment.update(
        HOME=str(home),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
        PI_CODING_AGENT_DIR=str(home / "agent"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PI_OFFLINE="1",
    )
    for name in ("PI_LSP_MODEL", "PI_LSP_API_BASE", "PI_LSP_API_KEY", "PI_CODING_AGENT_SESSION_DIR"):
        environment.pop(name, None)
    return environment


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize_message(workspace: Path, options: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {}, "initializationOptions": options or {}}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


# ------------------------------------------------------------------------------------ (a) start-up


def read_framed_response(stream, wanted_id: int) -> dict[str, Any]:
    """Read LSP frames from a blocking stream until the response with ``wanted_id``."""
    while True:
        length = 0
        while (line := stream.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        if not line:
            raise RuntimeError("the server closed its output before answering")
        message = json.loads(stream.read(length))
        if message.get("id") == wanted_id and "method" not in message:
            return message


def time_our_start(workspace: Path, environment: dict[str, str], log_file: Path) -> float:
    """Seconds from spawning ``python -m pi_lsp`` to its ``initialize`` response."""
    start = time.perf_counter()
    process = subprocess.Popen([*SERVER_COMMAND, "--log-file", str(log_file)], cwd=ROOT, env=environment,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    process.stdin.write(frame(initialize_message(workspace)))
    process.stdin.flush()
    response = read_framed_response(process.stdout, 1)
    elapsed = time.perf_counter() - start
    if "result" not in response:
        raise RuntimeError(f"initialize failed: {response}")
    process.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) + frame({"jsonrpc": "2.0", "method": "exit"}))
    process.stdin.close()
    _wait_or_kill(process)
    return elapsed


def time_pi_start(workspace: Path, environment: dict[str, str]) -> float:
    """Seconds from spawning pi's RPC mode to its answer to a first ``get_state`` command."""
    start = time.perf_counter()
    process = subprocess.Popen([str(NODE), str(PI_CLI), "--mode", "rpc", "--no-session", "--offline"], cwd=workspace,
                               env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    process.stdin.write(b'{"id":"bench-1","type":"get_state"}\n')
    process.stdin.flush()
    for line in process.stdout:
        message = json.loads(line)
        if message.get("type") == "response" and message.get("id") == "bench-1":
            break
    else:
        raise RuntimeError("pi exited without answering get_state")
    elapsed = time.perf_counter() - start
    if not message.get("success"):
        raise RuntimeError(f"pi's get_state failed: {message}")
    process.stdin.close()  # pi's RPC mode ends at the end of its input
    _wait_or_kill(process)
    return elapsed


def _wait_or_kill(process: subprocess.Popen) -> None:
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def measure_start_up(scratch: Path, runs: int, pi_runs: int) -> dict[str, Any]:
    """Median start-up of both, runs interleaved so both see the same machine load."""
    workspace = scratch / "start-up"
    workspace.mkdir()
    environment = isolated_environment(scratch / "home")
    have_pi = NODE.exists() and PI_CLI.exists()
    ours, pis = [], []
    time_our_start(workspace, environment, scratch / "start-up.log")  # warm the file cache and bytecode
    for index in range(runs):
        ours.append(time_our_start(workspace, environment, scratch / "start-up.log"))
        if have_pi and index < pi_runs:
            pis.append(time_pi_start(workspace, environment))
    return {"ours": ours, "pi": pis}


# ---------------------------------------------------------------------- a long-lived server (b, c)


class LspConnection:
    """A minimal asyncio JSON-RPC client on a server subprocess; counts the notifications it receives."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.notifications = 0
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read_forever())

    @classmethod
    async def start(cls, environment: dict[str, str], log_file: Path) -> LspConnection:
        process = await asyncio.create_subprocess_exec(
            *SERVER_COMMAND, "--log-file", str(log_file), cwd=ROOT, env=environment,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            limit=64 * 1024 * 1024,
        )
        return cls(process)

    @property
    def pid(self) -> int:
        return self.process.pid

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        message_id = next(self._ids)
        future = self._pending[message_id] = asyncio.get_running_loop().create_future()
        self._write({"jsonrpc": "2.0", "id": message_id, "method": method, "params": params or {}})
        response = await asyncio.wait_for(future, 300)
        if "error" in response:
            raise RuntimeError(f"{method} failed: {response['error'].get('message')}")
        return response.get("result")

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params or {}})

    async def close(self) -> None:
        await self.request("shutdown")
        self.notify("exit")
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except asyncio.TimeoutError:
            self.process.kill()
            await self.process.wait()
        self._reader.cancel()

    def _write(self, message: dict[str, Any]) -> None:
        self.process.stdin.write(frame(message))

    async def _read_forever(self) -> None:
        stdout = self.process.stdout
        while True:
            length = 0
            while (line := await stdout.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if not line:
                return
            self._dispatch(json.loads(await stdout.readexactly(length)))

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            future = self._pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)
        elif "id" in message:  # a request from the server (none expected): answer so it never waits
            self._write({"jsonrpc": "2.0", "id": message["id"], "result": None})
        else:
            self.notifications += 1


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS_PER_SECOND


class TimedScriptedLLM(ScriptedLLM):
    """The scripted model, also recording how long it spent on each chat-completion request."""

    def __init__(self) -> None:
        super().__init__()
        self.handling_seconds: list[float] = []

    async def _chat_completions(self, request):  # type: ignore[override]
        start = time.perf_counter()
        try:
            return await super()._chat_completions(request)
        finally:
            self.handling_seconds.append(time.perf_counter() - start)


async def start_server(workspace: Path, scratch: Path, llm: ScriptedLLM) -> LspConnection:
    (workspace / ".pi" / "sessions").mkdir(parents=True)
    connection = await LspConnection.start(isolated_environment(scratch / "home"), scratch / "server.log")
    # A retried turn would be timed as one; the benchmark wants to see the failure instead.
    options = {"model": "openai/scripted", "apiBase": llm.base_url, "thinkingLevel": "off", "retry": {"enabled": False}}
    initialize = initialize_message(workspace, options)
    await connection.request("initialize", initialize["params"])
    connection.notify("initialized")
    return connection


async def warm_up(connection: LspConnection, llm: ScriptedLLM) -> float:
    """One small turn, so litellm's import (seconds, in the background) is not measured later."""
    start = time.perf_counter()
    llm.enqueue(replies.text("warm"), replies.text("warm"))
    await connection.request("pi/newSession", {})
    await connection.request("pi/prompt", {"text": "warm up"})
    await connection.request("pi/prompt", {"text": "warm up again"})
    return time.perf_counter() - start


# ------------------------------------------------------------------------------- (b) CPU per delta


async def timed_prompt(connection: LspConnection, text: str) -> dict[str, float]:
    """Wall time, server CPU time and notifications received for one prompt."""
    cpu_before, notifications_before = process_cpu_seconds(connection.pid), connection.notifications
    start = time.perf_counter()
    result = await connection.request("pi/prompt", {"text": text})
    wall = time.perf_counter() - start
    if result["stopReason"] != "stop":
        raise RuntimeError(f"the benchmark turn failed: {result.get('errorMessage')}")
    return {
        "wall": wall,
        "cpu": process_cpu_seconds(connection.pid) - cpu_before,
        "notifications": connection.notifications - notifications_before,
    }


def many_small_chunks(count: int) -> Reply:
    """A streamed answer of ``count`` distinct word-sized chunks.

    Distinct, because litellm fails a stream that repeats the same chunk (over 2 characters) 100
    times in a row, taking it for a model stuck in a loop.
    """
    return Reply(deltas=({"role": "assistant"}, *({"content": f" w{index}"} for index in range(count))))


async def measure_streaming(connection: LspConnection, llm: ScriptedLLM, chunks: int, repeats: int) -> dict[str, Any]:
    """A many-chunk turn next to a one-chunk turn (fresh sessions), so the turn's fixed cost can be told apart."""
    many, one = [], []
    for _ in range(repeats):
        await connection.request("pi/newSession", {})
        llm.enqueue(many_small_chunks(chunks))
        many.append(await timed_prompt(connection, "stream"))
        await connection.request("pi/newSession", {})
        llm.enqueue(many_small_chunks(1))
        one.append(await timed_prompt(connection, "stream"))
    return {"chunks": chunks, "many": many, "one": one}


# -------------------------------------------------------------------- (c) turns on a 10k session


def generate_big_session(workspace: Path, entries: int) -> Path:
    path = workspace / ".pi" / "sessions" / f"bench-{entries}.jsonl"
    subprocess.run([sys.executable, str(ROOT / "bench" / "generate_session.py"), str(path), str(entries)],
                   check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return path


async def measure_turns(connection: LspConnection, llm: TimedScriptedLLM, workspace: Path, turns: int) -> dict[str, Any]:
    """``turns`` one-line turns on a fresh session, then on the 10k-entry one."""
    await connection.request("pi/newSession", {})
    small = await _short_turns(connection, llm, turns)
    path = generate_big_session(workspace, SESSION_ENTRIES)
    start = time.perf_counter()
    await connection.request("pi/openSession", {"path": str(path)})
    open_seconds = time.perf_counter() - start
    big = await _short_turns(connection, llm, turns)
    return {"small": small, "big": big, "openSeconds": open_seconds, "sizeMb": path.stat().st_size / 1e6}


async def _short_turns(connection: LspConnection, llm: TimedScriptedLLM, turns: int) -> list[dict[str, float]]:
    results = []
    for index in range(turns):
        llm.enqueue(replies.text("ok", chunks=1))
        handled_before = len(llm.handling_seconds)
        figures = await timed_prompt(connection, f"short question {index}")
        figures["model"] = sum(llm.handling_seconds[handled_before:])
        figures["requestBytes"] = len(json.dumps(llm.requests[-1]))
        results.append(figures)
    return results


# ----------------------------------------------------------------------------------------- running


async def measure_server(scratch: Path, chunks: int, stream_repeats: int, turns: int) -> dict[str, Any]:
    async with TimedScriptedLLM() as llm:
        workspace = scratch / "workspace"
        connection = await start_server(workspace, scratch, llm)
        try:
            warm_up_seconds = await warm_up(connection, llm)
            streaming = await measure_streaming(connection, llm, chunks, stream_repeats)
            turn_figures = await measure_turns(connection, llm, workspace, turns)
        finally:
            await connection.close()
    return {"warmUpSeconds": warm_up_seconds, "streaming": streaming, "turns": turn_figures}


def median_of(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def print_start_up(figures: dict[str, Any]) -> None:
    ours, pis = figures["ours"], figures["pi"]
    our_median = statistics.median(ours) * 1000
    print("\n(a) start-up: process start -> first answer")
    print(f"  {'':44} {'median':>10} {'min':>10} {'max':>10} {'runs':>6}")
    _row("pi-lsp: initialize response (ms)", [value * 1000 for value in ours])
    if pis:
        _row("pi 0.84.2 --mode rpc: get_state answer (ms)", [value * 1000 for value in pis])
        print(f"  pi / pi-lsp: {statistics.median(pis) * 1000 / our_median:.1f}x  (goal for pi-lsp: < 150 ms)")
    else:
        print("  pi 0.84.2 is not installed (make install-reference): no comparison")


def _row(label: str, values: list[float]) -> None:
    print(f"  {label:44} {statistics.median(values):>10.1f} {min(values):>10.1f} {max(values):>10.1f} {len(values):>6}")


def print_streaming(figures: dict[str, Any]) -> None:
    chunks, many, one = figures["chunks"], figures["many"], figures["one"]
    cpu_many, cpu_one = median_of(many, "cpu"), median_of(one, "cpu")
    wall_many = median_of(many, "wall")
    notifications = median_of(many, "notifications")
    print(f"\n(b) streaming: one prompt, a scripted reply of {chunks:,} text chunks (median of {len(many)})")
    print(f"  server CPU for the whole turn                     {cpu_many * 1000:10.0f} ms")
    print(f"  server CPU for the same turn with 1 chunk         {cpu_one * 1000:10.0f} ms")
    print(f"  server CPU per delta, whole turn / chunks         {cpu_many / chunks * 1e6:10.1f} us   (goal < 50 us)")
    print(f"  server CPU per delta, marginal                    {(cpu_many - cpu_one) / (chunks - 1) * 1e6:10.1f} us")
    print(f"  turn wall time                                    {wall_many * 1000:10.0f} ms")
    print(f"  pi/event notifications received                   {notifications:10.0f}")
    print(f"  pi/event notifications per second                 {notifications / wall_many:10.1f}")


def print_turns(figures: dict[str, Any]) -> None:
    print(f"\n(c) short turns (scripted reply: one short text, no delay), median of {len(figures['big'])}")
    print(f"  {SESSION_ENTRIES:,}-entry session: {figures['sizeMb']:.1f} MB, pi/openSession "
          f"{figures['openSeconds'] * 1000:.0f} ms")
    print(f"  {'':40} {'new session':>12} {f'{SESSION_ENTRIES // 1000}k entries':>12}")
    for label, key, scale in (("turn wall time (ms)", "wall", 1000), ("scripted model's own time (ms)", "model", 1000),
                              ("server CPU per turn (ms)", "cpu", 1000), ("request to the model (KB)", "requestBytes", 1 / 1000)):
        print(f"  {label:40} {median_of(figures['small'], key) * scale:>12.1f} {median_of(figures['big'], key) * scale:>12.1f}")
    overhead = [run["wall"] - run["model"] for run in figures["big"]]
    small_overhead = [run["wall"] - run["model"] for run in figures["small"]]
    print(f"  {'turn minus the model (ms)':40} {statistics.median(small_overhead) * 1000:>12.1f} "
          f"{statistics.median(overhead) * 1000:>12.1f}   (goal < 5 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke test)")
    parser.add_argument("--chunks", type=int, default=5_000, help="text chunks of the streamed reply in (b)")
    arguments = parser.parse_args()
    runs, pi_runs, stream_repeats, turns = (5, 3, 1, 5) if arguments.quick else (20, 10, 3, 20)
    scratch = Path(tempfile.mkdtemp(prefix="pi-lsp-server-bench-"))
    try:
        started = time.perf_counter()
        print(f"pi-lsp server benchmark ({sys.executable} -m pi_lsp over stdio, a minimal JSON-RPC client)")
        print_start_up(measure_start_up(scratch, runs, pi_runs))
        server = asyncio.run(measure_server(scratch, arguments.chunks, stream_repeats, turns))
        print(f"\n(server warm-up, litellm's import included: {server['warmUpSeconds']:.1f} s)")
        print_streaming(server["streaming"])
        print_turns(server["turns"])
        print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
