"""Editor-model streaming benchmark: the server's CPU per streamed part of a model the editor
provides (``vscode-lm``), next to the same answer streamed by an HTTP provider.

A warm server (``server_common.WarmServer``) whose client advertises ``piLanguageModels`` and
answers each ``pi/languageModel/chat`` itself, as VS Code's extension does: thousands of tiny text
parts as ``pi/languageModel/part`` notifications, then one part (the turn's fixed cost). The same
answers then stream from the scripted model over HTTP (the ``openai-completions`` path pi-lsp
sends itself). The server's CPU time (utime + stime from /proc) per part, whole turn and
marginal, and the turn's wall time. pi has no such path (it signs in to Copilot with Copilot
Chat's own credentials instead), so there is no pi ratio. Asserts nothing. ``--quick`` runs fewer
repetitions.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from server_common import (
    TimedScriptedLLM,
    WarmServer,
    line,
    many_small_chunks,
    median_of,
    run_alone,
)

from pi_lsp import protocol

PARTS = 5_000
MODEL = {
    "id": "bench-1",
    "vendor": "bench",
    "family": "bench",
    "name": "Bench",
    "maxInputTokens": 200_000,
}
CAPABILITIES = types.ClientCapabilities(experimental={protocol.LANGUAGE_MODELS_CAPABILITY: True})


class EditorSide:
    """Answers each chat request with ``parts`` text parts, sent as fast as the pipe takes them."""

    def __init__(self, server: WarmServer) -> None:
        self.parts = 1
        client = server.client
        self.client = client

        async def answer(params: Any) -> dict[str, int]:  # pygls registers functions, not methods
            return await self.answer(params)

        client.feature(protocol.LANGUAGE_MODEL_CHAT)(answer)

    async def answer(self, params: Any) -> dict[str, int]:
        request_id = params.requestId if hasattr(params, "requestId") else params["requestId"]
        for index in range(self.parts):
            part = {"type": "text", "text": f" w{index}"}
            self.client.protocol.notify(
                protocol.LANGUAGE_MODEL_PART, {"requestId": request_id, "part": part}
            )
        return {"inputTokens": 1000, "outputTokens": self.parts}


async def editor_turn(server: WarmServer, editor: EditorSide, parts: int) -> dict[str, float]:
    await server.client.request("pi/newSession", {})
    await server.client.request("pi/setModel", {"model": "vscode-lm/bench/bench-1"})
    editor.parts = parts
    return await server.timed_prompt("stream")


async def http_turn(server: WarmServer, chunks: int) -> dict[str, float]:
    await server.client.request("pi/newSession", {})
    server.llm.enqueue(many_small_chunks(chunks))
    return await server.timed_prompt("stream")


async def measure(scratch: Path, parts: int, repeats: int) -> dict[str, list[dict[str, float]]]:
    figures: dict[str, list[dict[str, float]]] = {
        "editor": [],
        "editor one": [],
        "http": [],
        "http one": [],
    }
    async with (
        TimedScriptedLLM() as llm,
        WarmServer(scratch, llm, capabilities=CAPABILITIES) as server,
    ):
        editor = EditorSide(server)
        server.client.protocol.notify(protocol.LANGUAGE_MODELS, {"models": [MODEL]})
        await editor_turn(server, editor, 1)  # the editor path's first turn, not measured
        for _ in range(repeats):
            figures["editor"].append(await editor_turn(server, editor, parts))
            figures["editor one"].append(await editor_turn(server, editor, 1))
            figures["http"].append(await http_turn(server, parts))
            figures["http one"].append(await http_turn(server, 1))
    return figures


def report(figures: dict[str, list[dict[str, float]]], parts: int) -> None:
    print(f"\nan answer of {parts:,} text parts sent at once (median of {len(figures['editor'])})")
    for path, label in (
        ("editor", "the editor's model (LSP notifications)"),
        ("http", "HTTP provider (SSE chunks)"),
    ):
        whole, one = median_of(figures[path], "cpu"), median_of(figures[f"{path} one"], "cpu")
        print(f"  {label}")
        line("server CPU, whole turn (ms)", whole * 1000)
        line("server CPU per part, whole turn / parts (us)", whole / parts * 1e6)
        line("server CPU per part, marginal (us)", (whole - one) / (parts - 1) * 1e6)
        line("turn wall time (ms)", median_of(figures[path], "wall") * 1000)


def run(scratch: Path, quick: bool) -> None:
    figures = asyncio.run(measure(scratch, PARTS, 1 if quick else 3))
    report(figures, PARTS)


if __name__ == "__main__":
    run_alone(
        __doc__,
        "pi-lsp editor-model streaming benchmark",
        lambda scratch, options: run(scratch, options.quick),
    )
