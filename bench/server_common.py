"""What the server benchmarks share: an isolated environment, a warm server spoken to with pi-lsp's
own client (``pi_lsp.client``), the scripted model timed, server CPU from /proc, and litellm alone
in this process (to tell pi-lsp's share of a turn from its LLM client's).

Not a benchmark itself: ``server_startup.py``, ``server_streaming.py`` and ``server_turns.py`` are
(``server_bench.py`` runs the three).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

ROOT = Path(__file__).resolve().parent.parent
# Measure this checkout, however (or whether) the package is installed.
sys.path.insert(0, str(ROOT))

from lsprotocol import types

from pi_lsp.client import PiClient, isolated_environment
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
SERVER_COMMAND = (sys.executable, "-m", "pi_lsp")
CLOCK_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def bench_environment(home: Path) -> dict[str, str]:
    """The servers' (and pi's) environment: a scratch HOME, so neither the user's settings nor
    their logs are touched, pi offline, and this checkout importable."""
    environment = isolated_environment(home)
    environment["PI_OFFLINE"] = "1"
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), environment.get("PYTHONPATH")])
    )
    return environment


def compile_bytecode() -> None:
    """Compile the checkout's modules, as pip does when it installs the wheel.

    A server started from a checkout under ``PYTHONDONTWRITEBYTECODE`` (as CI and agents often
    set) would otherwise compile every module of pi-lsp from source at each start, about a
    quarter of its cold start, which no installed copy pays. ``__pycache__`` is git-ignored.
    """
    import compileall

    compileall.compile_dir(ROOT / "pi_lsp", quiet=1)


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS_PER_SECOND


class TimedScriptedLLM(ScriptedLLM):
    """The scripted model, also recording the wall and CPU time it spent on each request."""

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


# ---------------------------------------------------------------------------- a warm server


class WarmServer:
    """A pi-lsp server on a scratch workspace, initialized on the scripted model, warmed up by two
    turns (litellm's import, seconds in the background, must not be measured)."""

    def __init__(
        self,
        scratch: Path,
        llm: ScriptedLLM,
        options: dict | None = None,
        capabilities: types.ClientCapabilities | None = None,
    ) -> None:
        self.options = options or {}
        """Initialization options over the benchmark's own."""
        self.capabilities = capabilities
        """The client's capabilities in ``initialize`` (the editor's models, for one)."""
        self.workspace = scratch / "workspace"
        self.scratch = scratch
        self.llm = llm
        self.client = PiClient("pi-lsp-bench", timeout=300)
        self.warm_up_seconds = 0.0

    @property
    def pid(self) -> int:
        assert self.client.process is not None
        return self.client.process.pid

    @property
    def notifications(self) -> int:
        return len(self.client.events.notifications)

    async def __aenter__(self) -> Self:
        (self.workspace / ".pi" / "sessions").mkdir(parents=True)
        await self.client.start_server(
            (*SERVER_COMMAND, "--log-file", str(self.scratch / "server.log")),
            env=bench_environment(self.scratch / "home"),
            cwd=ROOT,
            stderr=asyncio.subprocess.DEVNULL,
        )
        # A retried turn would be timed as one, and a big session is over the context window, so
        # an automatic compaction would be timed with the turn: both are off, to time turns alone.
        options = {
            "model": "openai/scripted",
            "apiBase": self.llm.base_url,
            "thinkingLevel": "off",
            "retry": {"enabled": False},
            "compaction": {"enabled": False},
            "autoName": False,  # one more model request after the first answer, not a turn's
            **self.options,
        }
        await self.client.initialize_workspace(self.workspace, options, self.capabilities)
        start = time.perf_counter()
        self.llm.enqueue(replies.text("warm"), replies.text("warm"))
        await self.client.request("pi/newSession", {})
        await self.client.request("pi/prompt", {"text": "warm up"})
        await self.client.request("pi/prompt", {"text": "warm up again"})
        self.warm_up_seconds = time.perf_counter() - start
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.client.close(timeout=10)

    async def timed_prompt(self, text: str) -> dict[str, float]:
        """Wall time, server CPU time and notifications received for one prompt."""
        cpu_before, notifications_before = process_cpu_seconds(self.pid), self.notifications
        start = time.perf_counter()
        result = await self.client.request("pi/prompt", {"text": text})
        wall = time.perf_counter() - start
        if result["stopReason"] != "stop":
            raise RuntimeError(f"the benchmark turn failed: {result.get('errorMessage')}")
        return {
            "wall": wall,
            "cpu": process_cpu_seconds(self.pid) - cpu_before,
            "notifications": self.notifications - notifications_before,
        }


def many_small_chunks(count: int, delay: float = 0.0) -> Reply:
    """A streamed answer of ``count`` distinct word-sized chunks.

    Distinct, because litellm fails a stream that repeats the same chunk (over 2 characters) 100
    times in a row, taking it for a model stuck in a loop.
    """
    deltas = ({"role": "assistant"}, *({"content": f" w{index}"} for index in range(count)))
    return Reply(deltas=deltas, chunk_delay=delay)


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
    """A scripted model on its own thread and event loop, so its CPU time can be told apart from
    litellm's."""

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
    while len(model.llm.handling_cpu_seconds) == handled_before:  # the model may still be closing
        await asyncio.sleep(0.001)
    model_cpu = sum(model.llm.handling_cpu_seconds[handled_before:])
    return {"wall": wall, "cpu": time.process_time() - cpu_start - model_cpu}


async def warm_litellm(litellm, model: ModelThread) -> None:
    for _ in range(3):  # its first calls set things up
        await litellm_call(litellm, model, many_small_chunks(1))


# ----------------------------------------------------------------------------------------- printing


def median_of(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def line(label: str, value: float, note: str = "") -> None:
    print(f"  {label:50} {value:>10.1f}" + (f"   ({note})" if note else ""))


def run_alone(
    doc: str,
    title: str,
    run: Callable[[Path, argparse.Namespace], None],
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
) -> None:
    """The ``main`` of one server benchmark: ``--quick``, a scratch folder, the header, ``run``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke test)")
    if add_arguments is not None:
        add_arguments(parser)
    arguments = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="pi-lsp-bench-"))
    compile_bytecode()
    try:
        header(title)
        run(scratch, arguments)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def header(title: str) -> None:
    print(
        f"{title}: python -m pi_lsp over stdio, pi-lsp's own client, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
