"""Write a realistic pi session file of N entries for the benchmarks (deterministic per seed).

The shape follows what long pi sessions look like: user prompts, assistant turns with thinking and
read/edit/bash tool calls, tool results of 0.5–20 KB, a compaction whenever about 170k tokens have
piled up since the last one (keeping the last ~20k tokens), now and then a label, a model change,
or a jump back a few entries with a branch summary. About 1 KB per entry on average, so 100k
entries make a file of roughly 100 MB.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from pi_lsp.session import entries as build
from pi_lsp.session.js_json import dumps
from pi_lsp.session.timestamps import epoch_ms_to_iso

SAMPLE_TEXT = (
    "the session tree keeps every branch of the conversation while compaction summarizes what "
    "fell out of the context window so long tasks keep going and nothing the agent learned is "
    "lost when the user jumps back to an earlier point and continues from there with a branch "
    "summary"
)
WORDS = SAMPLE_TEXT.split()
COMPACTION_EVERY_CHARS = 170_000 * 4
KEEP_RECENT_CHARS = 20_000 * 4


def prose(generator: random.Random, words: int) -> str:
    return " ".join(generator.choice(WORDS) for _ in range(words))


def generate(
    path: Path,
    entry_count: int,
    seed: int = 7,
    compaction_every_chars: int = COMPACTION_EVERY_CHARS,
) -> None:
    generator = random.Random(seed)
    clock = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    used_ids: set[str] = set()
    lines = [
        dumps(build.header("bench-" + str(entry_count), epoch_ms_to_iso(clock), "/bench/project"))
    ]
    leaf: str | None = None
    path_ids: list[tuple[str, str, int]] = []  # (id, role or type, chars) on the active path
    chars_since_compaction = 0

    def add(make) -> str:
        nonlocal leaf, clock
        clock += generator.randint(50, 5_000)
        entry_id = build.new_entry_id(used_ids)
        used_ids.add(entry_id)
        entry = make(entry_id, leaf, epoch_ms_to_iso(clock))
        lines.append(dumps(entry))
        leaf = entry_id
        return entry_id

    while len(lines) - 1 < entry_count:
        text = prose(generator, generator.randint(10, 60))
        user_id = add(lambda i, p, t, text=text: build.message(i, p, t, _user(text, clock)))
        path_ids.append((user_id, "user", len(text)))
        chars_since_compaction += len(text)
        for _ in range(generator.randint(1, 4)):
            call_id = f"call_{generator.getrandbits(48):012x}"
            tool = generator.choice(("read", "edit", "bash", "read"))
            assistant = _assistant(generator, call_id, tool, clock)
            assistant_id = add(
                lambda i, p, t, assistant=assistant: build.message(i, p, t, assistant)
            )
            result_text = prose(generator, generator.choice((30, 60, 120, 800)))
            result_id = add(
                lambda i, p, t, call_id=call_id, tool=tool, result_text=result_text: build.message(
                    i, p, t, _tool_result(call_id, tool, result_text, clock)
                )
            )
            chars = len(result_text) + 600
            path_ids += [
                (assistant_id, "assistant", 600),
                (result_id, "toolResult", len(result_text)),
            ]
            chars_since_compaction += chars
        chars_since_compaction = _maybe_compact(
            generator, add, path_ids, chars_since_compaction, compaction_every_chars
        )
        roll = generator.random()
        if roll < 0.03:
            target = generator.choice(path_ids[-20:])[0]
            add(
                lambda i, p, t, target=target: build.label(
                    i, p, t, target, f"checkpoint-{len(lines)}"
                )
            )
        elif roll < 0.04:
            add(
                lambda i, p, t: build.model_change(
                    i, p, t, "anthropic", generator.choice(("claude-sonnet-4-5", "claude-opus-4-1"))
                )
            )
        elif roll < 0.05 and len(path_ids) > 10:
            back = path_ids[-generator.randint(3, 8)][0]
            old_leaf = leaf
            leaf = back
            add(
                lambda i, p, t, old_leaf=old_leaf: build.branch_summary(
                    i,
                    p,
                    t,
                    from_id=old_leaf,
                    summary=prose(generator, 80),
                    details={"readFiles": ["src/a.py"], "modifiedFiles": []},
                )
            )
    path.write_text("\n".join(lines[: entry_count + 1]) + "\n", encoding="utf-8")


def _maybe_compact(generator, add, path_ids, chars_since_compaction: int, every_chars: int) -> int:
    if chars_since_compaction < every_chars:
        return chars_since_compaction
    kept_chars = 0
    first_kept = path_ids[-1][0]
    for entry_id, role, chars in reversed(path_ids):
        kept_chars += chars
        if role == "user":
            first_kept = entry_id
        if kept_chars >= KEEP_RECENT_CHARS:
            break
    summary = "## Goal\n" + prose(generator, 300)
    add(
        lambda i, p, t: build.compaction(
            i,
            p,
            t,
            summary=summary,
            first_kept_entry_id=first_kept,
            tokens_before=chars_since_compaction // 4,
            details={"readFiles": ["src/a.py"], "modifiedFiles": ["src/b.py"]},
        )
    )
    return kept_chars


def _user(text: str, clock: int) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": clock}


def _assistant(generator: random.Random, call_id: str, tool: str, clock: int) -> dict:
    arguments = {"path": f"src/module_{generator.randint(1, 40)}.py"}
    if tool == "bash":
        arguments = {"command": "pytest -q tests/"}
    elif tool == "edit":
        arguments["edits"] = [{"oldText": prose(generator, 8), "newText": prose(generator, 9)}]
    input_tokens = generator.randint(5_000, 150_000)
    return {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": prose(generator, 30), "thinkingSignature": "sig"},
            {"type": "text", "text": prose(generator, 25)},
            {"type": "toolCall", "id": call_id, "name": tool, "arguments": arguments},
        ],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": input_tokens,
            "output": 180,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": input_tokens + 180,
            "cost": {
                "input": input_tokens * 3e-6,
                "output": 0.0027,
                "cacheRead": 0,
                "cacheWrite": 0,
                "total": input_tokens * 3e-6 + 0.0027,
            },
        },
        "stopReason": "toolUse",
        "timestamp": clock,
    }


def _tool_result(call_id: str, tool: str, text: str, clock: int) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": tool,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": clock,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("entries", type=int)
    parser.add_argument("--seed", type=int, default=7)
    arguments = parser.parse_args()
    generate(arguments.path, arguments.entries, arguments.seed)


if __name__ == "__main__":
    main()
