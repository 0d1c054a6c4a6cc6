"""The scripted server's prompt-cache simulator: Anthropic's breakpoint rules and OpenAI's
automatic prefix caching (``pi_lsp.scripted_llm.prompt_cache``)."""

from __future__ import annotations

from typing import Any

import pytest

from pi_lsp.scripted_llm.prompt_cache import CacheRequestError, PromptCache, estimate_tokens

MARK = {"type": "ephemeral"}
HOUR = {"type": "ephemeral", "ttl": "1h"}
FILLER = "lorem ipsum " * 500  # about 1500 tokens: over the minimum on its own


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cache(clock: Clock) -> PromptCache:
    return PromptCache(clock=clock)


def text(value: str, mark: dict[str, Any] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": value}
    if mark:
        block["cache_control"] = mark
    return block


def body(*turns: str, mark_last: bool = True, system_mark: dict | None = MARK) -> dict[str, Any]:
    """A Messages request: a big system prompt and alternating user/assistant turns."""
    messages = []
    for index, turn in enumerate(turns):
        role = "user" if index % 2 == 0 else "assistant"
        last = index == len(turns) - 1
        messages.append(
            {"role": role, "content": [text(turn, MARK if last and mark_last else None)]}
        )
    return {"model": "claude", "system": [text(FILLER, system_mark)], "messages": messages}


def test_the_first_request_writes_up_to_its_last_breakpoint(cache):
    usage = cache.anthropic_usage(body("question one"))
    assert usage.cache_read == 0 and usage.input_tokens == 0
    assert usage.cache_write == usage.prompt_tokens > 1024


def test_the_next_request_reads_the_earlier_prefix_and_writes_only_what_is_new(cache):
    first = cache.anthropic_usage(body("question one"))
    second = cache.anthropic_usage(body("question one", "answer one", "question two"))
    assert second.cache_read == first.prompt_tokens
    assert second.cache_write == second.prompt_tokens - first.prompt_tokens
    assert second.input_tokens == 0


def test_the_prefix_is_found_up_to_twenty_blocks_before_a_breakpoint(cache):
    turns = ["q"] + ["block"] * 20
    cache.anthropic_usage(body("q"))
    near = cache.anthropic_usage(body(*turns[:20]))  # the cached prefix is 19 blocks back
    assert near.cache_read > 0
    cache.clear()
    cache.anthropic_usage(body("q"))
    far = cache.anthropic_usage(body(*turns[:22]))  # 21 blocks back: out of reach
    system_only = estimate_tokens(text(FILLER))
    assert far.cache_read == system_only


def test_content_after_the_last_breakpoint_is_plain_input(cache):
    usage = cache.anthropic_usage(body("question", "answer", "more", mark_last=False))
    assert usage.input_tokens > 0 and usage.cache_write == estimate_tokens(text(FILLER))


def test_entries_expire_after_their_ttl_and_a_read_refreshes_it(cache, clock):
    cache.anthropic_usage(body("q1"))
    clock.now += 200
    assert cache.anthropic_usage(body("q1")).cache_read > 0  # refreshed: lives 300 s from now
    clock.now += 250
    assert cache.anthropic_usage(body("q1")).cache_read > 0
    clock.now += 301
    assert cache.anthropic_usage(body("q1")).cache_read == 0


def test_one_hour_breakpoints_live_an_hour_and_are_reported_apart(cache, clock):
    request = body("q1", system_mark=HOUR)
    request["messages"][-1]["content"][-1]["cache_control"] = HOUR
    first = cache.anthropic_usage(request)
    assert first.cache_write_1h == first.cache_write > 0
    clock.now += 3000
    assert cache.anthropic_usage(request).cache_read == first.cache_write


def test_short_prefixes_are_not_cached(cache):
    request = {"model": "claude", "messages": [{"role": "user", "content": [text("hi", MARK)]}]}
    assert cache.anthropic_usage(request).cache_write == 0
    assert cache.anthropic_usage(request).cache_read == 0


def test_markers_are_not_part_of_the_cached_content(cache):
    cache.anthropic_usage(body("q1", "a1", "q2"))
    moved = body("q1", "a1", "q2", "a2", "q3")
    moved["messages"][2]["content"][0]["cache_control"] = MARK  # q2 marked again, elsewhere too
    assert cache.anthropic_usage(moved).cache_read > 0


def test_another_model_or_other_tools_do_not_share_the_cache(cache):
    cache.anthropic_usage(body("q1"))
    assert cache.anthropic_usage({**body("q1"), "model": "other"}).cache_read == 0
    with_tools = {**body("q1"), "tools": [{"name": "read", "input_schema": {}}]}
    assert cache.anthropic_usage(with_tools).cache_read == 0


def test_a_changed_tool_choice_keeps_the_system_prompt_but_not_the_messages(cache):
    cache.anthropic_usage(body("q1", "a1", "q2"))
    changed = {**body("q1", "a1", "q2"), "tool_choice": {"type": "none"}}
    assert cache.anthropic_usage(changed).cache_read == estimate_tokens(text(FILLER))


def test_the_api_limits_are_enforced(cache):
    request = body("a", "b", "c", "d", "e")
    for message in request["messages"]:
        message["content"][0]["cache_control"] = MARK
    with pytest.raises(CacheRequestError, match="maximum of 4 blocks"):
        cache.anthropic_usage(request)
    out_of_order = body("q", system_mark=MARK)
    out_of_order["messages"][-1]["content"][-1]["cache_control"] = HOUR
    with pytest.raises(CacheRequestError, match="must not come after"):
        cache.anthropic_usage(out_of_order)


def test_a_breakpoint_inside_a_tool_result_counts(cache):
    result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [text(FILLER, MARK)],
    }
    request = {"model": "claude", "messages": [{"role": "user", "content": [result]}]}
    assert cache.anthropic_usage(request).cache_write > 1024


def chat(*contents: str, key: str | None = None, retention: str | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": "gpt",
        "messages": [{"role": "user", "content": content} for content in contents],
    }
    if key:
        request["prompt_cache_key"] = key
    if retention:
        request["prompt_cache_retention"] = retention
    return request


def test_openai_caches_every_prefix_automatically_in_128_token_steps(cache):
    first = cache.openai_usage(chat(FILLER, "q1"))
    assert first.cache_read == 0 and first.cache_write == 0
    second = cache.openai_usage(chat(FILLER, "q1", "q2"))
    assert second.cache_read >= 1024 and (second.cache_read - 1024) % 128 == 0
    assert second.cache_read <= first.prompt_tokens < second.cache_read + 128


def test_openai_scopes_the_cache_by_prompt_cache_key_and_keeps_it_24_hours_on_request(cache, clock):
    cache.openai_usage(chat(FILLER, key="a"))
    assert cache.openai_usage(chat(FILLER, key="b")).cache_read == 0
    assert cache.openai_usage(chat(FILLER, key="a")).cache_read > 0
    clock.now += 601
    assert cache.openai_usage(chat(FILLER, key="a")).cache_read == 0
    cache.openai_usage(chat(FILLER, key="a", retention="24h"))
    clock.now += 3600
    assert cache.openai_usage(chat(FILLER, key="a", retention="24h")).cache_read > 0
