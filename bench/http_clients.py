"""httpx against pi-lsp's own h11 client (``pi_lsp/llm/http_stream.py``) on what the direct path
needs of HTTP: the import on the way to the first request, and the CPU of reading a long
server-sent stream line by line.

Each client, in a fresh interpreter (so imports are cold and neither sees the other's modules):
the wall time of importing it, and the process CPU time of streaming ``--deltas`` small SSE
events from the scripted server in this process (one ``POST /v1/chat/completions``, the lines
read as they arrive, a warm-up request first), the median of ``--runs``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
from pathlib import Path

from server_common import ROOT, many_small_chunks

from pi_lsp.scripted_llm import ScriptedLLM

_CLIENT = """
import asyncio, json, sys, time
started = time.perf_counter()
{import_line}
imported = time.perf_counter() - started
URL, DELTAS = sys.argv[1], int(sys.argv[2])
BODY = json.dumps({{"model": "scripted", "stream": True,
                    "messages": [{{"role": "user", "content": "hi"}}]}}).encode()
HEADERS = {{"Content-Type": "application/json", "Accept": "text/event-stream"}}

{read_function}

async def main():
    await read()  # warm: connection, TLS-free loopback, code paths
    cpu = time.process_time()
    lines = await read()
    cpu = time.process_time() - cpu
    print(json.dumps({{"import_ms": imported * 1000, "lines": lines,
                      "cpu_per_delta_us": cpu / DELTAS * 1e6}}))

asyncio.run(main())
"""

CLIENTS = {
    "h11 (http_stream)": (
        "from pi_lsp.llm import http_stream",
        """
async def read():
    count = 0
    async with http_stream.post(URL, BODY, HEADERS, 30) as response:
        async for line in response.lines():
            count += line.startswith(b"data:")
    return count
""",
    ),
    "httpx": (
        "import httpx",
        """
client = None
async def read():
    global client
    client = client or httpx.AsyncClient(timeout=30)
    count = 0
    async with client.stream("POST", URL, content=BODY, headers=HEADERS) as response:
        async for line in response.aiter_lines():
            count += line.startswith("data:")
    return count
""",
    ),
}


def run_client(name: str, url: str, deltas: int) -> dict[str, float]:
    import_line, read_function = CLIENTS[name]
    script = _CLIENT.format(import_line=import_line, read_function=read_function)
    result = subprocess.run(
        [sys.executable, "-c", script, url, str(deltas)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=ROOT,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


async def measure(deltas: int, runs: int) -> dict[str, list[dict[str, float]]]:
    figures: dict[str, list[dict[str, float]]] = {name: [] for name in CLIENTS}
    async with ScriptedLLM() as server:
        url = server.base_url + "/chat/completions"
        for _ in range(runs):
            for name in CLIENTS:  # interleaved, so both meet the same load
                server.enqueue(many_small_chunks(10), many_small_chunks(deltas))
                figures[name].append(await asyncio.to_thread(run_client, name, url, deltas))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()
    figures = asyncio.run(measure(arguments.deltas, arguments.runs))
    print(f"{'client':20} {'import ms':>10} {'CPU us/delta':>13}   (median of {arguments.runs})")
    for name, runs in figures.items():
        import_ms = statistics.median(run["import_ms"] for run in runs)
        cpu = statistics.median(run["cpu_per_delta_us"] for run in runs)
        print(f"{name:20} {import_ms:>10.1f} {cpu:>13.2f}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
