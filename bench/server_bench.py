"""Language-server benchmark: start-up, CPU per streamed delta, and per-turn overhead on a big
session.

Prints figures, asserts nothing. Everything runs against the real ``python -m pi_lsp`` spoken to
over stdio by a minimal hand-written JSON-RPC client (Content-Length framing), so the figures are
the server's and not a client library's:

(a) start-up: process start → ``initialize`` response, median of fresh processes; next to it the
    floor (the interpreter alone, and importing pygls, the LSP library) and pi 0.84.2's RPC mode
    (``cli.js --mode rpc``) from process start to its answer to a first ``get_state`` command;
(b) server CPU per streamed text delta: a prompt whose scripted reply streams thousands of tiny
    chunks at once, the server's CPU time (utime + stime from /proc) divided by the chunk count, and
    how many ``pi/event`` notifications a second the client received; then a paced stream (a chunk
    every few milliseconds, like a fast real model) for the notification rate the client sees;
(c) per-turn overhead on a 10k-entry session: prompts whose scripted reply is one short text, the
    median turn time minus the scripted model server's own time; and, to tell pi-lsp's share from
    its LLM client's, the same request sent by ``litellm`` alone from this process.

The scripted OpenAI-compatible model runs in this process (``pi_lsp.scripted_llm``). The whole run
takes about two minutes on a small machine; ``--quick`` runs fewer repetitions.
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
import threading
import time
from pathlib import Path
from typing import Any, Self

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(
    0, str(ROOT)
)  # measure this checkout, however (or whether) the package is installed

from pi_lsp.scripted_llm import Reply, ScriptedLLM, replies

NODE = ROOT / "tests" / "reference" / "node_modules" / ".bin" / "node"
PI_CLI = (
    ROOT
    / "tests"
    / "reference"
    / "node_modules"
    / "@earendil-works"
    / "pi-coding-agent"
    / "dist"
    / "cli.js"
)
SERVER_COMMAND = [sys.executable, "-m", "pi_lsp"]
CLOCK_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
SESSION_ENTRIES = 10_000
PACED_CHUNKS, PACED_DELAY_SECONDS = 600, 0.005


# ------------------------------------------------------------------------------------ environments


def isolated_environment(home: Path) -> dict[str, str]:
    """The servers' environment: a scratch HOME, so neither
    the user's settings nor their logs are touched."""
    environment = dict(os.environ)
    environment.update(
        HOME=str(home),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
        PI_CODING_AGENT_DIR=str(home / "agent"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PI_OFFLINE="1",
    )
    for name in (
        "PI_LSP_MODEL",
        "PI_LSP_API_BASE",
        "PI_LSP_API_KEY",
        "PI_CODING_AGENT_SESSION_DIR",
    ):
        environment.pop(name, None)
    return environment


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize_params(workspace: Path, options: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "processId": os.getpid(),
        "rootUri": workspace.as_uri(),
        "capabilities": {},
        "initializationOptions": options or {},
    }


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
    process = subprocess.Popen(
        [*SERVER_COMMAND, "--log-file", str(log_file)],
        cwd=ROOT,
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    process.stdin.write(
        frame(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": initialize_params(workspace),
            }
        )
    )
    process.stdin.flush()
    response = read_framed_response(process.stdout, 1)
    elapsed = time.perf_counter() - start
    if "result" not in response:
        raise RuntimeError(f"initialize failed: {response}")
    process.stdin.write(
        frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        + frame({"jsonrpc": "2.0", "method": "exit"})
    )
    process.stdin.close()
    _wait_or_kill(process)
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


def time_python(code: str, environment: dict[str, str]) -> float:
    """Seconds for ``python -c code``: the floor under any Python server's start-up."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, check=True)
    return time.perf_counter() - start


def _wait_or_kill(process: subprocess.Popen) -> None:
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def measure_start_up(scratch: Path, runs: int, floor_runs: int) -> dict[str, list[float]]:
    """Start-up times in seconds by subject, interleaved so every subject sees the same machine
    load.

    pi-lsp gets ``runs`` runs; the floor and pi, which only frame the figure, the first
    ``floor_runs``.
    """
    workspace = scratch / "start-up"
    workspace.mkdir()
    environment = isolated_environment(scratch / "home")
    log_file = scratch / "start-up.log"
    subjects = {
        "python -c pass (the interpreter)": lambda: time_python("pass", environment),
        "python -c 'import pygls.lsp.server'": lambda: time_python(
            "import pygls.lsp.server", environment
        ),
        "pi-lsp: initialize response": lambda: time_our_start(workspace, environment, log_file),
    }
    time_our_start(workspace, environment, log_file)  # warm the file cache and the bytecode
    times: dict[str, list[float]] = {label: [] for label in subjects}
    times["pi 0.84.2 --mode rpc: get_state answer"] = []
    for index in range(runs):
        for label, measure in subjects.items():
            if label.startswith("pi-lsp") or index < floor_runs:
                times[label].append(measure())
        if NODE.exists() and PI_CLI.exists() and index < floor_runs:
            times["pi 0.84.2 --mode rpc: get_state answer"].append(
                time_pi_start(workspace, environment)
            )
    return times


# ---------------------------------------------------------------------- a long-lived server (b, c)


class LspConnection:
    """A minimal asyncio JSON-RPC client on a server
    subprocess; counts the notifications it receives."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.notifications = 0
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read_forever())

    @classmethod
    async def start(cls, environment: dict[str, str], log_file: Path) -> LspConnection:
        process = await asyncio.create_subprocess_exec(
            *SERVER_COMMAND,
            "--log-file",
            str(log_file),
            cwd=ROOT,
            env=environment,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
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
        except TimeoutError:
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
                self._fail_pending()
                return
            self._dispatch(json.loads(await stdout.readexactly(length)))

    def _fail_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(RuntimeError("the server exited (see its log)"))

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
    """The scripted model, also recording the wall and CPU
    time it spent on each chat-completion request."""

    def __init__(self) -> None:
        super().__init__()
        self.handling_seconds: list[float] = []
        self.handling_cpu_seconds: list[float] = []

    async def _chat_completions(self, request):  # type: ignore[override]
        start, cpu_start = time.perf_counter(), time.thread_time()
        try:
            return await super()._chat_completions(request)
        finally:
            self.handling_seconds.append(time.perf_counter() - start)
            self.handling_cpu_seconds.append(time.thread_time() - cpu_start)


async def start_server(workspace: Path, scratch: Path, llm: ScriptedLLM) -> LspConnection:
    (workspace / ".pi" / "sessions").mkdir(parents=True)
    connection = await LspConnection.start(
        isolated_environment(scratch / "home"), scratch / "server.log"
    )
    # A retried turn would be timed as one, and the 10k-entry session is over the context window, so
    # an automatic compaction would be timed with the turn: both are off, to time turns alone.
    options = {
        "model": "openai/scripted",
        "apiBase": llm.base_url,
        "thinkingLevel": "off",
        "retry": {"enabled": False},
        "compaction": {"enabled": False},
    }
    await connection.request("initialize", initialize_params(workspace, options))
    connection.notify("initialized")
    return connection


async def warm_up(connection: LspConnection, llm: ScriptedLLM) -> float:
    """Two small turns, so litellm's import (seconds, in the
    background) and first calls are not measured later."""
    start = time.perf_counter()
    llm.enqueue(replies.text("warm"), replies.text("warm"))
    await connection.request("pi/newSession", {})
    await connection.request("pi/prompt", {"text": "warm up"})
    await connection.request("pi/prompt", {"text": "warm up again"})
    return time.perf_counter() - start


# ------------------------------------------------------------------------------- (b) CPU per delta


def many_small_chunks(count: int, delay: float = 0.0) -> Reply:
    """A streamed answer of ``count`` distinct word-sized chunks.

    Distinct, because litellm fails a stream that repeats the same chunk (over 2 characters) 100
    times in a row, taking it for a model stuck in a loop.
    """
    deltas = ({"role": "assistant"}, *({"content": f" w{index}"} for index in range(count)))
    return Reply(deltas=deltas, chunk_delay=delay)


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


async def prompt_on_new_session(
    connection: LspConnection, llm: ScriptedLLM, reply: Reply
) -> dict[str, float]:
    await connection.request("pi/newSession", {})
    llm.enqueue(reply)
    return await timed_prompt(connection, "stream")


async def measure_streaming(
    connection: LspConnection, llm: ScriptedLLM, chunks: int, repeats: int
) -> dict[str, Any]:
    """A burst of chunks next to a one-chunk turn (to tell
    the turn's fixed cost apart), then a paced stream."""
    burst, one = [], []
    for _ in range(repeats):
        burst.append(await prompt_on_new_session(connection, llm, many_small_chunks(chunks)))
        one.append(await prompt_on_new_session(connection, llm, many_small_chunks(1)))
    paced = await prompt_on_new_session(
        connection, llm, many_small_chunks(PACED_CHUNKS, PACED_DELAY_SECONDS)
    )
    return {"chunks": chunks, "burst": burst, "one": one, "paced": paced}


# -------------------------------------------------------------------- (c) turns on a 10k session


def generate_big_session(workspace: Path, entries: int) -> Path:
    path = workspace / ".pi" / "sessions" / f"bench-{entries}.jsonl"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generate_session.py"), str(path), str(entries)],
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return path


async def measure_turns(
    connection: LspConnection, llm: TimedScriptedLLM, workspace: Path, turns: int
) -> dict[str, Any]:
    """``turns`` one-line turns on a new session, then on the 10k-entry one."""
    await connection.request("pi/newSession", {})
    small, small_cpu = await _short_turns(connection, llm, turns)
    small_request = llm.requests[-1]
    path = generate_big_session(workspace, SESSION_ENTRIES)
    start = time.perf_counter()
    await connection.request("pi/openSession", {"path": str(path)})
    open_seconds = time.perf_counter() - start
    big, big_cpu = await _short_turns(connection, llm, turns)
    return {
        "small": small,
        "big": big,
        "cpuPerTurn": {"small": small_cpu, "big": big_cpu},
        "openSeconds": open_seconds,
        "sizeMb": path.stat().st_size / 1e6,
        "requests": {"small": small_request, "big": llm.requests[-1]},
    }


async def _short_turns(
    connection: LspConnection, llm: TimedScriptedLLM, turns: int
) -> tuple[list[dict[str, float]], float]:
    """The figures of each turn, and the server's mean CPU seconds per turn.

    The mean comes from the CPU time of all the turns together: /proc counts in 10 ms ticks, too
    coarse for one turn.
    """
    results = []
    cpu_before = process_cpu_seconds(connection.pid)
    for index in range(turns):
        llm.enqueue(replies.text("ok", chunks=1))
        handled_before = len(llm.handling_seconds)
        figures = await timed_prompt(connection, f"short question {index}")
        figures["model"] = sum(llm.handling_seconds[handled_before:])
        figures["requestBytes"] = len(json.dumps(llm.requests[-1]))
        results.append(figures)
    return results, (process_cpu_seconds(connection.pid) - cpu_before) / turns


# ------------------------------------------------------------------ litellm alone, in this process


class LitellmLoader:
    """Imports litellm on a thread (it takes seconds), overlapping the server's own import of it."""

    def __init__(self) -> None:
        self.module = None
        self._thread = threading.Thread(target=self._load, name="litellm-import", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wait(self):
        self._thread.join()
        return self.module

    def _load(self) -> None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        self.module = litellm


class ModelThread:
    """A scripted model on its own thread and event loop,
    so its CPU time can be told apart from litellm's."""

    def __init__(self) -> None:
        self.llm = TimedScriptedLLM()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="scripted-model", daemon=True
        )

    def __enter__(self) -> Self:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.llm.start(), self._loop).result()
        return self

    def __exit__(self, *exc_info: object) -> None:
        asyncio.run_coroutine_threadsafe(self.llm.stop(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()


async def litellm_call(
    litellm, model: ModelThread, reply: Reply, body: dict[str, Any] | None = None
) -> dict[str, float]:
    """Wall and CPU seconds for litellm to send a request (default: a tiny one) and read ``reply``
    to its end.

    CPU is this process's (litellm's background threads included) minus the scripted model's.
    """
    body = body or {"model": "scripted", "messages": [{"role": "user", "content": "stream"}]}
    model.llm.enqueue(reply)
    handled_before = len(model.llm.handling_cpu_seconds)
    wall_start, cpu_start = time.perf_counter(), time.process_time()
    response = await litellm.acompletion(
        model="openai/" + body["model"],
        api_base=model.llm.base_url,
        api_key="no-key",
        messages=body["messages"],
        tools=body.get("tools"),
        stream=True,
        stream_options={"include_usage": True},
        max_retries=0,
    )
    async for _ in response:
        pass
    wall = time.perf_counter() - wall_start
    while (
        len(model.llm.handling_cpu_seconds) == handled_before
    ):  # the model may still be closing its response
        await asyncio.sleep(0.001)
    model_cpu = sum(model.llm.handling_cpu_seconds[handled_before:])
    return {"wall": wall, "cpu": time.process_time() - cpu_start - model_cpu}


async def measure_litellm_alone(
    litellm, chunks: int, repeats: int, requests: dict[str, dict], turns: int
) -> dict[str, Any]:
    """What litellm costs by itself for the replies of (b) and the requests of (c)."""
    with ModelThread() as model:
        for _ in range(3):  # its first calls set things up
            await litellm_call(litellm, model, many_small_chunks(1))
        figures: dict[str, Any] = {
            "burst": [
                await litellm_call(litellm, model, many_small_chunks(chunks))
                for _ in range(repeats)
            ],
            "one": [await litellm_call(litellm, model, many_small_chunks(1)) for _ in range(turns)],
            "paced": await litellm_call(
                litellm, model, many_small_chunks(PACED_CHUNKS, PACED_DELAY_SECONDS)
            ),
        }
        for size, body in requests.items():
            figures[size] = [
                await litellm_call(litellm, model, replies.text("ok", chunks=1), body)
                for _ in range(turns)
            ]
    return figures


# ----------------------------------------------------------------------------------------- running


async def measure_server(
    scratch: Path, chunks: int, stream_repeats: int, turns: int
) -> dict[str, Any]:
    loader = LitellmLoader()
    async with TimedScriptedLLM() as llm:
        workspace = scratch / "workspace"
        connection = await start_server(workspace, scratch, llm)
        loader.start()
        try:
            warm_up_seconds = await warm_up(connection, llm)
            litellm = await asyncio.to_thread(
                loader.wait
            )  # before measuring: its import must not compete
            streaming = await measure_streaming(connection, llm, chunks, stream_repeats)
            turn_figures = await measure_turns(connection, llm, workspace, turns)
        finally:
            await connection.close()
    alone = await measure_litellm_alone(
        litellm, chunks, stream_repeats, turn_figures.pop("requests"), turns
    )
    return {
        "warmUpSeconds": warm_up_seconds,
        "streaming": streaming,
        "turns": turn_figures,
        "litellmAlone": alone,
    }


def median_of(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


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
    ours, pis = (
        times["pi-lsp: initialize response"],
        times["pi 0.84.2 --mode rpc: get_state answer"],
    )
    if pis:
        print(
            f"  pi / pi-lsp: {statistics.median(pis) / statistics.median(ours):.1f}x "
            "(above 1: pi-lsp answers sooner)"
        )
    else:
        print("  pi 0.84.2 is not installed (make install-reference): no comparison")
    print("  goal for pi-lsp: < 150 ms")


def print_streaming(figures: dict[str, Any], alone: dict[str, Any]) -> None:
    chunks, burst, one, paced = (
        figures["chunks"],
        figures["burst"],
        figures["one"],
        figures["paced"],
    )
    cpu_burst, cpu_one, wall_burst = (
        median_of(burst, "cpu"),
        median_of(one, "cpu"),
        median_of(burst, "wall"),
    )
    server_marginal = (cpu_burst - cpu_one) / (chunks - 1)
    alone_marginal = (median_of(alone["burst"], "cpu") - median_of(alone["one"], "cpu")) / (
        chunks - 1
    )
    notifications = median_of(burst, "notifications")
    print(
        f"\n(b) streaming: a scripted reply of {chunks:,} "
        f"text chunks sent at once (median of {len(burst)})"
    )
    _line("server CPU, whole turn (ms)", cpu_burst * 1000)
    _line("server CPU, the same turn with 1 chunk (ms)", cpu_one * 1000)
    _line(
        "server CPU per delta, whole turn / chunks (us)", cpu_burst / chunks * 1e6, "goal < 50 us"
    )
    _line("server CPU per delta, marginal (us)", server_marginal * 1e6)
    _line("litellm alone, same reply, marginal (us)", alone_marginal * 1e6)
    _line("difference: pi-lsp's share, within noise (us)", (server_marginal - alone_marginal) * 1e6)
    _line("turn wall time (ms)", wall_burst * 1000)
    _line("pi/event notifications received", notifications)
    _line("pi/event notifications per second", notifications / wall_burst)
    print(
        f"  paced: {PACED_CHUNKS} chunks, one every "
        f"{PACED_DELAY_SECONDS * 1000:.0f} ms (a fast real model)"
    )
    _line("  turn wall time (ms)", paced["wall"] * 1000)
    _line("  server CPU per delta (us)", paced["cpu"] / PACED_CHUNKS * 1e6)
    _line("  litellm alone, same reply (us)", alone["paced"]["cpu"] / PACED_CHUNKS * 1e6)
    _line(
        "  pi/event notifications per second",
        paced["notifications"] / paced["wall"],
        "deltas coalesced to ~30/s",
    )


def _line(label: str, value: float, note: str = "") -> None:
    print(f"  {label:50} {value:>10.1f}" + (f"   ({note})" if note else ""))


def print_turns(figures: dict[str, Any], alone: dict[str, Any]) -> None:
    small, big = figures["small"], figures["big"]
    print(
        "\n(c) short turns: the scripted reply is one "
        f"short text without delay (median of {len(big)})"
    )
    print(
        f"  {SESSION_ENTRIES:,}-entry session: {figures['sizeMb']:.1f} "
        f"MB, pi/openSession {figures['openSeconds'] * 1000:.0f} ms"
    )
    print(f"  {'':50} {'new session':>12} {f'{SESSION_ENTRIES // 1000}k entries':>12}")
    _turn_row(
        "request sent to the model (KB)",
        median_of(small, "requestBytes") / 1000,
        median_of(big, "requestBytes") / 1000,
    )
    _turn_row("turn wall time (ms)", median_of(small, "wall") * 1000, median_of(big, "wall") * 1000)
    _turn_row(
        "scripted model's own time (ms)",
        median_of(small, "model") * 1000,
        median_of(big, "model") * 1000,
    )
    small_overhead = statistics.median(run["wall"] - run["model"] for run in small)
    big_overhead = statistics.median(run["wall"] - run["model"] for run in big)
    _turn_row(
        "turn minus the model (ms)       goal < 5 ms", small_overhead * 1000, big_overhead * 1000
    )
    server_cpu = figures["cpuPerTurn"]
    alone_cpu = {
        size: statistics.mean(run["cpu"] for run in alone[size]) for size in ("small", "big")
    }
    _turn_row(
        "server CPU per turn, mean (ms)", server_cpu["small"] * 1000, server_cpu["big"] * 1000
    )
    _turn_row(
        "litellm alone, same request: CPU, mean (ms)",
        alone_cpu["small"] * 1000,
        alone_cpu["big"] * 1000,
    )
    _turn_row(
        "difference: pi-lsp's own CPU per turn (ms)",
        (server_cpu["small"] - alone_cpu["small"]) * 1000,
        (server_cpu["big"] - alone_cpu["big"]) * 1000,
    )
    print(
        "  (litellm alone: this process sends the very "
        "request the server sent through litellm.acompletion"
    )
    print(
        "   to a scripted model on another thread and reads "
        "the reply; its CPU is the process's minus the"
    )
    print("   model's.)")


def _turn_row(label: str, small: float, big: float) -> None:
    print(f"  {label:50} {small:>12.1f} {big:>12.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke test)")
    parser.add_argument(
        "--chunks", type=int, default=5_000, help="text chunks of the streamed reply in (b)"
    )
    arguments = parser.parse_args()
    runs, floor_runs, stream_repeats, turns = (5, 3, 1, 5) if arguments.quick else (20, 6, 3, 20)
    scratch = Path(tempfile.mkdtemp(prefix="pi-lsp-server-bench-"))
    try:
        started = time.perf_counter()
        print(
            "pi-lsp server benchmark: python -m pi_lsp over stdio, a minimal JSON-RPC client, "
            f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
        )
        print_start_up(measure_start_up(scratch, runs, floor_runs))
        server = asyncio.run(measure_server(scratch, arguments.chunks, stream_repeats, turns))
        print(f"\n(server warm-up, litellm's import included: {server['warmUpSeconds']:.1f} s)")
        print_streaming(server["streaming"], server["litellmAlone"])
        print_turns(server["turns"], server["litellmAlone"])
        print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
