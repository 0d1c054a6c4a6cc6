"""Navigation in process: moving the leaf, and summarizing the branch being left with events and
progress; a failed or aborted summary leaves the leaf where it was."""

import asyncio

import pytest

from pi_lsp.errors import SummaryError, TurnInProgressError
from pi_lsp.llm.double import replies


async def chat(agent, turns: int) -> None:
    for index in range(turns):
        agent.model.script(replies.text(f"Answer {index}"))
        await agent.prompt(f"Question {index}")


def first_answer_id(agent) -> str:
    return next(
        entry.id
        for entry in agent.runtime.session.branch()
        if entry.type == "message" and entry.role == "assistant"
    )


async def test_landing_on_a_user_message_hands_its_text_back(agent):
    await chat(agent, 2)
    second_question = [e for e in agent.runtime.session.branch() if e.type == "message"][2]
    result = await agent.services.navigator.navigate(agent.runtime, second_question.id)
    assert result.editor_text == "Question 1" and result.summary_entry_id is None
    assert result.leaf_id == first_answer_id(agent)
    assert agent.event_types()[-1] == "tree_changed"


async def test_a_summarized_navigation_sends_events_and_progress(agent):
    await chat(agent, 2)
    old_leaf = agent.runtime.session.leaf_id
    target = first_answer_id(agent)
    agent.model.script(replies.text("## Goal\nExplored question 1"))
    reports: list[str] = []
    result = await agent.services.navigator.navigate(
        agent.runtime, target, summarize=True, progress=reports.append
    )
    assert agent.event_types()[-3:] == [
        "branch_summary_start",
        "branch_summary_end",
        "tree_changed",
    ]
    start, end = agent.events("branch_summary_start")[0], agent.events("branch_summary_end")[0]
    assert start.target_id == end.target_id == target
    assert end.entry_id == result.summary_entry_id == result.leaf_id and not end.aborted
    assert reports == ["Summarizing 2 messages of the branch being left"]
    summary = agent.runtime.session.by_id[result.summary_entry_id]
    assert summary["fromId"] == old_leaf and "Explored question 1" in summary["summary"]
    assert not agent.runtime.compacting


async def test_a_failed_summary_leaves_the_leaf_and_says_why(agent):
    await chat(agent, 2)
    old_leaf = agent.runtime.session.leaf_id
    agent.model.script(replies.error(400, "bad request"))
    with pytest.raises(SummaryError):
        await agent.services.navigator.navigate(
            agent.runtime, first_answer_id(agent), summarize=True
        )
    end = agent.events("branch_summary_end")[-1]
    assert not end.aborted and "bad request" in end.error_message and end.entry_id is None
    assert agent.runtime.session.leaf_id == old_leaf


async def test_an_aborted_summary_leaves_the_leaf_and_the_session_is_busy_meanwhile(agent):
    await chat(agent, 2)
    old_leaf = agent.runtime.session.leaf_id
    gate = agent.model.hold(replies.text("## Goal\nnever finished"))
    navigation = asyncio.ensure_future(
        agent.services.navigator.navigate(agent.runtime, first_answer_id(agent), summarize=True)
    )
    await gate.reached()
    with pytest.raises(TurnInProgressError):
        await agent.services.navigator.navigate(agent.runtime, first_answer_id(agent))
    assert agent.agent.abort(agent.runtime) is True
    with pytest.raises(asyncio.CancelledError):
        await navigation
    assert agent.events("branch_summary_end")[-1].aborted
    assert agent.runtime.session.leaf_id == old_leaf and not agent.runtime.compacting


async def test_going_forward_again_leaves_nothing_behind_to_summarize(agent):
    await chat(agent, 2)
    last_answer = agent.runtime.session.leaf_id
    navigator = agent.services.navigator
    await navigator.navigate(agent.runtime, first_answer_id(agent))  # back, without a summary
    requests = len(agent.model.requests)
    result = await navigator.navigate(agent.runtime, last_answer, summarize=True)
    assert result.leaf_id == last_answer and result.summary_entry_id is None
    assert len(agent.model.requests) == requests  # the model was not asked
    end = agent.events("branch_summary_end")[-1]
    assert end.entry_id is None and end.error_message is None and not end.aborted
