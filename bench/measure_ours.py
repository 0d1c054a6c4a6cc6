"""Time pi-lsp's session core on one file and print one JSON object (run in a fresh process per
file).

Measures: open + index, context at the leaf, compaction planning at the leaf (chars/4 and tiktoken),
appending N entries to a new session without fsync, and the process's peak memory.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path


def milliseconds(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--appends", type=int, default=10_000)
    arguments = parser.parse_args()

    from pi_lsp.compaction.prepare import prepare_compaction
    from pi_lsp.compaction.settings import CompactionSettings
    from pi_lsp.compaction.tokens import get_token_counter
    from pi_lsp.session.session import Session

    figures: dict[str, object] = {}
    start = time.perf_counter()
    session = Session.open(arguments.file, writable=False)
    figures["openMs"] = milliseconds(start)
    start = time.perf_counter()
    context = session.build_context()
    figures["contextMs"] = milliseconds(start)
    figures["contextMessages"] = len(context.messages)
    for tokenizer in ("chars4", "tiktoken"):
        if (
            tokenizer == "tiktoken"
        ):  # pi has no tokenizer tables in memory: compare before loading ours
            figures["peakRssMb"] = round(
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
            )
        counter = get_token_counter(tokenizer)
        counter.estimate_message_tokens({"role": "user", "content": "warm up the tokenizer"})
        start = time.perf_counter()
        preparation = prepare_compaction(session.branch(), CompactionSettings(), counter)
        figures[f"planCompaction{tokenizer.capitalize()}Ms"] = milliseconds(start)
        if preparation is not None:
            figures[f"planCompaction{tokenizer.capitalize()}Summarized"] = len(
                preparation.messages_to_summarize
            )
    figures["peakRssWithTiktokenMb"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
    )
    figures["appendsPerSecond"] = appends_per_second(Session, arguments.appends)
    json.dump(figures, sys.stdout)
    sys.stdout.write("\n")


def appends_per_second(session_class, count: int) -> int:
    """Append ``count`` realistic entries (a
    user/assistant/tool-result cycle) to a fresh session file."""
    message_cycle = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Please fix the failing test in tests/test_app.py"}
            ],
            "timestamp": 1,
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading the test."},
                {
                    "type": "toolCall",
                    "id": "call_1",
                    "name": "read",
                    "arguments": {"path": "tests/test_app.py"},
                },
            ],
            "api": "openai-completions",
            "provider": "openai",
            "model": "gpt-4o",
            "usage": {
                "input": 1200,
                "output": 85,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 1285,
                "cost": {
                    "input": 0.0036,
                    "output": 0.0013,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "total": 0.0049,
                },
            },
            "stopReason": "toolUse",
            "timestamp": 2,
        },
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "read",
            "content": [
                {"type": "text", "text": "def test_add():\n    assert add(1, 2) == 3\n" * 5}
            ],
            "isError": False,
            "timestamp": 3,
        },
    ]
    with (
        tempfile.TemporaryDirectory() as directory,
        session_class.create(directory, directory) as session,
    ):
        start = time.perf_counter()
        for index in range(count):
            session.append_message(message_cycle[index % 3])
        elapsed = time.perf_counter() - start
    return round(count / elapsed)


if __name__ == "__main__":
    main()
