"""Prompt-caching benchmark: what the same 30-turn session costs through pi-lsp and through pi.

Prints figures, asserts nothing. One fixed session: 30 prompts, each answered after one to three
tool rounds that read a ~1,500-token notes file, so the context grows by ~90k tokens and both
agents compact it on the way (a 64k window, pi's default compaction settings). The model is the
scripted server (``pi_lsp.scripted_llm``) with its prompt-cache simulator, answering from what
each request contains (the next file to read, a summary when asked for one), so both agents get
the same answers however and whenever they compact.

It runs the session

- through pi-lsp (``python -m pi_lsp``, driven by ``pi_lsp.client.PiClient`` over stdio), and
- through pi 0.84.2's RPC mode (``cli.js --mode rpc``), with a ``models.json`` provider pointing
  at the same scripted server and pi-lsp's seven tools (``--tools``),

once with ``api: "anthropic-messages"`` (Anthropic's cache breakpoints, priced as
``anthropic/claude-sonnet-4-5``) and once with ``openai-completions`` (automatic prefix
caching, priced as ``openai/gpt-4o``), and prints for each the requests, the plain input,
cache-read, cache-write and output tokens the simulated provider counted, and their cost from
litellm's price table, with pi-lsp's cost as a ratio of pi's (goal: at most 1). The cost without
caching is printed twice: pi-lsp run again with ``cacheRetention: "none"`` (Anthropic), and for
every run the same tokens priced as if none had been cached.

    .venv/bin/python bench/cache_bench.py [--turns 30] [--api anthropic|openai|both]

The pi runs need pi 0.84.2 (``make install-reference``); without it only pi-lsp runs.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout, however (or whether) it is installed

from pi_lsp import protocol
from pi_lsp.client import SERVER_COMMAND, STREAM_LIMIT, PiClient, isolated_environment
from pi_lsp.llm.config import resolve_model
from pi_lsp.llm.usage import usage_cost
from pi_lsp.scripted_llm import Reply, ScriptedLLM, replies
from pi_lsp.scripted_llm.prompt_cache import CacheUsage, PromptCache

NODE = ROOT / "tests" / "reference" / "node_modules" / ".bin" / "node"
PI_CLI = (
    ROOT / "tests" / "reference" / "node_modules" / "@earendil-works" / "pi-coding-agent"
    / "dist" / "cli.js"
)  # fmt: skip
CONTEXT_WINDOW = 64_000
MAX_OUTPUT_TOKENS = 8192
FILE_CHARACTERS = 6000
MARKER = re.compile(r"turn (\d+) round (\d+) of (\d+)")
PROMPT = re.compile(r"^Turn (\d+):")
SUMMARY_HEADINGS = ("## Goal", "## Original Request")
TOOLS = ("read", "bash", "edit", "write", "grep", "find", "ls")
"""pi-lsp's tools; pi gets the same ones (its default is the first four), so both do the same
work with the same tool definitions in every request."""
SUMMARY = (
    "## Goal\nRead every notes file the user points at and report what it says.\n\n"
    "## Progress\n### Done\n- [x] Read the notes of the earlier turns\n\n"
    "## Next Steps\n1. Read the notes of the next turn\n\n## Critical Context\n- (none)"
)


@attrs.frozen
class Api:
    """One wire API of the comparison: how pi-lsp and pi reach the scripted server, and the
    litellm model whose prices apply."""

    name: str
    pi_api: str
    model_id: str
    litellm_model: str
    simulate_openai_cache: bool

    def pi_base_url(self, server: ScriptedLLM) -> str:
        return server.root_url if self.pi_api == "anthropic-messages" else server.base_url

    def lsp_base_url(self, server: ScriptedLLM) -> str:
        return self.pi_base_url(server)


ANTHROPIC = Api(
    "anthropic-messages", "anthropic-messages", "claude-sonnet-4-5", "anthropic/claude-sonnet-4-5",
    simulate_openai_cache=False,
)  # fmt: skip
OPENAI = Api(
    "openai-completions", "openai-completions", "gpt-4o", "openai/gpt-4o",
    simulate_openai_cache=True,
)  # fmt: skip


# ------------------------------------------------------------------ the session


def rounds_of(turn: int) -> int:
    return 1 + turn % 3


def notes_path(turn: int, step: int) -> str:
    return f"notes/turn{turn:02d}_{step}.md"


def write_workspace(workspace: Path, turns: int) -> None:
    (workspace / "notes").mkdir(parents=True)
    (workspace / "AGENTS.md").write_text("Answer briefly. Quote file names exactly.\n")
    for turn in range(1, turns + 1):
        total = rounds_of(turn)
        for step in range(1, total + 1):
            lines = [f"turn {turn} round {step} of {total}"]
            for line in itertools.count():
                if sum(len(text) + 1 for text in lines) >= FILE_CHARACTERS:
                    break
                lines.append(
                    f"- item {turn}.{step}.{line}: the value of setting_{line % 17} is "
                    f"{(turn * 31 + step * 7 + line) % 1000} (checked by test_{line % 23})"
                )
            (workspace / notes_path(turn, step)).write_text("\n".join(lines) + "\n")


def prompt_text(turn: int) -> str:
    return f"Turn {turn}: read the notes for turn {turn}, step by step, and sum them up."


def last_message_text(body: Mapping[str, Any]) -> str:
    """The text of a request's last message, tool results included, in either wire format."""
    messages = body.get("messages") or []
    if not messages:
        return ""
    return _text(messages[-1].get("content"))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(_text(block.get("content")))
    return "\n".join(parts)


@attrs.define
class Responder:
    """Answers each request from what it asks, and records the kind and size of each answer."""

    kinds: list[str] = attrs.Factory(list)
    outputs: list[int] = attrs.Factory(list)
    _calls: itertools.count = attrs.Factory(itertools.count)

    def __call__(self, body: Mapping[str, Any]) -> Reply:
        text = last_message_text(body)
        kind, reply = self._reply(text)
        self.kinds.append(kind)
        self.outputs.append(_output_tokens(reply))
        return reply

    def _reply(self, text: str) -> tuple[str, Reply]:
        if any(heading in text for heading in SUMMARY_HEADINGS):
            return "summary", replies.text(SUMMARY, chunks=4)
        marker = MARKER.search(text)
        if marker:
            turn, step, total = (int(group) for group in marker.groups())
            if step < total:
                return "turn", self._read(turn, step + 1)
            return "turn", replies.text(
                f"The notes of turn {turn} list {total * 60} settings; all of them were checked "
                "by their tests and none needs a change.",
                chunks=4,
            )
        prompt = PROMPT.search(text)
        if prompt:
            return "turn", self._read(int(prompt.group(1)), 1)
        return "turn", replies.text("Done.")

    def _read(self, turn: int, step: int) -> Reply:
        call_id = f"toolu_{turn:02d}_{step}_{next(self._calls)}"
        return replies.tool_calls(
            [(call_id, "read", {"path": notes_path(turn, step)})],
            text=f"Reading step {step} of the notes for turn {turn}.",
        )


def _output_tokens(reply: Reply) -> int:
    characters = sum(len(json.dumps(delta)) for delta in reply.deltas if "role" not in delta)
    return max(1, -(-characters // 4))


class RecordingCache(PromptCache):
    """The simulator, keeping what it counted for every request."""

    def __init__(self) -> None:
        super().__init__()
        self.usages: list[CacheUsage] = []

    def anthropic_usage(self, body: Mapping[str, Any]) -> CacheUsage:
        usage = super().anthropic_usage(body)
        self.usages.append(usage)
        return usage

    def openai_usage(self, body: Mapping[str, Any]) -> CacheUsage:
        usage = super().openai_usage(body)
        self.usages.append(usage)
        return usage


# ------------------------------------------------------------------ figures


@attrs.define
class Figures:
    label: str
    requests: int = 0
    summaries: int = 0
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0
    output: int = 0
    cost: float = 0.0
    summary_cost: float = 0.0
    uncached_cost: float = 0.0
    seconds: float = 0.0
    reported_cost: float | None = None
    """What the agent itself reports (pi-lsp's ``pi/state``), as a cross-check."""


def figures_of(label: str, api: Api, responder: Responder, cache: RecordingCache) -> Figures:
    model = resolve_model({"model": api.litellm_model}, {})
    assert model is not None
    if len(cache.usages) != len(responder.kinds):
        raise RuntimeError(
            f"{label}: {len(cache.usages)} cache records for {len(responder.kinds)} requests"
        )
    figures = Figures(label)
    for kind, usage, output in zip(responder.kinds, cache.usages, responder.outputs, strict=True):
        record = {
            "input": usage.input_tokens,
            "output": output,
            "cacheRead": usage.cache_read,
            "cacheWrite": usage.cache_write,
            "cacheWrite1h": usage.cache_write_1h,
        }
        cost = usage_cost(record, model)["total"]
        uncached = {"input": usage.prompt_tokens, "output": output, "cacheRead": 0, "cacheWrite": 0}
        figures.requests += 1
        figures.input += usage.input_tokens
        figures.cache_read += usage.cache_read
        figures.cache_write += usage.cache_write
        figures.cache_write_1h += usage.cache_write_1h
        figures.output += output
        figures.cost += cost
        figures.uncached_cost += usage_cost(uncached, model)["total"]
        if kind == "summary":
            figures.summaries += 1
            figures.summary_cost += cost
    return figures


# ------------------------------------------------------------------ pi-lsp


def bench_environment(home: Path, **extra: str) -> dict[str, str]:
    """The shared isolated environment, offline, with no retention given by the environment."""
    environment = isolated_environment(home)
    environment.update(PI_OFFLINE="1", **extra)
    environment.pop("PI_CACHE_RETENTION", None)
    return environment


async def run_pi_lsp(scratch: Path, api: Api, turns: int, retention: str, label: str) -> Figures:
    workspace = scratch / f"lsp-{api.name}-{retention}"
    write_workspace(workspace, turns)
    responder, cache = Responder(), RecordingCache()
    server = ScriptedLLM(simulate_openai_cache=api.simulate_openai_cache, responder=responder)
    server.prompt_cache = cache
    async with server:
        environment = bench_environment(
            scratch / "home-lsp", ANTHROPIC_API_KEY="bench-key", OPENAI_API_KEY="bench-key"
        )
        client = PiClient("pi-lsp-cache-bench", timeout=600)
        client.feature(protocol.RESOURCES_CHANGED)(lambda params: None)  # the workspace's files
        log_file = scratch / f"{workspace.name}.log"
        await client.start_server(
            (*SERVER_COMMAND, "--log-file", str(log_file)),
            env=environment,
            cwd=ROOT,
            stderr=asyncio.subprocess.DEVNULL,
        )
        options = {
            "model": api.litellm_model,
            "apiBase": api.lsp_base_url(server),
            "contextWindow": CONTEXT_WINDOW,
            "tokenizer": "chars4",  # pi's estimate, so both cut at the same places
            "autoName": False,  # pi names nothing; the requests compared are the turns'
            "thinkingLevel": "off",  # as pi's scripted model, which declares no reasoning
            "cacheRetention": retention,
            "retry": {"enabled": False},
        }
        start = time.perf_counter()
        try:
            await client.initialize_workspace(workspace, options)
            await client.request("pi/newSession", {})
            for turn in range(1, turns + 1):
                result = await client.request("pi/prompt", {"text": prompt_text(turn)})
                if result["stopReason"] != "stop":
                    raise RuntimeError(f"pi-lsp turn {turn}: {result.get('errorMessage')}")
            state = await client.request("pi/state", {})
        finally:
            await client.close()
    figures = figures_of(label, api, responder, cache)
    figures.seconds = time.perf_counter() - start
    figures.reported_cost = state["cost"]["total"]
    return figures


# ------------------------------------------------------------------ pi


def write_pi_agent_dir(agent_dir: Path, api: Api, server: ScriptedLLM) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    model = resolve_model({"model": api.litellm_model}, {})
    assert model is not None
    prices = {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0}
    from pi_lsp.llm.models import model_info

    info = model_info(model) or {}
    keys = {
        "input": "input_cost_per_token",
        "output": "output_cost_per_token",
        "cacheRead": "cache_read_input_token_cost",
        "cacheWrite": "cache_creation_input_token_cost",
    }
    for field, key in keys.items():
        prices[field] = float(info.get(key) or 0) * 1_000_000
    provider = {
        "baseUrl": api.pi_base_url(server),
        "api": api.pi_api,
        "apiKey": "bench-key",
        "models": [
            {
                "id": api.model_id,
                "name": f"{api.model_id} (scripted)",
                "reasoning": False,
                "input": ["text"],
                "contextWindow": CONTEXT_WINDOW,
                "maxTokens": MAX_OUTPUT_TOKENS,
                "cost": prices,
            }
        ],
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"bench": provider}}))
    settings = {"defaultProvider": "bench", "defaultModel": api.model_id}
    (agent_dir / "settings.json").write_text(json.dumps(settings))


async def run_pi(scratch: Path, api: Api, turns: int) -> Figures:
    workspace = scratch / f"pi-{api.name}"
    write_workspace(workspace, turns)
    responder, cache = Responder(), RecordingCache()
    server = ScriptedLLM(simulate_openai_cache=api.simulate_openai_cache, responder=responder)
    server.prompt_cache = cache
    home = scratch / f"home-pi-{api.name}"
    async with server:
        write_pi_agent_dir(home / "agent", api, server)
        process = await asyncio.create_subprocess_exec(
            str(NODE), str(PI_CLI), "--mode", "rpc", "--provider", "bench", "--model",
            api.model_id, "--thinking", "off", "--tools", ",".join(TOOLS),
            cwd=workspace, env=bench_environment(home), limit=STREAM_LIMIT,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        start = time.perf_counter()
        try:
            for turn in range(1, turns + 1):
                await _pi_prompt(process, turn)
        finally:
            assert process.stdin is not None
            process.stdin.close()  # pi's RPC mode ends at the end of its input
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()
    figures = figures_of("pi 0.84.2", api, responder, cache)
    figures.seconds = time.perf_counter() - start
    return figures


async def _pi_prompt(process: asyncio.subprocess.Process, turn: int) -> None:
    """Send one prompt and wait until pi has settled (answered, and compacted if it does)."""
    assert process.stdin is not None and process.stdout is not None
    command = {"id": f"turn-{turn}", "type": "prompt", "message": prompt_text(turn)}
    process.stdin.write((json.dumps(command) + "\n").encode())
    await process.stdin.drain()
    failure = None
    while True:
        line = await asyncio.wait_for(process.stdout.readline(), 600)
        if not line:
            stderr = await process.stderr.read() if process.stderr else b""
            raise RuntimeError(f"pi exited during turn {turn}: {stderr.decode()[-2000:]}")
        event = json.loads(line)
        kind = event.get("type")
        if kind == "response" and not event.get("success"):
            raise RuntimeError(f"pi refused turn {turn}: {event.get('error')}")
        if kind == "message_end" and (event.get("message") or {}).get("stopReason") == "error":
            failure = event["message"].get("errorMessage")
        if kind == "agent_settled":
            break
    if failure:
        raise RuntimeError(f"pi turn {turn} failed: {failure}")


# ------------------------------------------------------------------ report


def print_table(api: Api, rows: list[Figures], turns: int) -> None:
    print(f"\n{api.name}: {turns} turns, priced as {api.litellm_model} (litellm's table)")
    header = (
        f"  {'':24} {'requests':>8} {'summaries':>9} {'input':>9} {'cache read':>11} "
        f"{'cache write':>11} {'output':>7} {'cost $':>8} {'of it summaries':>15} "
        f"{'no-cache $':>10}"
    )
    print(header)
    for row in rows:
        print(
            f"  {row.label:24} {row.requests:>8} {row.summaries:>9} {row.input:>9,} "
            f"{row.cache_read:>11,} {row.cache_write:>11,} {row.output:>7,} {row.cost:>8.3f} "
            f"{row.summary_cost:>15.3f} {row.uncached_cost:>10.3f}"
        )
    by_label = {row.label: row for row in rows}
    ours, pis = by_label.get("pi-lsp"), by_label.get("pi 0.84.2")
    if ours and pis:
        print(
            f"  cost pi-lsp / pi: {ours.cost / pis.cost:.2f} (goal: at most 1.00); "
            f"summaries: {ours.summary_cost:.3f} vs {pis.summary_cost:.3f} $"
        )
    if ours:
        print(
            f"  pi-lsp with caching saves {1 - ours.cost / ours.uncached_cost:.0%} of what the "
            "same tokens cost uncached"
        )
        if ours.reported_cost is not None:
            print(f"  pi-lsp's own pi/state cost: {ours.reported_cost:.3f} $")
    off = by_label.get("pi-lsp, caching off")
    if ours and off:
        print(f"  cacheRetention none costs {off.cost / ours.cost:.1f}x what caching does")


async def run(turns: int, apis: tuple[Api, ...]) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="pi-lsp-cache-bench-"))
    have_pi = NODE.exists() and PI_CLI.exists()
    try:
        for api in apis:
            rows = [await run_pi_lsp(scratch, api, turns, "short", "pi-lsp")]
            if api is ANTHROPIC:
                rows.append(await run_pi_lsp(scratch, api, turns, "none", "pi-lsp, caching off"))
            if have_pi:
                rows.append(await run_pi(scratch, api, turns))
            print_table(api, rows, turns)
        if not have_pi:
            print("\npi 0.84.2 is not installed (make install-reference): no comparison")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30, help="prompts in the session")
    parser.add_argument(
        "--api", choices=("anthropic", "openai", "both"), default="both", help="wire API(s) to run"
    )
    arguments = parser.parse_args()
    apis = {"anthropic": (ANTHROPIC,), "openai": (OPENAI,), "both": (ANTHROPIC, OPENAI)}
    started = time.perf_counter()
    print(
        f"pi-lsp prompt-cache benchmark: a {arguments.turns}-turn session with tool rounds, "
        f"a {CONTEXT_WINDOW:,}-token window, the scripted model's simulated prompt cache"
    )
    asyncio.run(run(arguments.turns, apis[arguments.api]))
    print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
