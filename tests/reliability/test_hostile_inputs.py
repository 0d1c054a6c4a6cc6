"""Huge and hostile inputs through one real server: each gets a clear answer or the documented
truncation, and the server's memory stays bounded (its peak resident size is reported).

- a command printing 50 MB (bash keeps the tail: 2,000 lines or 50 KB, the rest in a file);
- ``read`` of a file whose one line is 10 MB, and of binary files;
- ``find`` and ``grep`` under a symlink loop;
- a 1 MB prompt;
- a session file of ``PI_LSP_HUGE_SESSION_MB`` megabytes (default 50; ``make
  test-reliability-full`` writes 500), opened and prompted.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM

from .figures import record_figure
from .servers import make_workspace, server_options, start_server

SESSION_MB = int(os.environ.get("PI_LSP_HUGE_SESSION_MB", "50"))
RESULT_LIMIT = 60_000
"""A tool result may carry 50 KB of output plus a notice."""


def peak_megabytes(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def write_huge_session(path: Path, megabytes: int, cwd: str) -> int:
    """A valid session of ``megabytes`` MB: a header and a chain of 64 KB messages, written in
    large blocks (the same line over and over, each with its own id and parent)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "type": "session",
        "version": 3,
        "id": "0198a0a0-0000-7000-8000-00000000beef",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": cwd,
    }
    filler = "lorem ipsum " * 5461
    count = megabytes * 16
    with path.open("wb") as file:
        file.write(json.dumps(header, separators=(",", ":")).encode() + b"\n")
        parent = None
        block = []
        for index in range(count):
            entry_id = f"{index:08x}"
            role = "user" if index % 2 == 0 else "assistant"
            message = {
                "role": role,
                "content": [{"type": "text", "text": filler}],
                "timestamp": index,
            }
            if role == "assistant":
                message.update(
                    api="openai-completions",
                    provider="openai",
                    model="scripted",
                    usage={
                        "input": 1,
                        "output": 1,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 2,
                        "cost": {
                            "input": 0,
                            "output": 0,
                            "cacheRead": 0,
                            "cacheWrite": 0,
                            "total": 0,
                        },
                    },
                    stopReason="stop",
                )
            entry = {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": message,
            }
            block.append(json.dumps(entry, separators=(",", ":")).encode())
            parent = entry_id
            if len(block) == 256:
                file.write(b"\n".join(block) + b"\n")
                block = []
        if block:
            file.write(b"\n".join(block) + b"\n")
    return count


def tool_result(client, call_id: str) -> dict:
    for event in client.events.events():
        if event["type"] == "tool_execution_end" and event["toolCallId"] == call_id:
            return event
    raise AssertionError(f"no result for {call_id}")


def result_text(event: dict) -> str:
    return "".join(part.get("text", "") for part in event["content"] if part["type"] == "text")


@pytest.mark.timeout(600)
async def test_huge_and_hostile_inputs_get_clear_bounded_answers(tmp_path):
    workspace = make_workspace(tmp_path)
    (workspace / "one-line.txt").write_text("x" * 10_000_000)
    (workspace / "random.bin").write_bytes(os.urandom(1_000_000))
    (workspace / "nulls.bin").write_bytes(b"\x00" * 100_000 + b"ELF\x7f")
    (workspace / "loop").symlink_to(".")
    (workspace / "deeper").mkdir()
    (workspace / "deeper" / "back").symlink_to("..")
    calls = {
        "bash-50mb": ("bash", {"command": "yes 'fifty megabytes of output' | head -c 50000000"}),
        "bash-one-line": ("bash", {"command": "head -c 20000000 /dev/zero | tr '\\0' 'y'"}),
        "read-long-line": ("read", {"path": "one-line.txt"}),
        "read-random": ("read", {"path": "random.bin"}),
        "read-nulls": ("read", {"path": "nulls.bin"}),
        "find-loop": ("find", {"pattern": "*.py"}),
        "grep-loop": ("grep", {"pattern": "def add"}),
    }
    figures: dict[str, object] = {}
    async with ScriptedLLM() as model:
        client = await start_server(
            tmp_path / "home", workspace, server_options(model.base_url, workspace), timeout=600
        )
        pid = client.process.pid
        try:
            for call_id, (tool, arguments) in calls.items():
                model.enqueue(
                    replies.tool_calls([(call_id, tool, arguments)]), replies.text("Seen.")
                )
                started = time.perf_counter()
                answer = await client.request("pi/prompt", {"text": f"run {call_id}"})
                assert answer["stopReason"] == "stop", (call_id, answer)
                event = tool_result(client, call_id)
                text = result_text(event)
                assert text.strip(), f"{call_id}: an empty answer"
                assert len(text) <= RESULT_LIMIT, f"{call_id}: {len(text)} characters came back"
                figures[f"{call_id} seconds"] = round(time.perf_counter() - started, 2)
                figures[f"{call_id} result chars"] = len(text)
            truncated = result_text(tool_result(client, "bash-50mb"))
            assert "fifty megabytes" in truncated and "full output" in truncated.lower()
            assert "find-loop" and "app.py" in result_text(tool_result(client, "find-loop"))
            assert "app.py" in result_text(tool_result(client, "grep-loop"))
            figures["peak MB after the tools"] = round(peak_megabytes(pid), 1)

            big_prompt = "a 1 MB prompt " * 75_000
            # 1 MB is ~260k tokens, past the window: after the answer the session is compacted.
            model.enqueue(replies.text("Read it all."), replies.text("## Goal\nRead 1 MB."))
            asked = len(model.requests)
            answer = await client.request("pi/prompt", {"text": big_prompt})
            assert answer["stopReason"] == "stop"
            assert big_prompt in json.dumps(model.requests[asked]["messages"])
            figures["peak MB after the 1 MB prompt"] = round(peak_megabytes(pid), 1)

            huge = workspace / "sessions" / "2026-01-01T00-00-00-000Z_huge.jsonl"
            started = time.perf_counter()
            entries = write_huge_session(huge, SESSION_MB, str(workspace))
            figures[f"{SESSION_MB} MB session written seconds"] = round(
                time.perf_counter() - started, 1
            )
            started = time.perf_counter()
            opened = await client.request("pi/openSession", {"path": str(huge)})
            state = await client.request("pi/state", {"sessionId": opened["sessionId"]})
            figures[f"{SESSION_MB} MB session open seconds"] = round(
                time.perf_counter() - started, 1
            )
            assert opened["leafId"] == f"{entries - 1:08x}" and state["messageCount"] == entries
            figures[f"peak MB after the {SESSION_MB} MB session"] = round(peak_megabytes(pid), 1)
        finally:
            await client.close()
    record_figure("huge and hostile inputs", **figures)
