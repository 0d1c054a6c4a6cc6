"""Prompt caching end to end: the real server talks to the scripted Anthropic endpoint through
litellm, marks its cache breakpoints, records the cache reads and writes the simulated cache
reports, and ``pi/state`` tells the editor what the session cost and how much of it was cached."""

from __future__ import annotations

import json

import pytest

from pi_lsp.scripted_llm import ScriptedLLM, replies
from tests.e2e.conftest import another_server, request, server_environment


async def test_an_anthropic_session_reads_its_prefix_from_the_cache_and_reports_the_cost(
    workspace,
):
    (workspace / "AGENTS.md").write_text("Always answer in English.\n" + "Be careful. " * 400)
    async with ScriptedLLM() as scripted_llm:
        scripted_llm.enqueue(
            replies.tool_calls([("toolu_1", "read", {"path": "app.py"})]),
            replies.text("It subtracts."),
            replies.text("Use a + b."),
        )
        options = {"model": "anthropic/claude-sonnet-4-5", "apiBase": scripted_llm.root_url}
        environment = {**server_environment(), "ANTHROPIC_API_KEY": "test-key"}
        async with another_server(workspace, options, environment) as client:
            first = await request(client, "pi/prompt", {"text": "What does app.py do?"})
            assert first["stopReason"] == "stop", first
            await request(client, "pi/prompt", {"text": "How do I fix it?"})
            state = await request(client, "pi/state", {})

    first_body, second_body, third_body = scripted_llm.requests
    assert first_body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert first_body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" in second_body["messages"][-1]["content"][-1]  # the tool result
    assert "cache_control" in third_body["messages"][-1]["content"][-1]  # the new question

    [session_file] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    answers = [
        json.loads(line)["message"]
        for line in session_file.read_text().splitlines()
        if '"role":"assistant"' in line
    ]
    assert answers[0]["usage"]["cacheWrite"] > 1024 and answers[0]["usage"]["cacheRead"] == 0
    assert all(answer["usage"]["cacheRead"] > 1024 for answer in answers[1:])

    cost = state["cost"]
    assert cost["cacheRead"] == sum(answer["usage"]["cacheRead"] for answer in answers)
    assert cost["total"] == pytest.approx(sum(a["usage"]["cost"]["total"] for a in answers))
    assert cost["total"] > 0 and 50 < cost["cachedPercent"] < 100
