"""Language-server benchmark: start-up, CPU per delta, and per-turn overhead on a big session.

Runs the three server benchmarks in turn, each in its own module (and runnable by itself):
``server_startup.py`` (a), ``server_streaming.py`` (b) and ``server_turns.py`` (c); what they
share is ``server_common.py``. Everything runs against the real ``python -m pi_lsp`` over stdio,
spoken to with pi-lsp's own client (``pi_lsp.client``); the scripted OpenAI-compatible model
runs in this process. Prints figures, asserts nothing. The whole run takes a few minutes on a
small machine; ``--quick`` runs fewer repetitions.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import server_startup
import server_streaming
import server_turns
from server_common import header


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke test)")
    parser.add_argument(
        "--chunks",
        type=int,
        default=server_streaming.DEFAULT_CHUNKS,
        help="text chunks of the streamed reply in (b)",
    )
    arguments = parser.parse_args()
    started = time.perf_counter()
    header("pi-lsp server benchmark")
    for name, run in (
        ("start-up", lambda scratch: server_startup.run(scratch, arguments.quick)),
        (
            "streaming",
            lambda scratch: server_streaming.run(scratch, arguments.quick, arguments.chunks),
        ),
        ("turns", lambda scratch: server_turns.run(scratch, arguments.quick)),
    ):
        scratch = Path(tempfile.mkdtemp(prefix=f"pi-lsp-{name}-bench-"))
        try:
            run(scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
