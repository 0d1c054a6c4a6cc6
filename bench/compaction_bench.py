"""Server-side cost of a compaction, without the model call, and the context it saves.

Builds a session whose branch holds about 200k tokens (``bench/generate_session.py`` shapes, no
compaction yet), then times what pi-lsp does around the summary call: planning (cut point,
messages to summarize, file lists, tokensBefore), serializing the conversation and building the
summary request, and appending the compaction entry. Prints the median of several runs for both
tokenizers and the context size before and after.
Run: ``.venv/bin/python bench/compaction_bench.py``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from generate_session import generate

from pi_lsp.compaction.prepare import prepare_compaction
from pi_lsp.compaction.prompts import compaction_instructions, summary_request_text
from pi_lsp.compaction.settings import CompactionSettings
from pi_lsp.compaction.tokens import get_token_counter
from pi_lsp.session.session import Session

SUMMARY = "## Goal\nBenchmark\n\n## Progress\n### Done\n- [x] Everything"


def branch_session(directory: Path) -> Path:
    """About 200k tokens of conversation and no compaction
    (generated below the compaction cadence)."""
    path = directory / "branch.jsonl"
    entries = 400
    while True:
        generate(path, entries, seed=11, compaction_every_chars=10**12)
        if path.stat().st_size >= 1_150_000 or entries > 5_000:  # about 200k tokens by chars/4
            break
        entries += 100
    return path


def measure(path: Path, tokenizer: str, runs: int = 5) -> dict:
    counter = get_token_counter(tokenizer)
    counter.estimate_message_tokens({"role": "user", "content": "warm up"})
    timings = []
    for _ in range(runs):
        session = Session.open(path, writable=False)
        branch = session.branch()
        start = time.perf_counter()
        preparation = prepare_compaction(branch, CompactionSettings(), counter)
        request = summary_request_text(
            preparation.serialized,
            compaction_instructions(preparation.previous_summary is not None),
        )
        in_memory = Session.create(None, "/bench")
        in_memory.adopt_entries(list(session.entries))
        in_memory.append_compaction(
            SUMMARY,
            preparation.first_kept_entry_id,
            preparation.tokens_before,
            {"readFiles": [], "modifiedFiles": []},
        )
        timings.append((time.perf_counter() - start) * 1000)
    # Estimated message by message: the generated usage numbers are arbitrary, and usage recorded
    # before a compaction says nothing about the context after it.
    before = sum(
        counter.estimate_message_tokens(message) for message in session.build_context().messages
    )
    after = sum(
        counter.estimate_message_tokens(message) for message in in_memory.build_context().messages
    )
    return {
        "ms": statistics.median(timings),
        "before": before,
        "after": after,
        "summarized": len(preparation.messages_to_summarize),
        "request_chars": len(request),
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = branch_session(Path(directory))
        print(
            f"branch: {path.stat().st_size / 1e6:.2f} MB, {sum(1 for _ in path.open()) - 1} entries"
        )
        print(
            f"{'tokenizer':10} {'server-side ms':>15} "
            f"{'context before':>15} {'after':>10} {'saved':>8}"
        )
        for tokenizer in ("chars4", "tiktoken"):
            figures = measure(path, tokenizer)
            saved = 1 - figures["after"] / figures["before"]
            print(
                f"{tokenizer:10} {figures['ms']:15.1f} "
                f"{figures['before']:15,} {figures['after']:10,} {saved:8.0%}"
            )
        print("(goal: under 50 ms of server-side work per compaction, excluding the model call)")


if __name__ == "__main__":
    main()
