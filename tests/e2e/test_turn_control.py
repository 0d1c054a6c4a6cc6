"""Controlling a running turn: abort, ``$/cancelRequest``, follow-ups, steering, retries."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from lsprotocol import types

from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request


def session_lines(workspace: Path) -> list[dict]:
    [path] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_abort_during_streaming_persists_the_partial_answer(
    client, events, scripted_llm, workspace
):
    scripted_llm.enqueue(
        replies.slow_text("one two three four five six seven eight", chunks=8, chunk_delay=0.5)
    )
    prompt = asyncio.ensure_future(request(client, "pi/prompt", {"text": "count slowly"}))
    await events.wait_for("text_delta")
    aborted = await request(client, "pi/abort", {})
    result = await asyncio.wait_for(prompt, 15)
    assert aborted["aborted"] is True and result["stopReason"] == "aborted"
    last = session_lines(workspace)[-1]["message"]
    assert last["role"] == "assistant" and last["stopReason"] == "aborted"
    assert (
        last["content"][0]["text"].startswith("one") and "eight" not in last["content"][0]["text"]
    )
    assert events.types()[-2:] == ["agent_end", "tree_changed"]


async def test_cancel_request_aborts_the_turn_and_answers_normally(
    client, events, scripted_llm, workspace
):
    scripted_llm.enqueue(
        replies.slow_text("alpha beta gamma delta epsilon", chunks=5, chunk_delay=0.5)
    )
    future = client.protocol.send_request("pi/prompt", {"text": "slowly"})
    await events.wait_for("text_delta")
    client.protocol.notify("$/cancelRequest", types.CancelParams(id=_last_request_id(client)))
    result = await asyncio.wait_for(asyncio.wrap_future(future), 15)
    assert result["stopReason"] == "aborted"
    assert session_lines(workspace)[-1]["message"]["stopReason"] == "aborted"


def _last_request_id(client) -> int:
    return max(key for key in client.protocol._request_futures if isinstance(key, (int, str)))


async def test_abort_kills_a_running_command_and_its_children(
    client, events, scripted_llm, workspace
):
    pid_file = workspace / "pids"
    command = f"sleep 60 & echo $! > {pid_file}; echo $$ >> {pid_file}; wait"
    scripted_llm.enqueue(replies.tool_calls([("call_1", "bash", {"command": command})]))
    prompt = asyncio.ensure_future(request(client, "pi/prompt", {"text": "run it"}))
    await events.wait_for("tool_execution_start")
    for _ in range(100):
        if pid_file.exists() and len(pid_file.read_text().split()) == 2:
            break
        await asyncio.sleep(0.05)
    pids = [int(pid) for pid in pid_file.read_text().split()]
    await request(client, "pi/abort", {})
    result = await asyncio.wait_for(prompt, 15)
    assert result["stopReason"] == "aborted"
    await asyncio.sleep(0.5)
    assert not any(_alive(pid) for pid in pids)
    tool_result = session_lines(workspace)[-1]["message"]
    assert tool_result["role"] == "toolResult" and tool_result["isError"] is True


async def wait_for_pids(pid_file: Path) -> list[int]:
    for _ in range(100):
        if pid_file.exists() and len(pid_file.read_text().split()) == 2:
            break
        await asyncio.sleep(0.05)
    return [int(pid) for pid in pid_file.read_text().split()]


async def test_shutdown_kills_the_commands_still_running(client, events, scripted_llm, workspace):
    pid_file = workspace / "pids"
    command = f"sleep 60 & echo $! > {pid_file}; echo $$ >> {pid_file}; wait"
    scripted_llm.enqueue(replies.tool_calls([("call_1", "bash", {"command": command})]))
    prompt = asyncio.ensure_future(request(client, "pi/prompt", {"text": "run it"}))
    await events.wait_for("tool_execution_start")
    pids = await wait_for_pids(pid_file)
    await client.shutdown_session()  # shutdown, then exit: no pi/abort first
    prompt.cancel()
    for _ in range(50):
        if not any(_alive(pid) for pid in pids):
            break
        await asyncio.sleep(0.1)
    assert not any(_alive(pid) for pid in pids), "a command outlived the server"


async def test_a_running_command_streams_its_output(client, events, scripted_llm, workspace):
    command = "echo first; sleep 1; echo second"
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "bash", {"command": command})]), replies.text("Ran it.")
    )
    result = await request(client, "pi/prompt", {"text": "run it"})
    assert result["stopReason"] == "stop"
    kinds = events.types()
    updates = [event for event in events.events() if event["type"] == "tool_execution_update"]
    assert updates and updates[0]["content"][0]["text"].startswith("first")
    assert "second" not in updates[0]["content"][0]["text"]
    assert kinds.index("tool_execution_start") < kinds.index("tool_execution_update")
    assert kinds.index("tool_execution_update") < kinds.index("tool_execution_end")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = (
        Path(f"/proc/{pid}/stat").read_text().split()[2]
        if Path(f"/proc/{pid}/stat").exists()
        else "X"
    )
    return status not in ("Z", "X")


async def test_a_prompt_during_a_turn_is_queued_as_a_follow_up(client, events, scripted_llm):
    scripted_llm.enqueue(
        replies.slow_text("first answer here", chunks=3, chunk_delay=0.3),
        replies.text("second answer"),
    )
    first = asyncio.ensure_future(request(client, "pi/prompt", {"text": "first"}))
    await events.wait_for("text_delta")
    second = asyncio.ensure_future(request(client, "pi/prompt", {"text": "second"}))
    first_result, second_result = await asyncio.wait_for(asyncio.gather(first, second), 20)
    assert first_result["stopReason"] == second_result["stopReason"] == "stop"
    assert first_result["leafId"] != second_result["leafId"]
    assert events.types().count("agent_start") == 2
    follow_up_request = json.dumps(scripted_llm.requests[1]["messages"])
    assert "first answer here" in follow_up_request and "second" in follow_up_request


async def test_steering_is_delivered_after_the_current_tool_batch(
    client, events, scripted_llm, workspace
):
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "bash", {"command": "sleep 1; echo done"})]),
        replies.text("Adjusted to the steering."),
    )
    first = asyncio.ensure_future(request(client, "pi/prompt", {"text": "start"}))
    await events.wait_for("tool_execution_start")
    steer = asyncio.ensure_future(
        request(client, "pi/prompt", {"text": "also check the docs", "streamingBehavior": "steer"})
    )
    first_result, steer_result = await asyncio.wait_for(asyncio.gather(first, steer), 20)
    assert first_result == steer_result  # both resolve with the turn that carried the steering
    second_request = scripted_llm.requests[1]["messages"]
    assert [message["role"] for message in second_request[-2:]] == ["tool", "user"]
    assert "also check the docs" in json.dumps(second_request[-1])


async def test_rate_limits_are_retried_with_retry_events(client, events, scripted_llm):
    scripted_llm.enqueue(replies.error(429, "Rate limit reached"), replies.text("Finally."))
    result = await request(client, "pi/prompt", {"text": "hello"})
    assert result["stopReason"] == "stop"
    [retry] = [event for event in events.events() if event["type"] == "retry"]
    assert retry["attempt"] == 1 and retry["maxAttempts"] == 3 and "429" in retry["errorMessage"]


async def test_a_provider_error_that_is_not_retryable_ends_the_turn_with_its_message(
    client, scripted_llm, workspace
):
    scripted_llm.enqueue(replies.error(400, "Invalid request: bad tool schema"))
    result = await request(client, "pi/prompt", {"text": "hello"})
    assert result["stopReason"] == "error" and "bad tool schema" in result["errorMessage"]
    roles = [line.get("message", {}).get("role") for line in session_lines(workspace)]
    assert roles[-2:] == ["user", "assistant"]  # the prompt is kept, with the failed answer
