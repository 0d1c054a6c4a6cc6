"""Prompt caching as the agent uses it, with the model double: the cache key and breakpoints of
every request across turns, compactions and navigations, the retention settings, and summaries
asked in place (the cached conversation resent, the instructions appended) or pasted."""

from __future__ import annotations

import itertools
import json
from typing import Any

import attrs

from pi_lsp.compaction.prompts import IN_PLACE_PREAMBLE, SUMMARIZER_SYSTEM_PROMPT
from pi_lsp.llm.double import replies
from pi_lsp.llm.stream import CompletionRequest, chat_payload
from tests.agent_harness import text_of

SUMMARY = "## Goal\nFix add() in app.py\n\n## Progress\n- [x] Read app.py"
ANTHROPIC = {
    "model": "anthropic/claude-sonnet-4-5",
    "contextWindow": 20_000,
    "compaction": {"keepRecentTokens": 100, "reserveTokens": 2000},
}
CACHED = {  # an answer whose usage shows the provider caching
    "prompt_tokens": 400,
    "completion_tokens": 5,
    "total_tokens": 405,
    "prompt_tokens_details": {"cached_tokens": 300},
}
FULL = {  # an answer that fills the window (reading most of it from the cache)
    "prompt_tokens": 19_000,
    "completion_tokens": 10,
    "total_tokens": 19_010,
    "prompt_tokens_details": {"cached_tokens": 18_000},
}
SHORT = {"type": "ephemeral"}


def marks(request: CompletionRequest) -> list[str]:
    """Where the sent request carries breakpoints: ``tool``, ``system`` and message indexes."""
    messages, tools = chat_payload(request)
    found = ["tool" for tool in tools if "cache_control" in tool]
    for index, message in enumerate(messages):
        content = message.get("content")
        parts = content if isinstance(content, list) else []
        if "cache_control" in message or any("cache_control" in part for part in parts):
            found.append("system" if message["role"] == "system" else f"{message['role']} {index}")
    return found


def ttl_of(request: CompletionRequest) -> set[str | None]:
    _, tools = chat_payload(request)
    return {tool["cache_control"].get("ttl") for tool in tools if "cache_control" in tool}


async def tool_round_turn(agent, question: str, usage: dict[str, Any] = CACHED) -> None:
    agent.model.script(
        replies.tool_calls([("call-1", "read", {"path": "app.py"})], usage=usage),
        replies.text("It subtracts. " + "details " * 20, usage=usage),
    )
    await agent.prompt(question)


async def chat(agent, turns: int, usage: dict[str, Any] = CACHED) -> None:
    for index in range(turns):
        agent.model.script(replies.text(f"Answer {index}: " + "details " * 30, usage=usage))
        await agent.prompt(f"Question {index}: " + "context " * 30)


def in_place(request: CompletionRequest) -> bool:
    return text_of(request.messages[-1]).startswith(IN_PLACE_PREAMBLE)


# ------------------------------------------------------------------ conversation requests


async def test_every_request_of_a_turn_is_keyed_by_the_session_and_marked(make_agent):
    agent = make_agent(options=ANTHROPIC)
    await tool_round_turn(agent, "What does app.py do?")
    first, second = agent.model.requests
    assert first.session_id == second.session_id == agent.runtime.id
    assert first.cache_retention == second.cache_retention == "short"
    assert marks(first) == ["tool", "system", "user 1"]
    # The tool result is the newest message; the question ended the previous request.
    assert marks(second) == ["tool", "system", "user 1", "tool 3"]
    await tool_round_turn(agent, "And now?")
    third, fourth = agent.model.requests[2:]
    assert marks(third) == ["tool", "system", "tool 3", "user 5"]
    assert marks(fourth) == ["tool", "system", "user 5", "tool 7"]


async def test_an_openai_model_gets_no_breakpoints_but_the_same_key(make_agent):
    agent = make_agent(options={"model": "openai/gpt-4o"})
    await tool_round_turn(agent, "What does app.py do?")
    assert all(marks(request) == [] for request in agent.model.requests)
    assert {request.session_id for request in agent.model.requests} == {agent.runtime.id}


async def test_the_retention_setting_reaches_every_request(make_agent):
    agent = make_agent(options={**ANTHROPIC, "cacheRetention": "long"})
    await chat(agent, 1)
    request = agent.model.requests[-1]
    assert request.cache_retention == "long" and ttl_of(request) == {"1h"}


async def test_retention_none_in_pi_settings_turns_caching_off(make_agent, monkeypatch):
    monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    agent = make_agent(options=ANTHROPIC)
    settings = agent.workspace / ".pi" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"cacheRetention": "none"}))
    agent.services.resources.reload()
    await chat(agent, 1)
    request = agent.model.requests[-1]
    assert request.cache_retention == "none" and marks(request) == []


async def test_pi_cache_retention_long_applies_without_a_setting(make_agent, monkeypatch):
    monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    agent = make_agent(options=ANTHROPIC)
    await chat(agent, 1)
    assert agent.model.requests[-1].cache_retention == "long"


# ------------------------------------------------------------------ compaction


async def compact_after_cached_turns(agent) -> tuple[CompletionRequest, CompletionRequest]:
    """Two cached turns, then one that fills the window: the compaction after it. Returns the
    last conversation request and the summary request."""
    await chat(agent, 2)
    agent.model.script(replies.text("A big answer", usage=FULL), replies.text(SUMMARY))
    await agent.prompt("one more " + "context " * 60)
    assert agent.entry_types()[-1] == "compaction"
    return agent.model.requests[-2], agent.model.requests[-1]


async def test_a_compaction_summary_resends_the_cached_prefix_and_appends_its_instructions(
    make_agent,
):
    agent = make_agent(options=ANTHROPIC)
    conversation, summary = await compact_after_cached_turns(agent)
    assert in_place(summary)
    prefix = summary.messages[:-1]
    assert list(conversation.messages[: len(prefix)]) == list(prefix)  # the cached prefix
    assert [text_of(message) for message in prefix][-1].startswith("Answer 1")
    assert (summary.system_prompt, summary.tools) == (
        conversation.system_prompt,
        conversation.tools,
    )
    assert summary.thinking_level == conversation.thinking_level
    assert summary.session_id == agent.runtime.id and summary.uncached_tail == 1
    # The instruction itself is not worth a cache write; the end of the prefix is marked, and
    # the user message that ended the earlier request it extends.
    assert marks(summary) == ["tool", "system", "user 3", "assistant 4"]
    assert summary.max_tokens is not None and summary.max_tokens <= 20_000
    entry = agent.runtime.session.branch()[-1]
    assert entry["summary"].startswith("## Goal")


async def test_an_unusable_in_place_summary_is_asked_again_pasted(make_agent):
    agent = make_agent(options=ANTHROPIC)
    await chat(agent, 2)
    agent.model.script(
        replies.text("A big answer", usage=FULL),
        replies.tool_calls([("call-9", "read", {"path": "app.py"})], usage=FULL),
        replies.text(SUMMARY, usage={"prompt_tokens": 3000, "completion_tokens": 40}),
    )
    await agent.prompt("one more " + "context " * 60)
    in_place_request, pasted = agent.model.requests[-2:]
    assert in_place(in_place_request)
    assert pasted.system_prompt == SUMMARIZER_SYSTEM_PROMPT and not pasted.tools
    assert pasted.cache_retention == "none" and pasted.session_id is None
    assert agent.entry_types()[-1] == "compaction"
    # The unusable answer was paid for: the entry records both calls.
    usage = agent.runtime.session.branch()[-1]["usage"]
    assert (usage["cacheRead"], usage["input"], usage["output"]) == (18_000, 1000 + 3000, 50)


async def test_summaries_are_pasted_when_the_cache_has_gone_cold(make_agent):
    agent = make_agent(options=ANTHROPIC)
    await chat(agent, 3)
    anchor = agent.runtime.cache_anchor
    agent.runtime.cache_anchor = attrs.evolve(anchor, sent_at=anchor.sent_at - 600)
    agent.model.script(replies.text(SUMMARY))
    await agent.agent.compact(agent.runtime, None)
    summary = agent.model.requests[-1]
    assert not in_place(summary) and summary.system_prompt == SUMMARIZER_SYSTEM_PROMPT


async def test_summaries_are_pasted_when_the_provider_showed_no_caching(make_agent):
    agent = make_agent(options=ANTHROPIC)
    await chat(agent, 3, usage={"prompt_tokens": 400, "completion_tokens": 5})
    agent.model.script(replies.text(SUMMARY))
    await agent.agent.compact(agent.runtime, None)
    assert not in_place(agent.model.requests[-1])


async def test_summaries_by_another_model_are_pasted(make_agent):
    options = {**ANTHROPIC, "compaction": {**ANTHROPIC["compaction"], "model": "openai/gpt-4o"}}
    agent = make_agent(options=options)
    await chat(agent, 3)
    agent.model.script(replies.text(SUMMARY))
    await agent.agent.compact(agent.runtime, None)
    summary = agent.model.requests[-1]
    assert not in_place(summary) and summary.model.model == "openai/gpt-4o"


async def test_after_a_compaction_the_breakpoints_start_over_on_the_new_prefix(make_agent):
    agent = make_agent(options=ANTHROPIC)
    await compact_after_cached_turns(agent)
    agent.model.script(replies.text("Fine.", usage=CACHED))
    await agent.prompt("next question")
    request = agent.model.requests[-1]
    assert "summary" in text_of(request.messages[0]).lower()
    newest = len(chat_payload(request)[0]) - 1
    assert marks(request)[:2] == ["tool", "system"] and f"user {newest}" in marks(request)


async def test_a_second_compaction_updates_the_summary_in_place(make_agent):
    agent = make_agent(options=ANTHROPIC)
    await compact_after_cached_turns(agent)
    await chat(agent, 2)
    agent.model.script(replies.text("A big answer", usage=FULL), replies.text(SUMMARY))
    await agent.prompt("yet another " + "context " * 60)
    summary = agent.model.requests[-1]
    assert agent.entry_types().count("compaction") == 2 and in_place(summary)
    assert "<summary>" in text_of(summary.messages[0])  # the previous checkpoint opens the prefix
    assert "first message above holds the checkpoint" in text_of(summary.messages[-1])


# ------------------------------------------------------------------ navigation


def entry_ids(agent, role: str) -> list[str]:
    return [
        entry.id
        for entry in agent.runtime.session.branch()
        if entry.type == "message" and entry.role == role
    ]


async def test_a_branch_summary_resends_the_cached_branch_and_names_where_it_starts(make_agent):
    agent = make_agent(options=ANTHROPIC)
    await chat(agent, 3)
    last_request = agent.model.requests[-1]
    target = entry_ids(agent, "assistant")[0]  # back to after the first answer
    agent.model.script(replies.text("## Goal\nExplored questions 1 and 2"))
    result = await agent.services.navigator.navigate(agent.runtime, target, summarize=True)
    summary = agent.model.requests[-1]
    assert in_place(summary)
    assert list(summary.messages[: len(last_request.messages)]) == list(last_request.messages)
    assert text_of(summary.messages[-2]).startswith("Answer 2")  # the whole branch is there
    assert 'beginning "Question 1: context context' in text_of(summary.messages[-1])
    assert result.summary_entry_id is not None


async def test_a_branch_with_a_compaction_on_it_is_summarized_pasted(make_agent):
    agent = make_agent(options=ANTHROPIC)
    target = None
    await chat(agent, 1)
    target = entry_ids(agent, "assistant")[0]
    await compact_after_cached_turns(agent)
    agent.model.script(replies.text("## Goal\nA long branch"))
    await agent.services.navigator.navigate(agent.runtime, target, summarize=True)
    assert not in_place(agent.model.requests[-1])


async def test_requests_after_a_navigation_are_marked_on_the_new_branch(make_agent):
    agent = make_agent(options=ANTHROPIC)
    await chat(agent, 2)
    target = entry_ids(agent, "assistant")[0]
    await agent.services.navigator.navigate(agent.runtime, target)
    agent.model.script(replies.text("Other answer", usage=CACHED))
    await agent.prompt("A different second question")
    request = agent.model.requests[-1]
    assert [text_of(message)[:8] for message in request.messages] == [
        "Question",
        "Answer 0",
        "A differ",
    ]
    assert marks(request) == ["tool", "system", "user 1", "user 3"]
    assert agent.runtime.cache_anchor is not None
    assert agent.runtime.cache_anchor.request is request


async def read_a_long_file(agent) -> None:
    (agent.workspace / "long.py").write_text("value = 1  # a long generated table\n" * 400)
    agent.model.script(
        replies.tool_calls([("call-1", "read", {"path": "long.py"})], usage=CACHED),
        replies.text("It is a table. " + "details " * 20, usage=CACHED),
    )
    await agent.prompt("What is in long.py?")
    await chat(agent, 2)


async def test_the_pasted_form_is_used_where_it_is_the_cheaper_one(make_agent):
    # gpt-4o reads its cache at half the input price; pasted, the long tool output is cut to
    # 2000 characters, which makes that form cheaper than reading the whole output.
    agent = make_agent(options={**ANTHROPIC, "model": "openai/gpt-4o"})
    await read_a_long_file(agent)
    agent.model.script(replies.text(SUMMARY))
    await agent.agent.compact(agent.runtime, None)
    assert not in_place(agent.model.requests[-1])
    # At a tenth of the price (Anthropic) reading the whole conversation is still the cheaper.
    agent = make_agent(options=ANTHROPIC)
    await read_a_long_file(agent)
    agent.model.script(replies.text(SUMMARY))
    await agent.agent.compact(agent.runtime, None)
    assert in_place(agent.model.requests[-1])


def without_marks(value: Any) -> Any:
    """``value`` without its cache_control (providers compare cached content without it), and
    with a marked string content turned back into the plain string it was."""
    if isinstance(value, dict):
        stripped = {
            key: without_marks(item) for key, item in value.items() if key != "cache_control"
        }
        content = stripped.get("content")
        if isinstance(content, list) and len(content) == 1 and set(content[0]) == {"type", "text"}:
            stripped["content"] = content[0]["text"]
        return stripped
    if isinstance(value, list):
        return [without_marks(item) for item in value]
    return value


async def test_every_request_repeats_the_previous_one_exactly_before_adding_to_it(make_agent):
    agent = make_agent(options=ANTHROPIC)
    thinking_and_two_calls = replies.Reply(
        deltas=(
            {"role": "assistant"},
            {"reasoning_content": "Two files to look at."},
            *replies.tool_calls(
                [("call-1", "read", {"path": "app.py"}), ("call-2", "ls", {"path": "."})]
            ).deltas,
        ),
        finish_reason="tool_calls",
        usage=CACHED,
    )
    agent.model.script(
        thinking_and_two_calls,
        replies.text("Found it.", reasoning="The minus is the bug.", usage=CACHED),
    )
    await agent.prompt("What is wrong?")
    await chat(agent, 1)
    payloads = [chat_payload(request) for request in agent.model.requests]
    for (messages, tools), (next_messages, next_tools) in itertools.pairwise(payloads):
        assert without_marks(tools) == without_marks(next_tools)
        assert without_marks(next_messages[: len(messages)]) == without_marks(messages)
    # The thinking of each answer goes back with it, before its tool calls, in stream order.
    answer = payloads[1][0][2]
    assert answer["reasoning_content"] == "Two files to look at."
    assert [call["id"] for call in answer["tool_calls"]] == ["call-1", "call-2"]
    assert [message.get("tool_call_id") for message in payloads[1][0][3:5]] == ["call-1", "call-2"]
