"""The provider matrix of ``side_by_side.py``: pi-lsp next to pi 0.84.2 on the configurations
users have, each against the scripted server speaking that configuration's wire API.

Each configuration is set up the way a user of each agent sets it up. pi-lsp: the model in
``PI_LSP_MODEL``, the endpoint in the provider SDK's own variable (``OPENAI_BASE_URL``,
``ANTHROPIC_BASE_URL``, ``OPENROUTER_API_BASE``, ``GEMINI_API_BASE``, ``GROQ_API_BASE``) and the
key in the provider's key variable; or a ``models.json`` custom provider. pi: its ``models.json``
(pi reads no endpoint variable), with the provider's own name and the wire API pi uses for it.
Each agent has a HOME of its own, so neither reads the other's files.

Per configuration and agent: spawn → the first request at the model (the median of ``runs``
cold starts, the agents interleaved), the server's CPU per streamed delta (a ``deltas``-chunk
reply after two warm-up turns) and the resident memory idle after the first turns.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server_common import (
    TimedScriptedLLM,
    bench_environment,
    many_small_chunks,
    process_cpu_seconds,
    replies,
)
from side_by_side import Agent, Pi, PiLsp, resident_mb

SCRIPTED_KEY = "scripted-key"


@dataclass(frozen=True)
class Configuration:
    """One row of the matrix: how each agent is pointed at the scripted server."""

    name: str
    model: str
    """pi-lsp's model (``PI_LSP_MODEL``)."""
    variables: dict[str, str]
    """pi-lsp's environment; ``{v1}``, ``{root}``, ``{gemini}`` are the server's URLs."""
    pi_provider: str
    pi_model: str
    pi_api: str
    pi_base: str
    models_json_for_both: bool = False


CONFIGURATIONS = (
    Configuration(
        "OPENAI_BASE_URL server",
        "openai/scripted",
        {"OPENAI_BASE_URL": "{v1}", "OPENAI_API_KEY": SCRIPTED_KEY},
        "local",
        "scripted",
        "openai-completions",
        "{v1}",
    ),
    Configuration(
        "openai/gpt-5-mini",
        "openai/gpt-5-mini",
        {"OPENAI_BASE_URL": "{v1}", "OPENAI_API_KEY": SCRIPTED_KEY},
        "openai",
        "gpt-5-mini",
        "openai-responses",
        "{v1}",
    ),
    Configuration(
        "Anthropic",
        "anthropic/claude-sonnet-4-5",
        {"ANTHROPIC_BASE_URL": "{root}", "ANTHROPIC_API_KEY": SCRIPTED_KEY},
        "anthropic",
        "claude-sonnet-4-5",
        "anthropic-messages",
        "{root}",
    ),
    Configuration(
        "OpenRouter",
        "openrouter/anthropic/claude-sonnet-4.5",
        {"OPENROUTER_API_BASE": "{v1}", "OPENROUTER_API_KEY": SCRIPTED_KEY},
        "openrouter",
        "anthropic/claude-sonnet-4.5",
        "openai-completions",
        "{v1}",
    ),
    Configuration(
        "models.json custom provider",
        "scripted/scripted",
        {},
        "scripted",
        "scripted",
        "openai-completions",
        "{v1}",
        models_json_for_both=True,
    ),
    Configuration(
        "Gemini",
        "gemini/gemini-2.5-flash",
        {"GEMINI_API_BASE": "{gemini}", "GEMINI_API_KEY": SCRIPTED_KEY},
        "google",
        "gemini-2.5-flash",
        "google-generative-ai",
        "{gemini}",
    ),
    Configuration(
        "Groq",
        "groq/llama-3.3-70b-versatile",
        {"GROQ_API_BASE": "{v1}", "GROQ_API_KEY": SCRIPTED_KEY},
        "groq",
        "llama-3.3-70b-versatile",
        "openai-completions",
        "{v1}",
    ),
)


class MatrixLLM(TimedScriptedLLM):
    """The scripted model, noting when each request arrived, whatever its wire API."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []

    def next_reply(self, body: Any = None) -> Any:
        self.arrivals.append(time.perf_counter())
        return super().next_reply(body)

    def places(self) -> dict[str, str]:
        return {"v1": self.base_url, "root": self.root_url, "gemini": self.gemini_url}


def _settings(home: Path, provider: str | None, model_id: str | None) -> None:
    agent = home / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    settings: dict[str, Any] = {"retry": {"enabled": False}, "compaction": {"enabled": False}}
    if provider and model_id:
        settings |= {"defaultProvider": provider, "defaultModel": model_id}
    (agent / "settings.json").write_text(json.dumps(settings))


def _models_json(home: Path, configuration: Configuration, llm: MatrixLLM) -> None:
    model = {"id": configuration.pi_model, "contextWindow": 200_000, "maxTokens": 4096}
    provider = {
        "baseUrl": configuration.pi_base.format(**llm.places()),
        "api": configuration.pi_api,
        "apiKey": SCRIPTED_KEY,
        "models": [model],
    }
    models = {"providers": {configuration.pi_provider: provider}}
    (home / "agent" / "models.json").write_text(json.dumps(models))


def environments(
    scratch: Path, configuration: Configuration, llm: MatrixLLM
) -> dict[type[Agent], dict[str, str]]:
    """Each agent's environment for ``configuration``, its HOME written."""
    slug = configuration.name.replace(" ", "-").replace("/", "-")
    ours_home, pi_home = scratch / f"home-{slug}-pi-lsp", scratch / f"home-{slug}-pi"
    _settings(ours_home, None, None)
    _settings(pi_home, configuration.pi_provider, configuration.pi_model)
    _models_json(pi_home, configuration, llm)
    ours = bench_environment(ours_home)
    if configuration.models_json_for_both:
        _models_json(ours_home, configuration, llm)
    ours["PI_LSP_MODEL"] = configuration.model
    ours |= {name: value.format(**llm.places()) for name, value in configuration.variables.items()}
    return {PiLsp: ours, Pi: bench_environment(pi_home)}


async def _cold_start(kind: type[Agent], workspace: Path, environment, llm: MatrixLLM) -> float:
    agent = kind()
    llm.enqueue(replies.text("ok"))
    arrivals = len(llm.arrivals)
    await agent.start(workspace, environment)
    await agent.prompt("hello")
    seconds = llm.arrivals[arrivals] - agent.spawned_at
    await agent.stop()
    return seconds


async def _streaming(
    kind: type[Agent], workspace: Path, environment, llm: MatrixLLM, deltas: int
) -> dict[str, float]:
    agent = kind()
    await agent.start(workspace, environment)
    try:
        for text in ("warm up", "warm up again"):
            llm.enqueue(replies.text("warm"))
            await agent.prompt(text)
        await asyncio.sleep(1.0)
        idle = resident_mb(agent.pid)
        llm.enqueue(many_small_chunks(deltas))
        before = process_cpu_seconds(agent.pid)
        await agent.prompt("stream")
        cpu = (process_cpu_seconds(agent.pid) - before) / deltas * 1e6
    finally:
        await agent.stop()
    return {"first_request_ms": 0.0, "cpu_per_delta_us": cpu, "idle_rss_mb": idle}


async def measure_matrix(
    scratch: Path, runs: int, deltas: int
) -> dict[str, dict[str, dict[str, float]]]:
    """Figures by configuration, then by agent (``PiLsp``, ``Pi``)."""
    results: dict[str, dict[str, dict[str, float]]] = {}
    async with MatrixLLM() as llm:
        for configuration in CONFIGURATIONS:
            environment = environments(scratch, configuration, llm)
            workspace = scratch / f"matrix-{len(results)}"
            (workspace / ".pi" / "sessions").mkdir(parents=True, exist_ok=True)
            starts: dict[type[Agent], list[float]] = {PiLsp: [], Pi: []}
            for kind in starts:  # warms the file cache
                await _cold_start(kind, workspace, environment[kind], llm)
            for _ in range(runs):
                for kind, seconds in starts.items():
                    seconds.append(await _cold_start(kind, workspace, environment[kind], llm))
            figures = {}
            for kind, seconds in starts.items():
                numbers = await _streaming(kind, workspace, environment[kind], llm, deltas)
                numbers["first_request_ms"] = statistics.median(seconds) * 1000
                figures[kind.__name__] = numbers
            results[configuration.name] = figures
    return results


def print_matrix(results: dict[str, dict[str, dict[str, float]]], runs: int, deltas: int) -> None:
    print(
        f"\nThe provider matrix (pi-lsp / pi 0.84.2; goals: <= 1.0x on start and CPU, "
        f"<= 0.6x on memory; starts: median of {runs}, CPU: a {deltas:,}-chunk reply)"
    )
    header = (
        f"{'configuration':30} {'start ms':>9} {'pi':>7} {'ratio':>6}  "
        f"{'CPU us/delta':>12} {'pi':>6} {'ratio':>6}  {'idle MB':>8} {'pi':>6} {'ratio':>6}"
    )
    print(header)
    for name, figures in results.items():
        ours, pis = figures["PiLsp"], figures["Pi"]
        cells = []
        for key, width in (("first_request_ms", 9), ("cpu_per_delta_us", 12), ("idle_rss_mb", 8)):
            ratio = ours[key] / pis[key] if pis[key] else float("nan")
            cells.append(f"{ours[key]:>{width}.1f} {pis[key]:>6.1f} {ratio:>5.2f}x")
        print(f"{name:30} " + "  ".join(cells))
