"""What finding the due nested context files costs before each model request.

The turn loop asks ``NestedContextFiles.due`` before every request (``agent/nested_context.py``):
it projects the active path and looks up the context files of every path the context's tool calls
touched. This builds a branch of 1000 tool rounds (3000 entries) in a workspace with a nested
``packages/api/AGENTS.md``, each round reading another file below it, and prints the median time of
one call, the first (cold) call apart. pi has no such step, so there is no pi figure to compare.
Run: ``.venv/bin/python bench/nested_context_bench.py``.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from pi_lsp.agent.nested_context import NestedContextFiles
from pi_lsp.session.session import Session

ROUNDS = 1000
RUNS = 20


def build_branch(workspace: Path) -> list:
    package = workspace / "packages" / "api"
    (package / "src").mkdir(parents=True)
    (package / "AGENTS.md").write_text("Use tabs in the api package.\n")
    with Session.create(workspace / "sessions", str(workspace)) as session:
        for number in range(ROUNDS):
            call = {
                "type": "toolCall",
                "id": f"c{number}",
                "name": "read",
                "arguments": {"path": f"packages/api/src/module_{number}.py"},
            }
            session.append_message(
                {"role": "user", "content": [{"type": "text", "text": "next"}], "timestamp": 1}
            )
            session.append_message(
                {
                    "role": "assistant",
                    "content": [call],
                    "api": "openai-completions",
                    "provider": "openai",
                    "model": "bench",
                    "usage": {},
                    "stopReason": "toolUse",
                    "timestamp": 2,
                }
            )
            session.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": f"c{number}",
                    "toolName": "read",
                    "content": [{"type": "text", "text": "x = 1"}],
                    "isError": False,
                    "timestamp": 3,
                }
            )
        return session.branch()


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        workspace = Path(directory)
        branch = build_branch(workspace)
        nested = NestedContextFiles(workspace)
        start = time.perf_counter()
        [injection] = nested.due(branch)
        cold = time.perf_counter() - start
        timings = []
        for _ in range(RUNS):
            start = time.perf_counter()
            nested.due(branch)
            timings.append(time.perf_counter() - start)
    print(f"nested context files due, {len(branch)}-entry branch, {ROUNDS} distinct paths:")
    print(f"  first call  {cold * 1000:7.1f} ms")
    print(f"  next calls  {statistics.median(timings) * 1000:7.1f} ms (median of {RUNS})")
    print(f"  due: {injection.context_file.path}")


if __name__ == "__main__":
    main()
