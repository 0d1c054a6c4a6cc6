"""The scripted LLM server itself: JSON answers, model list, and its standalone process mode."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from pi_lsp.llm.config import resolve_model
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.scripted_llm import ScriptedLLM, replies, reply_from_json
from tests import scripted_llm_fixtures as fixtures

REPO_ROOT = Path(__file__).resolve().parents[2]

scripted_llm = fixtures.scripted_llm


async def test_non_streaming_json_completion(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.tool_calls([("call_1", "read", {"path": "a.py"})], text="Look"))
    body = {"model": "scripted", "messages": [{"role": "user", "content": "hi"}]}
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{scripted_llm.base_url}/chat/completions", json=body) as answer:
            completion = await answer.json()
        async with session.get(f"{scripted_llm.base_url}/models") as answer:
            models = await answer.json()
    choice = completion["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "Look"
    assert choice["message"]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "read", "arguments": '{"path": "a.py"}'},
        }
    ]
    usage = completion["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    assert [model["id"] for model in models["data"]] == ["scripted"]
    assert scripted_llm.requests == [body]


def test_script_entries_build_the_same_replies_as_the_helpers() -> None:
    assert reply_from_json({"kind": "text", "text": "Hi", "chunks": 2}) == replies.text(
        "Hi", chunks=2
    )
    assert reply_from_json(
        {"kind": "tool_calls", "calls": [["c1", "ls", {}]]}
    ) == replies.tool_calls([("c1", "ls", {})])
    assert reply_from_json({"kind": "error", "status": 429}) == replies.error(429)
    with pytest.raises(ValueError, match="unknown scripted reply kind"):
        reply_from_json({"kind": "teleport"})


@pytest.fixture
def scripted_process(tmp_path: Path) -> Iterator[str]:
    """A ``python -m pi_lsp.scripted_llm`` process serving one scripted text reply; its base URL."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"kind": "text", "text": "From the script", "chunks": 2}]))
    port_file = tmp_path / "port"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pi_lsp.scripted_llm",
            "--script",
            str(script),
            "--port-file",
            str(port_file),
        ],
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists():
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            assert time.monotonic() < deadline, "the scripted server did not write its port"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{int(port_file.read_text())}"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_standalone_process_serves_script_then_runtime_replies(scripted_process: str) -> None:
    environ = {"PI_LSP_MODEL": "openai/scripted", "PI_LSP_API_BASE": f"{scripted_process}/v1"}
    model = resolve_model({}, environ)
    assert model is not None and model.api_key == "no-key"
    messages = [{"role": "user", "content": "hello", "timestamp": 1}]
    request = CompletionRequest(model=model, system_prompt="", messages=messages, timeout=10)
    first = [event async for event in AssistantStream(request).events()][-1].message
    assert first["content"] == [{"type": "text", "text": "From the script"}]
    async with aiohttp.ClientSession() as session:
        entry = {"kind": "error", "status": 503, "message": "overloaded"}
        async with session.post(f"{scripted_process}/__enqueue", json=[entry]) as answer:
            assert (await answer.json())["queued"] == 1
        second = [event async for event in AssistantStream(request).events()][-1].message
        async with session.get(f"{scripted_process}/__requests") as answer:
            recorded = await answer.json()
    assert second["errorMessage"].startswith("503 ")
    assert len(recorded) == 2 and recorded[0]["messages"] == [{"role": "user", "content": "hello"}]
