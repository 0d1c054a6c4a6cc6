"""Cost from litellm's price table (1-hour cache writes, price tiers, missing cache prices), and
what a session spent: its totals over every branch and summary, as ``pi/state`` reports them."""

from __future__ import annotations

import json

import pytest

from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.double import replies
from pi_lsp.llm.models import model_info
from pi_lsp.llm.usage import usage_cost, usage_from_openai
from pi_lsp.session.stored_entry import index_line
from pi_lsp.session.usage_totals import UsageTally, UsageTotals, usage_totals

SONNET = ModelConfig(
    model="anthropic/claude-sonnet-4-5", provider="anthropic", model_id="claude-sonnet-4-5"
)
SONNET_PRICES = model_info(SONNET) or {}


def test_one_hour_writes_are_recorded_and_priced_apart():
    raw = {
        "prompt_tokens": 3000,
        "completion_tokens": 10,
        "prompt_tokens_details": {
            "cached_tokens": 1000,
            "cache_creation_tokens": 1500,
            "cache_creation_token_details": {"ephemeral_1h_input_tokens": 1000},
        },
    }
    usage = usage_from_openai(raw, SONNET)
    assert (usage["input"], usage["cacheRead"], usage["cacheWrite"]) == (500, 1000, 1500)
    assert usage["cacheWrite1h"] == 1000
    assert usage["cost"]["cacheWrite"] == pytest.approx(
        500 * SONNET_PRICES["cache_creation_input_token_cost"]
        + 1000 * SONNET_PRICES["cache_creation_input_token_cost_above_1hr"]
    )
    assert "cacheWrite1h" not in usage_from_openai({"prompt_tokens": 10}, SONNET)


def test_a_prompt_beyond_a_price_tier_is_priced_at_that_tier():
    model = ModelConfig(model="gemini/gemini-2.5-pro", provider="google", model_id="gemini-2.5-pro")
    prices = model_info(model) or {}
    assert "input_cost_per_token_above_200k_tokens" in prices
    small = usage_cost({"input": 100_000, "output": 0, "cacheRead": 0, "cacheWrite": 0}, model)
    large = usage_cost({"input": 250_000, "output": 0, "cacheRead": 0, "cacheWrite": 0}, model)
    assert small["input"] == pytest.approx(100_000 * prices["input_cost_per_token"])
    assert large["input"] == pytest.approx(
        250_000 * prices["input_cost_per_token_above_200k_tokens"]
    )


def test_cache_tokens_without_a_cache_price_cost_the_input_price():
    model = ModelConfig(model="openai/gpt-4", provider="openai", model_id="gpt-4")
    prices = model_info(model) or {}
    assert "cache_read_input_token_cost" not in prices
    cost = usage_cost({"input": 0, "output": 0, "cacheRead": 1000, "cacheWrite": 0}, model)
    assert cost["cacheRead"] == pytest.approx(1000 * prices["input_cost_per_token"])


def usage(cost: float, **tokens: int) -> dict:
    fields = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, **tokens}
    return {**fields, "cost": {"total": cost}}


def entries() -> list[dict]:
    def answer(entry_id: str, record: dict) -> dict:
        return {
            "type": "message",
            "id": entry_id,
            "message": {"role": "assistant", "usage": record},
        }

    return [
        {"type": "message", "id": "u1", "message": {"role": "user", "content": "hi"}},
        answer("a1", usage(0.01, input=100, output=10)),
        answer("a2", usage(0.002, cacheRead=900, cacheWrite=100, output=5)),
        {"type": "compaction", "id": "c1", "usage": usage(0.003, input=400, output=50)},
        {"type": "branch_summary", "id": "b1", "usage": usage(0.001, cacheRead=300, output=20)},
        {"type": "message", "id": "a3", "message": {"role": "assistant"}},  # no usage at all
    ]


def test_totals_count_answers_and_summaries_on_every_branch():
    totals = usage_totals(entries())
    assert (totals.input, totals.output, totals.cache_read, totals.cache_write) == (
        500,
        85,
        1200,
        100,
    )
    assert totals.cost == pytest.approx(0.016)
    assert totals.cached_percent == pytest.approx(66.7)
    assert UsageTotals().cached_percent is None


def test_totals_over_stored_entries_leave_them_undecoded():
    # pi/state totals every entry of the file: a big session's bodies must not stay in memory.
    lines = [json.dumps(entry).encode() for entry in entries()]
    stored = [index_line(line, 0, len(line)) for line in lines]
    assert usage_totals(stored) == usage_totals(entries())
    assert not any(entry.is_decoded for entry in stored)


def test_the_tally_reads_only_what_was_appended():
    tally = UsageTally()
    recorded = entries()[:2]
    assert tally.totals(recorded).input == 100
    recorded.append(entries()[3])
    assert tally.totals(recorded).input == 500
    assert tally.totals(entries()).input == 500  # another list: counted from the start


async def test_pi_state_reports_the_session_cost(make_agent):
    agent = make_agent(options={"model": "anthropic/claude-sonnet-4-5"})
    cached = {
        "prompt_tokens": 2000,
        "completion_tokens": 100,
        "prompt_tokens_details": {"cached_tokens": 1500, "cache_creation_tokens": 400},
    }
    agent.model.script(replies.text("One.", usage=cached), replies.text("Two.", usage=cached))
    await agent.prompt("first")
    await agent.prompt("second")
    from pi_lsp.agent.state import session_state

    state = session_state(agent.services.live, agent.runtime)
    assert (state.cost.input, state.cost.cache_read, state.cost.cache_write) == (200, 3000, 800)
    assert state.cost.cached_percent == 75.0
    one = usage_from_openai(cached, SONNET)["cost"]["total"]
    assert state.cost.total == pytest.approx(2 * one)
