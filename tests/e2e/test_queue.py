"""The queue over LSP: ``pi/queue``, ``queue_update``, ``pi/clearQueue``, ``pi/removeQueued``,
``pi/editQueued``, both modes of ``steeringMode`` and ``followUpMode`` (what the model receives and
when; ``tests/conformance/test_queue_against_pi16.py`` plays the same scenarios on pi 1.6), and
``pi/abort`` keeping the queue as pi 1.6's RPC ``abort`` does."""

from __future__ import annotations

import asyncio

import pytest

from pi_lsp.client import PiRequestError
from pi_lsp.errors import InvalidParamsError, PromptTakenBackError
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.replies import gated
from tests.e2e.conftest import HOME, request
from tests.queue_scenarios import GATE, SCENARIOS, play_over_lsp

EXPECTED = {
    "follow-ups one-at-a-time": [
        ["user: start"],
        ["user: start", "assistant: First answer", "user: one"],
        ["user: start", "assistant: First answer", "user: one", "assistant: Answer 0", "user: two"],
    ],
    "follow-ups all": [
        ["user: start"],
        ["user: start", "assistant: First answer", "user: one", "user: two"],
    ],
    "steering one-at-a-time": [
        ["user: start"],
        ["user: start", "assistant calls read", "tool", "user: left"],
        [
            *["user: start", "assistant calls read", "tool", "user: left"],
            *["assistant: Answer 0", "user: right"],
        ],
    ],
    "steering all": [
        ["user: start"],
        ["user: start", "assistant calls read", "tool", "user: left", "user: right"],
    ],
    "steering before follow-ups, both all": [
        ["user: start"],
        ["user: start", "assistant: First answer", "user: now", "user: also"],
        [
            *["user: start", "assistant: First answer", "user: now", "user: also"],
            *["assistant: Answer 0", "user: later", "user: last"],
        ],
    ],
}


@pytest.fixture
def agent_settings():
    """pi's settings file in the server's agent directory, removed after the test."""
    path = HOME / "agent" / "settings.json"
    yield path
    path.unlink(missing_ok=True)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario.name)
async def test_the_modes_deliver_what_pi_16_delivers(
    client, scripted_llm, agent_settings, scenario
):
    scenario.write_settings(agent_settings.parent)
    await request(client, "pi/reload", {})
    queue = await request(client, "pi/queue", {})
    assert (queue["steeringMode"], queue["followUpMode"]) == (
        scenario.steering_mode,
        scenario.follow_up_mode,
    )
    assert await play_over_lsp(client, scripted_llm, scenario) == EXPECTED[scenario.name]


@pytest.mark.options(steeringMode="all")
async def test_the_editor_setting_wins_over_pi_settings(client, agent_settings):
    agent_settings.parent.mkdir(parents=True, exist_ok=True)
    agent_settings.write_text('{"steeringMode": "one-at-a-time", "followUpMode": "all"}')
    await request(client, "pi/reload", {})
    queue = await request(client, "pi/queue", {})
    assert (queue["steeringMode"], queue["followUpMode"]) == ("all", "all")
    state = await request(client, "pi/state", {})  # pi's get_state names them too
    assert (state["steeringMode"], state["followUpMode"], state["pendingMessageCount"]) == (
        "all",
        "all",
        0,
    )


async def start_held_turn(client, scripted_llm, *later_replies):
    scripted_llm.enqueue(gated(replies.text("First answer"), GATE), *later_replies)
    first = asyncio.ensure_future(request(client, "pi/prompt", {"text": "start"}))
    await scripted_llm.gates.reached(GATE)
    return first


async def queue_prompt(client, events, text: str, kind: str = "followUp"):
    before = len(events.of_type("queue_update"))
    sent = asyncio.ensure_future(
        request(client, "pi/prompt", {"text": text, "streamingBehavior": kind})
    )
    await events.wait_for("queue_update", count=before + 1)
    return sent


async def test_queue_updates_list_and_edit_and_remove_by_id(client, events, scripted_llm):
    first = await start_held_turn(client, scripted_llm, replies.text("Edited"))
    keep = await queue_prompt(client, events, "tpyo")
    drop = await queue_prompt(client, events, "never mind", "steer")
    update = events.of_type("queue_update")[-1]
    [steered] = update["steering"]
    [typo] = update["followUp"]
    assert (steered["text"], typo["text"]) == ("never mind", "tpyo")
    queue = await request(client, "pi/queue", {})
    assert (queue["steering"], queue["followUp"]) == ([steered], [typo])
    state = await request(client, "pi/state", {})
    assert state["pendingMessageCount"] == 2

    edited = await request(client, "pi/editQueued", {"id": typo["id"], "text": "typo fixed"})
    assert edited["followUp"] == [{"id": typo["id"], "text": "typo fixed"}]
    assert events.of_type("queue_update")[-1]["followUp"] == edited["followUp"]
    removed = await request(client, "pi/removeQueued", {"id": steered["id"]})
    assert removed["steering"] == [] and removed["followUp"] == edited["followUp"]
    with pytest.raises(PiRequestError) as taken_back:
        await drop
    assert taken_back.value.code == PromptTakenBackError.code

    scripted_llm.gates.release(GATE)
    await asyncio.gather(first, keep)
    sent = [str(body["messages"]) for body in scripted_llm.requests]
    assert "typo fixed" in sent[-1] and not any("never mind" in body for body in sent)
    assert events.of_type("queue_update")[-1] == {
        "type": "queue_update",
        "steering": [],
        "followUp": [],
    }
    for method, params in (
        ("pi/removeQueued", {"id": typo["id"]}),  # the agent took it
        ("pi/editQueued", {"id": "q-unknown", "text": "x"}),
    ):
        with pytest.raises(PiRequestError) as unknown:
            await request(client, method, params)
        assert unknown.value.code == InvalidParamsError.code and "no queued prompt" in str(
            unknown.value
        )


async def test_clear_queue_gives_the_texts_back_and_the_model_never_sees_them(
    client, events, scripted_llm
):
    first = await start_held_turn(client, scripted_llm)
    steer = await queue_prompt(client, events, "steer me", "steer")
    follow = await queue_prompt(client, events, "follow me")
    cleared = await request(client, "pi/clearQueue", {})
    assert cleared == {"steering": ["steer me"], "followUp": ["follow me"]}
    scripted_llm.gates.release(GATE)
    assert (await first)["stopReason"] == "stop"
    for taken_back in (steer, follow):
        with pytest.raises(PiRequestError):
            await taken_back
    assert len(scripted_llm.requests) == 1
    assert await request(client, "pi/clearQueue", {}) == {"steering": [], "followUp": []}


async def test_abort_keeps_the_queue_for_the_next_prompt_as_pi_16_rpc_does(
    client, events, scripted_llm
):
    first = await start_held_turn(client, scripted_llm)
    follow = await queue_prompt(client, events, "follow me")
    assert (await request(client, "pi/abort", {}))["aborted"] is True
    assert (await first)["stopReason"] == "aborted"
    queue = await request(client, "pi/queue", {})
    assert [prompt["text"] for prompt in queue["followUp"]] == ["follow me"]
    assert not follow.done() and len(scripted_llm.requests) == 1
    scripted_llm.gates.release(GATE)
    scripted_llm.enqueue(replies.text("Next answer"), replies.text("Followed"))
    await request(client, "pi/prompt", {"text": "next"})
    assert (await asyncio.wait_for(follow, 30))["stopReason"] == "stop"
    assert "follow me" in str(scripted_llm.requests[-1]["messages"][-1])
