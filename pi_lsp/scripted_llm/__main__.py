"""``python -m pi_lsp.scripted_llm``: serve scripted replies from a JSON file until terminated.

The script file holds a JSON list of reply entries (``{"kind": "text", "text": "Hello"}``, the
kinds and arguments of the helpers in ``replies``), served in order. Once listening, the port is
written to ``--port-file`` (atomically, so a reader never sees a half-written number). More
replies can be queued at runtime with ``POST /__enqueue``; ``GET /__requests`` returns the
recorded request bodies.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from pi_lsp.scripted_llm.replies import reply_from_json
from pi_lsp.scripted_llm.server import ScriptedLLM


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m pi_lsp.scripted_llm",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--script", type=Path, help="JSON list of reply entries to serve in order")
    parser.add_argument("--port-file", type=Path, help="file to write the listening port to")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: any free)")
    parser.add_argument(
        "--simulate-openai-cache",
        action="store_true",
        help="report OpenAI's automatic prefix caching in chat-completions usage",
    )
    return parser.parse_args(argv)


def _write_port(path: Path, port: int) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(f"{port}\n", encoding="utf-8")
    os.replace(temporary, path)


async def _serve(arguments: argparse.Namespace) -> None:
    entries = json.loads(arguments.script.read_text(encoding="utf-8")) if arguments.script else []
    server = ScriptedLLM(
        tuple(reply_from_json(entry) for entry in entries),
        port=arguments.port,
        simulate_openai_cache=arguments.simulate_openai_cache,
    )
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, stop.set)
    if arguments.port_file:
        _write_port(arguments.port_file, server.port)
    print(f"scripted LLM listening on {server.base_url}", file=sys.stderr, flush=True)
    try:
        await stop.wait()
    finally:
        await server.stop()


def main(argv: list[str] | None = None) -> None:
    asyncio.run(_serve(_arguments(argv)))


if __name__ == "__main__":
    main()
