"""pi-lsp next to pi 0.84.2, in one run, on the same scripted OpenAI-compatible stream.

Both agents get the same scratch HOME with one ``models.json`` custom provider (``api:
"openai-completions"``, pointing at the scripted server in this process) and one
``settings.json`` (retries and automatic compaction off, so that a turn is timed alone). pi-lsp
is ``python -m pi_lsp`` spoken to over stdio in bare JSON-RPC frames; pi is ``cli.js --mode rpc``
spoken to over its JSON lines. Printed, each for both and with the ratio pi-lsp / pi:

1. cold start: process spawn → the first request reaching the model (``initialize`` +
   ``pi/prompt`` against pi's ``prompt`` sent at once);
2. CPU per streamed delta: the server's CPU time (utime + stime from /proc) for a reply of
   ``--deltas`` text chunks sent at once, after a warm-up turn, divided by the chunks;
3. per-turn overhead: the median wall time of a one-chunk turn minus the scripted model's own
   time, on a new session and on a 10k-entry one, with both agents running and taking turns
   (one turn of each, the order swapped every round), so that both meet the same load; and the
   server's mean CPU time per turn;
4. resident memory (VmRSS): idle after the first turn, and with a ``--big-entries`` session
   (100k by default) open, both agents holding theirs at the same time;
5. (pi-lsp only) spawn → ``initialize`` answered; and with ``--shared`` (``PI_LSP_SHARED=1``),
   the same for a later start (a new editor window) once the shared server runs, with the goal
   of 300 ms;
6. the provider matrix (``provider_matrix.py``): cold start, CPU per delta and idle memory on
   the configurations users have (an ``OPENAI_BASE_URL`` server, ``openai/gpt-5-mini``,
   Anthropic, OpenRouter, a ``models.json`` provider, Gemini, Groq), each agent configured as its
   users configure it, against the scripted server speaking that configuration's wire API.

Asserts nothing; ``--quick`` runs fewer repetitions; ``--only`` measures one part alone.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server_common import (
    NODE,
    PI_CLI,
    SERVER_COMMAND,
    TimedScriptedLLM,
    bench_environment,
    compile_bytecode,
    many_small_chunks,
    process_cpu_seconds,
    replies,
)
from server_turns import generate_big_session

from tests.reliability.raw_lsp import RawLsp

PROVIDER, MODEL_ID = "scripted", "scripted"
TURN_TIMEOUT = 300.0


class ArrivalsLLM(TimedScriptedLLM):
    """The scripted model, also noting when each request arrived (``time.perf_counter``)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []

    async def _chat_completions(self, request):  # type: ignore[override]
        self.arrivals.append(time.perf_counter())
        return await super()._chat_completions(request)


def write_agent_files(
    home: Path,
    base_url: str,
    *,
    provider: str = PROVIDER,
    model_id: str = MODEL_ID,
    api: str = "openai-completions",
    context_window: int = 100_000_000,
    api_key: str = "no-key",
) -> None:
    """pi's models.json and settings.json, read by both agents (``PI_CODING_AGENT_DIR``)."""
    agent = home / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    model = {"id": model_id, "contextWindow": context_window, "maxTokens": 4096}
    provider_entry = {"baseUrl": base_url, "api": api, "apiKey": api_key, "models": [model]}
    (agent / "models.json").write_text(json.dumps({"providers": {provider: provider_entry}}))
    settings = {
        "defaultProvider": provider,
        "defaultModel": model_id,
        "retry": {"enabled": False},
        "compaction": {"enabled": False},
    }
    (agent / "settings.json").write_text(json.dumps(settings))


def resident_mb(pid: int) -> float:
    for status_line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if status_line.startswith("VmRSS:"):
            return int(status_line.split()[1]) / 1024
    return float("nan")


# ------------------------------------------------------------------------------------ the agents


@dataclass
class Agent:
    """What a benchmark does with either agent."""

    name: str
    pid: int = 0
    spawned_at: float = 0.0
    last_open_seconds: float = 0.0

    async def start(self, workspace: Path, environment: dict[str, str]) -> None: ...
    async def prompt(self, text: str) -> None: ...
    async def send_prompt(self, text: str) -> asyncio.Future: ...
    async def open_session(self, path: Path) -> None: ...
    async def new_session(self) -> None: ...
    async def stop(self) -> None: ...


@dataclass
class PiLsp(Agent):
    """pi-lsp over stdio, spoken to in bare JSON-RPC frames (``RawLsp``), as pi is spoken to in
    bare JSON lines: neither agent's figures carry a client library's own work (pygls's client
    spent about half a millisecond of each turn building and parsing its messages)."""

    name: str = "pi-lsp"
    connection: RawLsp | None = None
    initialized_at: float = 0.0
    _ids: Iterator[int] = field(default_factory=itertools.count)

    async def start(self, workspace: Path, environment: dict[str, str]) -> None:
        self.spawned_at = time.perf_counter()
        log_file = str(workspace.parent / "pi-lsp.log")
        self.connection = await RawLsp.start([*SERVER_COMMAND, "--log-file", log_file], environment)
        self.pid = self.connection.process.pid
        root = workspace.as_uri()
        await self.request("initialize", {"processId": None, "rootUri": root, "capabilities": {}})
        self.connection.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        self.initialized_at = time.perf_counter()

    async def request(self, method: str, params: Any) -> Any:
        assert self.connection is not None
        answer = await self.connection.request(next(self._ids), method, params, TURN_TIMEOUT)
        if "error" in answer:
            raise RuntimeError(f"pi-lsp's {method} failed: {answer['error']}")
        return answer["result"]

    async def send_prompt(self, text: str) -> asyncio.Future:
        return asyncio.ensure_future(self.prompt(text))

    async def prompt(self, text: str) -> None:
        result = await self.request("pi/prompt", {"text": text})
        if result["stopReason"] != "stop":
            raise RuntimeError(f"pi-lsp's turn failed: {result.get('errorMessage')}")

    async def open_session(self, path: Path) -> None:
        start = time.perf_counter()
        await self.request("pi/openSession", {"path": str(path)})
        self.last_open_seconds = time.perf_counter() - start
        await self.request("pi/setModel", {"model": f"{PROVIDER}/{MODEL_ID}"})

    async def new_session(self) -> None:
        await self.request("pi/newSession", {})

    async def stop(self) -> None:
        if self.connection is None:
            return
        process = self.connection.process
        try:
            await self.request("shutdown", None)
            self.connection.send({"jsonrpc": "2.0", "method": "exit"})
            await asyncio.wait_for(process.wait(), 10)
        except (TimeoutError, ConnectionError, RuntimeError):
            process.kill()
            await process.wait()


@dataclass
class Pi(Agent):
    """pi 0.84.2's RPC mode: JSON commands on stdin, responses and events on stdout."""

    name: str = "pi 0.84.2"
    process: asyncio.subprocess.Process | None = None
    _responses: dict[str, asyncio.Future] = field(default_factory=dict)
    _turn_ends: asyncio.Queue = field(default_factory=asyncio.Queue)
    _reader: asyncio.Task | None = None
    _ids: int = 0

    async def start(self, workspace: Path, environment: dict[str, str]) -> None:
        self.spawned_at = time.perf_counter()
        self.process = await asyncio.create_subprocess_exec(
            str(NODE),
            str(PI_CLI),
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

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        async for output_line in self.process.stdout:
            message = json.loads(output_line)
            kind = message.get("type")
            if kind == "response" and message.get("id") in self._responses:
                self._responses.pop(message["id"]).set_result(message)
            elif kind == "agent_end":
                self._turn_ends.put_nowait(message)

    async def command(self, command: dict[str, Any]) -> dict[str, Any]:
        self._ids += 1
        identifier = f"bench-{self._ids}"
        answer = asyncio.get_running_loop().create_future()
        self._responses[identifier] = answer
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(json.dumps({**command, "id": identifier}).encode() + b"\n")
        await self.process.stdin.drain()
        response = await asyncio.wait_for(answer, TURN_TIMEOUT)
        if not response.get("success"):
            raise RuntimeError(f"pi's {command['type']} failed: {response}")
        return response

    async def send_prompt(self, text: str) -> asyncio.Future:
        return asyncio.ensure_future(self.prompt(text))

    async def prompt(self, text: str) -> None:
        await self.command({"type": "prompt", "message": text})
        end = await asyncio.wait_for(self._turn_ends.get(), TURN_TIMEOUT)
        last = (end.get("messages") or [{}])[-1]
        if last.get("stopReason") not in (None, "stop"):
            raise RuntimeError(f"pi's turn failed: {last.get('errorMessage')}")

    async def open_session(self, path: Path) -> None:
        start = time.perf_counter()
        await self.command({"type": "switch_session", "sessionPath": str(path)})
        self.last_open_seconds = time.perf_counter() - start
        await self.command({"type": "set_model", "provider": PROVIDER, "modelId": MODEL_ID})

    async def new_session(self) -> None:
        await self.command({"type": "new_session"})

    async def stop(self) -> None:
        if self.process is None:
            return
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        if self._reader is not None:
            self._reader.cancel()


def agents() -> list[type[Agent]]:
    return [PiLsp, Pi]


# ------------------------------------------------------------------------------------ the figures


@dataclass
class Setup:
    scratch: Path
    llm: ArrivalsLLM
    environment: dict[str, str]

    def workspace(self, name: str) -> Path:
        path = self.scratch / name
        (path / ".pi" / "sessions").mkdir(parents=True, exist_ok=True)
        return path


async def cold_start(setup: Setup, kind: type[Agent], run: int) -> dict[str, float]:
    """Spawn → first request at the model, and (pi-lsp) spawn → initialize answered."""
    agent = kind()
    setup.llm.enqueue(replies.text("ok"))
    arrivals = len(setup.llm.arrivals)
    await agent.start(setup.workspace(f"cold-{kind.__name__}-{run}"), setup.environment)
    turn = await agent.send_prompt("hello")
    await turn
    figures = {"first_request": setup.llm.arrivals[arrivals] - agent.spawned_at}
    if isinstance(agent, PiLsp):
        figures["initialize"] = agent.initialized_at - agent.spawned_at
    await agent.stop()
    return figures


async def shared_starts(setup: Setup, runs: int) -> dict[str, float]:
    """``pi-lsp --shared``: spawn → ``initialize`` answered for a later start (a new editor
    window), once a first start has started the shared server; and that first start."""
    runtime = setup.scratch / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    environment = {
        **setup.environment,
        "XDG_RUNTIME_DIR": str(runtime),
        "PI_LSP_SHARED": "1",
        "PI_LSP_SHARED_IDLE_SECONDS": "5",  # gone soon after the benchmark
    }
    shared = Setup(setup.scratch, setup.llm, environment)
    first = await cold_start(shared, PiLsp, 1000)
    later = [(await cold_start(shared, PiLsp, 1001 + run))["initialize"] for run in range(runs)]
    return {
        "shared_first_initialize_ms": first["initialize"] * 1000,
        "shared_later_initialize_ms": statistics.median(later) * 1000,
    }


async def warm_agent(setup: Setup, kind: type[Agent], name: str) -> Agent:
    agent = kind()
    await agent.start(setup.workspace(f"{name}-{kind.__name__}"), setup.environment)
    for text in ("warm up", "warm up again"):
        setup.llm.enqueue(replies.text("warm"))
        await agent.prompt(text)
    return agent


async def streaming_and_memory(setup: Setup, kind: type[Agent], deltas: int) -> dict[str, float]:
    """RSS idle after the first turns, then the CPU of a ``deltas``-chunk turn."""
    agent = await warm_agent(setup, kind, "stream")
    await asyncio.sleep(1.0)
    figures = {"idle_rss_mb": resident_mb(agent.pid)}
    setup.llm.enqueue(many_small_chunks(deltas))
    cpu_before = process_cpu_seconds(agent.pid)
    await agent.prompt("stream")
    figures["cpu_per_delta_us"] = (process_cpu_seconds(agent.pid) - cpu_before) / deltas * 1e6
    await agent.stop()
    return figures


async def timed_turn(setup: Setup, agent: Agent, text: str) -> tuple[float, float]:
    """One one-chunk turn: its wall seconds beyond the scripted model's own time, and the
    agent's CPU seconds during it (utime + stime, in 10 ms ticks: only a sum means much)."""
    setup.llm.enqueue(replies.text("ok", chunks=1))
    handled = len(setup.llm.handling_seconds)
    cpu_before = process_cpu_seconds(agent.pid)
    start = time.perf_counter()
    await agent.prompt(text)
    wall = time.perf_counter() - start
    cpu = process_cpu_seconds(agent.pid) - cpu_before
    return wall - sum(setup.llm.handling_seconds[handled:]), cpu


async def alternating_turns(
    setup: Setup, running: dict[str, Agent], turns: int, name: str
) -> dict[str, dict[str, float]]:
    """``turns`` turns of each agent, one of each in turn (the order swapped every round), so
    both see the same load: the median overhead in ms and the mean CPU per turn in ms."""
    overheads: dict[str, list[float]] = {kind: [] for kind in running}
    cpu: dict[str, float] = dict.fromkeys(running, 0.0)
    order = list(running)
    for index in range(turns):
        for kind in order if index % 2 == 0 else reversed(order):
            overhead, turn_cpu = await timed_turn(setup, running[kind], f"short question {index}")
            overheads[kind].append(overhead)
            cpu[kind] += turn_cpu
    return {
        kind: {
            f"turn_{name}_ms": statistics.median(overheads[kind]) * 1000,
            f"turn_{name}_cpu_ms": cpu[kind] / turns * 1000,
        }
        for kind in running
    }


async def turns_and_sessions(
    setup: Setup, turns: int, sessions: dict[str, Path]
) -> dict[str, dict[str, float]]:
    """Per-turn overhead on a new session and on the 10k-entry one, both agents running side by
    side and taking turns; then each agent's memory with the big session open."""
    running: dict[str, Agent] = {}
    figures: dict[str, dict[str, float]] = {kind.__name__: {} for kind in agents()}
    try:
        for kind in agents():
            running[kind.__name__] = await warm_agent(setup, kind, "turns")
        copies = {}
        for kind, agent in running.items():
            # pi-lsp opens only sessions inside its session directory: each gets its own copies.
            workspace = setup.workspace(f"turns-{kind}")
            copies[kind] = {size: copy_session(path, workspace) for size, path in sessions.items()}
            await agent.new_session()
        for kind, numbers in (await alternating_turns(setup, running, turns, "new")).items():
            figures[kind].update(numbers)
        for kind, agent in running.items():
            await agent.open_session(copies[kind]["10k"])
        for kind, numbers in (await alternating_turns(setup, running, turns, "10k")).items():
            figures[kind].update(numbers)
        for kind, agent in running.items():
            await agent.open_session(copies[kind]["big"])
            figures[kind]["big_open_ms"] = agent.last_open_seconds * 1000
        await asyncio.sleep(1.0)
        for kind, agent in running.items():
            figures[kind]["big_session_rss_mb"] = resident_mb(agent.pid)
    finally:
        for agent in running.values():
            await agent.stop()
    return figures


def copy_session(path: Path, workspace: Path) -> Path:
    """A copy of the session ``path`` in ``workspace``'s session directory, its header's ``cwd``
    the workspace (pi refuses a session whose working directory does not exist)."""
    copy = workspace / ".pi" / "sessions" / path.name
    with path.open("rb") as source, copy.open("wb") as target:
        header = json.loads(source.readline())
        target.write(json.dumps({**header, "cwd": str(workspace)}).encode() + b"\n")
        shutil.copyfileobj(source, target)
    return copy


@dataclass
class Options:
    quick: bool
    deltas: int
    big_entries: int
    only: str | None


async def measure(scratch: Path, options: Options) -> dict[str, dict[str, float]]:
    (scratch / ".pi" / "sessions").mkdir(parents=True)
    results: dict[str, dict[str, float]] = {kind.__name__: {} for kind in agents()}
    async with ArrivalsLLM() as llm:
        home = scratch / "home"
        write_agent_files(home, llm.base_url)
        setup = Setup(scratch, llm, bench_environment(home))
        if options.only in (None, "starts"):
            await starts(setup, 3 if options.quick else 7, results)
        if options.only in (None, "streaming"):
            for kind in agents():
                results[kind.__name__].update(
                    await streaming_and_memory(setup, kind, options.deltas)
                )
        if options.only in (None, "turns"):
            sessions = {
                "10k": generate_big_session(scratch, 10_000),
                "big": generate_big_session(scratch, options.big_entries),
            }
            turns = 9 if options.quick else 25
            for kind, figures in (await turns_and_sessions(setup, turns, sessions)).items():
                results[kind].update(figures)
    return results


async def starts(setup: Setup, runs: int, results: dict[str, dict[str, float]]) -> None:
    """Cold starts of both agents, interleaved so both see the same load; the shared server's."""
    for kind in agents():  # the first start of each warms the file cache
        await cold_start(setup, kind, -1)
    measured: dict[str, list[dict[str, float]]] = {kind.__name__: [] for kind in agents()}
    for run in range(runs):
        for kind in agents():
            measured[kind.__name__].append(await cold_start(setup, kind, run))
    results["PiLsp"].update(await shared_starts(setup, runs))
    for kind, runs_of_kind in measured.items():
        for key in runs_of_kind[0]:
            results[kind][f"{key}_ms"] = statistics.median(run[key] for run in runs_of_kind) * 1000


ROWS = (
    ("first_request_ms", "spawn -> first request at the model (ms)", "<= 1.0x"),
    ("cpu_per_delta_us", "server CPU per streamed delta (us)", "<= 1.0x"),
    ("turn_new_ms", "per-turn overhead, new session (ms)", "<= 1.0x"),
    ("turn_10k_ms", "per-turn overhead, 10k-entry session (ms)", "<= 1.0x"),
    ("turn_new_cpu_ms", "  server CPU per turn, new session (ms)", ""),
    ("turn_10k_cpu_ms", "  server CPU per turn, 10k-entry session (ms)", ""),
    ("idle_rss_mb", "resident memory idle after the first turn (MB)", "< 1.0x"),
    ("big_session_rss_mb", "resident memory, big session open (MB)", "< 1.0x"),
    ("big_open_ms", "  opening the big session (ms)", ""),
)


def print_table(results: dict[str, dict[str, float]], options: Options) -> None:
    ours, pis = results["PiLsp"], results["Pi"]
    print(f"\n{'':50} {'pi-lsp':>9} {'pi 0.84.2':>10} {'ratio':>7}  goal")
    for key, row_label, goal in ROWS:
        if key not in ours:
            continue
        label = row_label.replace("big session", f"{options.big_entries // 1000}k-entry session")
        ratio = ours[key] / pis[key] if pis.get(key) else float("nan")
        print(f"{label:50} {ours[key]:>9.1f} {pis[key]:>10.1f} {ratio:>6.2f}x  {goal}")
    if "initialize_ms" in ours:
        print(f"{'pi-lsp: spawn -> initialize answered (ms)':50} {ours['initialize_ms']:>9.1f}")
        print(
            f"{'pi-lsp --shared: later start -> initialize (ms)':50} "
            f"{ours['shared_later_initialize_ms']:>9.1f} {'':>10} {'':>7}  < 300 ms"
        )
        print(
            f"{'  (the first start, which starts the server)':50} "
            f"{ours['shared_first_initialize_ms']:>9.1f}"
        )
    print(
        f"(CPU per delta: a reply of {options.deltas:,} chunks; per turn: the median of "
        f"{9 if options.quick else 25} one-chunk turns of each agent, taken in turns; "
        "ratio = pi-lsp / pi)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke test)")
    parser.add_argument("--deltas", type=int, default=3000, help="chunks of the streamed reply")
    parser.add_argument(
        "--big-entries", type=int, default=100_000, help="entries of the big session (memory)"
    )
    parser.add_argument(
        "--only",
        choices=("starts", "streaming", "turns", "providers"),
        help="measure one part alone",
    )
    arguments = parser.parse_args()
    options = Options(arguments.quick, arguments.deltas, arguments.big_entries, arguments.only)
    started = time.perf_counter()
    with side_by_side_scratch("pi-lsp-side-by-side-", "pi-lsp next to pi 0.84.2") as scratch:
        if options.only != "providers":
            results = asyncio.run(measure(scratch, options))
            print_table(results, options)
        if options.only in (None, "providers"):
            from provider_matrix import measure_matrix, print_matrix

            runs = 3 if options.quick else 5
            matrix = asyncio.run(measure_matrix(scratch, runs, options.deltas))
            print_matrix(matrix, runs, options.deltas)
    print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")


@contextmanager
def side_by_side_scratch(prefix: str, title: str) -> Iterator[Path]:
    """A scratch directory for a run next to pi (removed after it), once pi 0.84.2 is known to be
    installed and pi-lsp's bytecode is compiled; prints ``title`` with the date and the machine."""
    if not (NODE.exists() and PI_CLI.exists()):
        sys.exit("pi 0.84.2 is not installed: make install-reference")
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    compile_bytecode()
    try:
        print(
            f"{title}, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, "
            f"{_memory_gb():.0f} GB, load average {os.getloadavg()[0]:.1f}"
        )
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _memory_gb() -> float:
    for meminfo_line in Path("/proc/meminfo").read_text().splitlines():
        if meminfo_line.startswith("MemTotal:"):
            return int(meminfo_line.split()[1]) / 1024 / 1024
    return 0.0


if __name__ == "__main__":
    main()
