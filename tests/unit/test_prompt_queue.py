"""The queue of prompts sent during a turn: pi 1.6's steering and follow-up delivery in both modes
(``steeringMode``, ``followUpMode``), what the model receives and when, and taking prompts back."""

from __future__ import annotations

import asyncio
import json

import pytest

from pi_lsp.errors import InvalidParamsError, PromptTakenBackError
from pi_lsp.llm.double import replies
from pi_lsp.protocol import QueueUpdateEvent


def read_call(call_id: str = "call-1"):
    return replies.tool_calls([(call_id, "read", {"path": "app.py"})])


def trailing_user_texts(request) -> list[str]:
    """The texts of the user messages a request ends with (what was just delivered)."""
    texts: list[str] = []
    for message in reversed(request.messages):
        if message["role"] != "user":
            break
        content = message["content"]
        texts.insert(0, content if isinstance(content, str) else content[0]["text"])
    return texts


def queue_texts(agent) -> tuple[list[str], list[str]]:
    result = agent.agent.queue(agent.runtime)
    return [q.text for q in result.steering], [q.text for q in result.follow_up]


async def queue_during_held_answer(agent, held, prompts: list[tuple[str, str | None]], then=()):
    """Start "start", hold its first answer, queue ``prompts`` (text, behavior), release; the
    model answers ``then`` after the held answer."""
    gate = agent.model.hold(held)
    agent.model.script(*then)
    first = agent.start_prompt("start")
    await gate.reached()
    queued = [agent.start_prompt(text, behavior) for text, behavior in prompts]
    while sum(map(len, queue_texts(agent))) < len(prompts):
        await asyncio.sleep(0.001)
    gate.release()
    return await asyncio.gather(first, *queued)


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_follow_ups_are_delivered_when_the_agent_would_stop_by_the_mode(make_agent, mode):
    agent = make_agent(options={"followUpMode": mode})
    results = await queue_during_held_answer(
        agent,
        replies.text("First"),
        [("one", None), ("two", None)],
        [replies.text(f"Answer {index}") for index in range(2)],
    )
    delivered = [trailing_user_texts(request) for request in agent.model.requests]
    if mode == "one-at-a-time":
        assert delivered == [["start"], ["one"], ["two"]]
        assert agent.event_types().count("agent_start") == 3
    else:
        assert delivered == [["start"], ["one", "two"]]
        assert results[1] == results[2]  # both resolve with the turn that delivered them
        assert agent.event_types().count("agent_start") == 2
    assert queue_texts(agent) == ([], [])


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_steering_is_delivered_after_each_answer_by_the_mode(make_agent, mode):
    agent = make_agent(options={"steeringMode": mode})
    results = await queue_during_held_answer(
        agent,
        read_call(),
        [("left", "steer"), ("right", "steer")],
        [replies.text("Steered once"), replies.text("Steered twice")],
    )
    requests = agent.model.requests
    if mode == "one-at-a-time":
        # one steering prompt after the tool batch, the next after the answer to it
        assert [trailing_user_texts(r) for r in requests] == [["start"], ["left"], ["right"]]
        assert requests[1].messages[-2]["role"] == "toolResult"
    else:
        assert [trailing_user_texts(r) for r in requests] == [["start"], ["left", "right"]]
    assert results[0] == results[1] == results[2]
    assert agent.event_types().count("agent_start") == 1


async def test_steering_goes_before_follow_ups(agent):
    await queue_during_held_answer(
        agent,
        replies.text("First"),
        [("later", None), ("now", "steer")],
        [replies.text("Steered"), replies.text("Followed")],
    )
    assert [trailing_user_texts(r) for r in agent.model.requests] == [
        ["start"],
        ["now"],
        ["later"],
    ]


async def test_the_modes_come_from_pi_settings_and_the_editor_wins(make_agent):
    from_pi = make_agent()
    assert from_pi.agent.queue(from_pi.runtime).follow_up_mode == "one-at-a-time"  # pi's default
    (from_pi.workspace / ".pi").mkdir()
    (from_pi.workspace / ".pi" / "settings.json").write_text(
        json.dumps({"steeringMode": "all", "followUpMode": "all"})
    )
    from_pi.services.resources.reload()
    result = from_pi.agent.queue(from_pi.runtime)
    assert (result.steering_mode, result.follow_up_mode) == ("all", "all")
    editor_wins = make_agent(options={"steeringMode": "one-at-a-time"})
    (editor_wins.workspace / ".pi").mkdir()
    (editor_wins.workspace / ".pi" / "settings.json").write_text(
        json.dumps({"steeringMode": "all"})
    )
    editor_wins.services.resources.reload()
    assert editor_wins.agent.queue(editor_wins.runtime).steering_mode == "one-at-a-time"


async def hold_first_answer(agent, *later):
    """Start "start" with its answer held open (``later`` answers after it): (gate, its task)."""
    gate = agent.model.hold(replies.text("First"))
    agent.model.script(*later)
    first = agent.start_prompt("start")
    await gate.reached()
    return gate, first


async def test_every_change_of_the_queue_is_announced(agent):
    gate, first = await hold_first_answer(agent, replies.text("Second"))
    second = agent.start_prompt("queued", None)
    update = await agent.wait_for("queue_update")
    assert isinstance(update, QueueUpdateEvent)
    assert [q.text for q in update.follow_up] == ["queued"] and update.steering == []
    gate.release()
    await asyncio.gather(first, second)
    updates = agent.events("queue_update")
    assert len(updates) == 2 and updates[-1].follow_up == []  # taken by the agent


async def test_prompts_taken_back_never_reach_the_model(agent):
    gate, first = await hold_first_answer(agent)
    steer = agent.start_prompt("steer me", "steer")
    follow = agent.start_prompt("follow me", None)
    await agent.wait_for("queue_update", 2)
    cleared = agent.agent.clear_queue(agent.runtime)
    assert (cleared.steering, cleared.follow_up) == (["steer me"], ["follow me"])
    gate.release()
    assert (await first).stop_reason == "stop"
    for request in (steer, follow):
        with pytest.raises(PromptTakenBackError):
            await request
    assert len(agent.model.requests) == 1
    assert agent.events("queue_update")[-1] == QueueUpdateEvent([], [])


async def test_one_queued_prompt_is_edited_or_removed_by_id(agent):
    gate, first = await hold_first_answer(agent, replies.text("Edited answer"))
    keep = agent.start_prompt("typo", None)
    drop = agent.start_prompt("never mind", None)
    await agent.wait_for("queue_update", 2)
    typo, never = agent.agent.queue(agent.runtime).follow_up
    edited = agent.agent.edit_queued(agent.runtime, typo.id, "fixed")
    assert [(q.id, q.text) for q in edited.follow_up] == [
        (typo.id, "fixed"),
        (never.id, never.text),
    ]
    assert agent.agent.remove_queued(agent.runtime, never.id).follow_up == edited.follow_up[:1]
    with pytest.raises(PromptTakenBackError):
        await drop
    gate.release()
    await asyncio.gather(first, keep)
    assert [trailing_user_texts(r) for r in agent.model.requests] == [["start"], ["fixed"]]
    with pytest.raises(InvalidParamsError, match=typo.id):
        agent.agent.remove_queued(agent.runtime, typo.id)  # the agent took it
    with pytest.raises(InvalidParamsError, match="no queued prompt"):
        agent.agent.edit_queued(agent.runtime, "q-none", "text")


async def test_after_an_abort_the_queue_waits_for_the_next_prompt(agent):
    gate = agent.model.hold(replies.text("Never finished", chunks=4), after=2)
    first = agent.start_prompt("start")
    await gate.reached()
    steer = agent.start_prompt("steer me", "steer")
    follow = agent.start_prompt("follow me", None)
    await agent.wait_for("queue_update", 2)
    agent.agent.abort(agent.runtime)
    assert (await first).stop_reason == "aborted"
    assert queue_texts(agent) == (["steer me"], ["follow me"]) and not steer.done()
    agent.model.script(replies.text("Next"), replies.text("Followed"))
    next_result = await agent.prompt("next")
    # pi's loop takes the queued steering with the new prompt, the follow-up when it would stop
    assert [trailing_user_texts(r) for r in agent.model.requests[1:]] == [
        ["next", "steer me"],
        ["follow me"],
    ]
    assert await steer == next_result
    assert (await follow).stop_reason == "stop"
