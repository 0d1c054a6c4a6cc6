"""The agent's orchestration with the in-process model double: turns, tool rounds, queueing,
steering, follow-ups, aborts at each stage, retries, automatic compaction and overflow recovery."""

import asyncio
from typing import Any, ClassVar

import pytest

from pi_lsp.errors import CompactionCancelledError, PromptTakenBackError
from pi_lsp.llm.double import NO_REPLY_MESSAGE, replies
from pi_lsp.tools.base import Tool, ToolContext, ToolResult, text_result
from pi_lsp.tools.registry import default_tools
from tests.agent_harness import text_of

SUMMARY = "## Goal\nFix add() in app.py\n\n## Progress\n- [x] Read app.py"
SMALL = {
    "compaction": {"keepRecentTokens": 100, "reserveTokens": 1000},
    "contextWindow": 3000,
}
BIG_USAGE = {"prompt_tokens": 2500, "completion_tokens": 10, "total_tokens": 2510}
SMALL_USAGE = {"prompt_tokens": 300, "completion_tokens": 5, "total_tokens": 305}


def read_call(call_id: str = "call-1", path: str = "app.py"):
    return replies.tool_calls([(call_id, "read", {"path": path})])


async def chat(agent, turns: int) -> None:
    for index in range(turns):
        agent.model.script(replies.text(f"Answer {index}: " + "details " * 30, usage=SMALL_USAGE))
        await agent.prompt(f"Question {index}: " + "context " * 30)


def roles_and_texts(agent) -> list[tuple[str, str]]:
    return [(message["role"], text_of(message)) for message in agent.messages()]


class BlockingTool(Tool):
    """A tool that runs until released (or cancelled), to abort a turn while a tool runs."""

    name = "block"
    description = "Waits."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        self.started.set()
        await self.release.wait()
        return text_result("released")


# ------------------------------------------------------------------------------------ turns


async def test_a_prompt_runs_a_turn_and_streams_its_events(agent):
    agent.model.script(replies.text("Hello there", chunks=4))
    result = await agent.prompt("Hi")
    assert result.stop_reason == "stop" and result.leaf_id == agent.runtime.session.leaf_id
    assert roles_and_texts(agent) == [("user", "Hi"), ("assistant", "Hello there")]
    types = agent.event_types()
    assert types[:3] == ["agent_start", "message_end", "message_start"]
    assert types[-3:] == ["message_end", "agent_end", "tree_changed"]
    assert "".join(event.delta for event in agent.events("text_delta")) == "Hello there"
    assert result.usage["totalTokens"] > 0 and result.context_tokens == result.usage["totalTokens"]


async def test_a_tool_round_runs_the_tool_and_sends_its_result_back(agent):
    agent.model.script(read_call(), replies.text("It subtracts."))
    result = await agent.prompt("What does app.py do?")
    assert result.stop_reason == "stop"
    assert [message["role"] for message in agent.messages()] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    end = agent.events("tool_execution_end")[0]
    assert end.tool_call_id == "call-1" and end.name == "read" and not end.is_error
    assert "return a - b" in text_of(agent.messages()[2])
    second_request = agent.model.requests[1]
    assert second_request.messages[-1]["role"] == "toolResult"
    assert {tool.name for tool in second_request.tools} >= {"read", "bash", "edit"}


async def test_without_a_scripted_reply_the_turn_ends_in_an_error_not_a_hang(agent):
    result = await agent.prompt("Hi")
    assert result.stop_reason == "error" and NO_REPLY_MESSAGE in result.error_message


# ------------------------------------------------------------------------------------ queueing


async def test_a_prompt_sent_during_a_turn_is_queued_as_a_follow_up(agent):
    gate = agent.model.hold(replies.text("First answer", chunks=3))
    agent.model.script(replies.text("Second answer"))
    first = agent.start_prompt("first")
    await gate.reached()
    second = agent.start_prompt("second")
    await asyncio.sleep(0.01)
    assert len(agent.runtime.queue.follow_ups) == 1 and not second.done()
    gate.release()
    first_result, second_result = await asyncio.gather(first, second)
    assert roles_and_texts(agent) == [
        ("user", "first"),
        ("assistant", "First answer"),
        ("user", "second"),
        ("assistant", "Second answer"),
    ]
    assert first_result.leaf_id != second_result.leaf_id
    assert second_result.leaf_id == agent.runtime.session.leaf_id
    assert agent.event_types().count("agent_start") == 2
    assert agent.runtime.turn is None


async def test_a_steering_prompt_is_delivered_after_the_current_tool_batch(agent):
    gate = agent.model.hold(read_call(), after=1)
    agent.model.script(replies.text("Done, and steered."))
    first = agent.start_prompt("read it")
    await gate.reached()
    steer = agent.start_prompt("also explain it", behavior="steer")
    await asyncio.sleep(0.01)
    gate.release()
    first_result, steer_result = await asyncio.gather(first, steer)
    assert [role for role, _ in roles_and_texts(agent)] == [
        "user",
        "assistant",
        "toolResult",
        "user",
        "assistant",
    ]
    assert roles_and_texts(agent)[3] == ("user", "also explain it")
    assert first_result == steer_result  # the steered request resolves with its turn's result
    assert agent.event_types().count("agent_start") == 1
    # the model's second request saw the steering message after the tool result
    assert agent.model.requests[1].messages[-1]["role"] == "user"


async def test_steering_that_arrives_during_the_last_answer_is_answered_in_the_same_turn(agent):
    # pi 1.6's agent loop polls steering after every answer, not only after tool batches.
    gate = agent.model.hold(replies.text("No tools needed"))
    agent.model.script(replies.text("Now steered"))
    first = agent.start_prompt("first")
    await gate.reached()
    steer = agent.start_prompt("late steering", behavior="steer")
    await asyncio.sleep(0.01)
    gate.release()
    first_result, steer_result = await asyncio.gather(first, steer)
    assert [text for _, text in roles_and_texts(agent)] == [
        "first",
        "No tools needed",
        "late steering",
        "Now steered",
    ]
    assert first_result == steer_result
    assert agent.event_types().count("agent_start") == 1


# ------------------------------------------------------------------------------------ aborts


async def test_abort_while_streaming_keeps_the_partial_answer_and_the_queue(agent):
    gate = agent.model.hold(replies.text("Partial answer that never ends", chunks=6), after=2)
    first = agent.start_prompt("first")
    await gate.reached()
    queued = agent.start_prompt("queued")
    await asyncio.sleep(0.01)
    assert agent.agent.abort(agent.runtime) is True
    result = await first
    assert result.stop_reason == "aborted"
    last = agent.messages()[-1]
    assert last["stopReason"] == "aborted" and text_of(last) and "never ends" not in text_of(last)
    assert agent.events("agent_end")[-1].stop_reason == "aborted"
    assert agent.runtime.turn is None or agent.runtime.turn.done()
    # As after pi 1.6's RPC abort, the queued prompt waits for the next prompt's turn.
    assert not queued.done() and [q.text for q in agent.runtime.queue.follow_ups] == ["queued"]
    assert agent.agent.clear_queue(agent.runtime).follow_up == ["queued"]
    with pytest.raises(PromptTakenBackError):
        await queued


async def test_cancelling_the_prompt_request_aborts_the_turn_and_still_answers(agent):
    gate = agent.model.hold(replies.text("slow answer", chunks=4))
    prompt = agent.start_prompt("hi")
    await gate.reached()
    prompt.cancel()  # what $/cancelRequest does to the handler
    result = await asyncio.wait_for(asyncio.shield(agent.runtime.turn), 5)
    assert result.stop_reason == "aborted"


async def test_abort_while_a_tool_runs_records_an_aborted_result_for_it(make_agent):
    blocking = BlockingTool()
    agent = make_agent(tools=lambda: [blocking, *default_tools()])
    agent.model.script(
        replies.tool_calls([("call-1", "block", {}), ("call-2", "read", {"path": "app.py"})])
    )
    prompt = agent.start_prompt("block")
    await asyncio.wait_for(blocking.started.wait(), 5)
    agent.agent.abort(agent.runtime)
    result = await prompt
    assert result.stop_reason == "aborted"
    results = [message for message in agent.messages() if message["role"] == "toolResult"]
    assert [message["toolCallId"] for message in results] == ["call-1", "call-2"]
    assert all(message["isError"] and "aborted" in text_of(message) for message in results)
    assert len(agent.events("tool_execution_end")) == 2


async def test_abort_during_the_retry_backoff_ends_the_turn_at_once(make_agent):
    agent = make_agent(options={"retry": {"baseDelayMs": 60_000}})
    agent.model.script(replies.error(503, "Service unavailable"))
    prompt = agent.start_prompt("hi")
    retry = await agent.wait_for("retry")
    assert retry.attempt == 1 and retry.delay_ms == 60_000
    agent.agent.abort(agent.runtime)
    result = await asyncio.wait_for(prompt, 5)
    assert result.stop_reason == "aborted"
    # the failed attempt that was going to be retried is not in the session
    assert [message["role"] for message in agent.messages()] == ["user"]


async def test_abort_during_a_compaction_between_rounds_writes_no_compaction(make_agent):
    agent = make_agent(options=SMALL)
    await chat(agent, 1)
    agent.model.script(
        replies.tool_calls([("call-1", "read", {"path": "app.py"})], usage=BIG_USAGE)
    )
    gate = agent.model.hold(replies.text(SUMMARY))
    prompt = agent.start_prompt("read the file " + "please " * 200)
    await gate.reached()
    assert agent.runtime.compacting
    agent.agent.abort(agent.runtime)
    result = await asyncio.wait_for(prompt, 5)
    assert result.stop_reason == "aborted"
    assert "compaction" not in agent.entry_types()
    end = agent.events("compaction_end")[-1]
    assert end.aborted and end.entry_id is None
    assert not agent.runtime.compacting


async def test_abort_during_a_manual_compaction_leaves_the_session_as_it_was(make_agent):
    agent = make_agent(options=SMALL)
    await chat(agent, 3)
    before = agent.entry_types()
    gate = agent.model.hold(replies.text(SUMMARY))
    compaction = asyncio.ensure_future(agent.agent.compact(agent.runtime, None))
    await gate.reached()
    assert agent.agent.abort(agent.runtime) is True
    with pytest.raises((asyncio.CancelledError, CompactionCancelledError)):
        await compaction
    assert agent.entry_types() == before
    assert agent.events("compaction_end")[-1].aborted


async def test_a_manual_compaction_aborts_the_running_turn_first(make_agent):
    agent = make_agent(options=SMALL)
    await chat(agent, 3)
    gate = agent.model.hold(replies.text("never finished", chunks=3))
    agent.model.script(replies.text(SUMMARY))
    prompt = agent.start_prompt("one more")
    await gate.reached()
    result = await agent.agent.compact(agent.runtime, None)
    assert (await prompt).stop_reason == "aborted"
    assert result.reason == "manual" and agent.entry_types()[-1] == "compaction"


# ------------------------------------------------------------------------------------ retries


async def test_a_transient_error_is_retried_and_the_failed_attempt_is_not_saved(agent):
    agent.model.script(replies.error(429, "Rate limit reached"), replies.text("Got through"))
    result = await agent.prompt("hi")
    assert result.stop_reason == "stop"
    [retry] = agent.events("retry")
    assert retry.attempt == 1 and "429" in retry.error_message
    assert roles_and_texts(agent) == [("user", "hi"), ("assistant", "Got through")]


async def test_retries_stop_after_the_configured_attempts(make_agent):
    agent = make_agent(options={"retry": {"baseDelayMs": 1, "maxRetries": 2}})
    agent.model.script(*[replies.error(500, "Internal server error")] * 3)
    result = await agent.prompt("hi")
    assert result.stop_reason == "error" and "500" in result.error_message
    assert [event.attempt for event in agent.events("retry")] == [1, 2]
    assert agent.model.pending == 0


async def test_a_final_error_is_not_retried(agent):
    agent.model.script(replies.error(400, "Invalid request: bad tool schema"))
    result = await agent.prompt("hi")
    assert result.stop_reason == "error" and not agent.events("retry")


# ------------------------------------------------------------------------------------ compaction


async def test_a_long_tool_loop_compacts_between_rounds_and_goes_on(make_agent):
    agent = make_agent(options=SMALL)
    await chat(agent, 1)
    agent.model.script(
        replies.tool_calls([("call-1", "read", {"path": "app.py"})], usage=BIG_USAGE),
        replies.text(SUMMARY),
        replies.text("Done after compacting.", usage=SMALL_USAGE),
    )
    result = await agent.prompt("read the file " + "please " * 200)
    assert result.stop_reason == "stop"
    assert [event.reason for event in agent.events("compaction_start")] == ["threshold"]
    types = agent.entry_types()
    assert types.index("compaction") < len(types) - 1  # the turn went on after compacting
    after_compaction = agent.model.requests[-1].messages
    assert "summary" in text_of(after_compaction[0]).lower()


async def test_an_answer_that_fills_the_window_is_compacted_after_the_turn(make_agent):
    agent = make_agent(options=SMALL)
    await chat(agent, 2)
    agent.model.script(replies.text("A big answer", usage=BIG_USAGE), replies.text(SUMMARY))
    result = await agent.prompt("one more " + "context " * 60)
    assert result.stop_reason == "stop"
    assert agent.entry_types()[-1] == "compaction"
    assert [event.reason for event in agent.events("compaction_end")] == ["threshold"]


async def test_usage_from_before_a_compaction_never_triggers_another(make_agent):
    agent = make_agent(options=SMALL)
    await chat(agent, 2)
    agent.model.script(replies.text("A big answer", usage=BIG_USAGE), replies.text(SUMMARY))
    await agent.prompt("one more " + "context " * 60)
    assert agent.entry_types()[-1] == "compaction"
    # The big usage is still the last answer's, but it predates the compaction: no compaction
    # before this prompt, and none after its small answer.
    agent.model.script(replies.text("Small answer", usage=SMALL_USAGE))
    await agent.prompt("and now?")
    assert agent.entry_types().count("compaction") == 1
    assert agent.model.pending == 0


async def test_an_aborted_turn_that_filled_the_window_is_compacted_before_the_next_prompt(
    make_agent,
):
    blocking = BlockingTool()
    agent = make_agent(options=SMALL, tools=lambda: [blocking, *default_tools()])
    await chat(agent, 2)
    agent.model.script(replies.tool_calls([("call-1", "block", {})], usage=BIG_USAGE))
    prompt = agent.start_prompt("block")
    await asyncio.wait_for(blocking.started.wait(), 5)
    agent.agent.abort(agent.runtime)
    assert (await prompt).stop_reason == "aborted"
    assert "compaction" not in agent.entry_types()  # no compaction after an aborted turn
    agent.model.script(replies.text(SUMMARY), replies.text("Fresh start", usage=SMALL_USAGE))
    result = await agent.prompt("next")
    assert result.stop_reason == "stop"
    assert [event.reason for event in agent.events("compaction_start")] == ["threshold"]
    assert agent.entry_types()[-3:] == ["compaction", "message", "message"]
    assert text_of(agent.model.requests[-1].messages[-1]) == "next"


async def test_a_context_overflow_compacts_and_retries_once(make_agent):
    agent = make_agent(options=SMALL)
    await chat(agent, 3)
    agent.model.script(
        replies.context_overflow(), replies.text(SUMMARY), replies.text("Retried fine.")
    )
    result = await agent.prompt("one more")
    assert result.stop_reason == "stop"
    [end] = agent.events("compaction_end")
    assert end.reason == "overflow" and end.will_retry and end.entry_id
    await chat(agent, 2)
    agent.model.script(
        replies.context_overflow(), replies.text(SUMMARY), replies.context_overflow()
    )
    result = await agent.prompt("and again")
    assert result.stop_reason == "error"  # a second overflow in the same turn is not looped on
    assert agent.model.pending == 0


async def test_overflow_with_compaction_disabled_is_reported(make_agent):
    agent = make_agent(options={**SMALL, "compaction": {"enabled": False}})
    agent.model.script(replies.context_overflow())
    result = await agent.prompt("hi")
    assert result.stop_reason == "error" and "maximum context length" in result.error_message
    assert not agent.events("compaction_start")


# ------------------------------------------------------------------------------------ expansion


async def test_queued_and_steered_prompts_are_expanded_like_any_other(agent):
    skill = agent.workspace / ".pi" / "skills" / "review" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: review\ndescription: Review code.\n---\n\nReview it carefully.\n")
    template = agent.workspace / ".pi" / "prompts" / "fix.md"
    template.parent.mkdir(parents=True)
    template.write_text("---\ndescription: Fix a bug.\n---\nFix the bug in $1\n")
    agent.services.resources.reload()
    gate = agent.model.hold(read_call(), after=1)
    agent.model.script(replies.text("Reviewed."), replies.text("Fixed."))
    first = agent.start_prompt("read it")
    await gate.reached()
    steer = agent.start_prompt("/skill:review app.py", behavior="steer")
    follow_up = agent.start_prompt("/fix app.py")
    await asyncio.sleep(0.01)
    gate.release()
    await asyncio.gather(first, steer, follow_up)
    users = [text for role, text in roles_and_texts(agent) if role == "user"]
    assert users[0] == "read it"
    assert users[1].startswith('<skill name="review"') and "Review it carefully." in users[1]
    assert users[1].endswith("app.py")
    assert users[2] == "Fix the bug in app.py"


# ------------------------------------------------------------------------------------ tool output


def bash_call(command: str, call_id: str = "call-1"):
    return replies.tool_calls([(call_id, "bash", {"command": command})])


async def test_a_running_command_streams_its_output_before_it_ends(agent):
    command = "for i in 1 2 3; do echo line$i; sleep 0.25; done"
    agent.model.script(bash_call(command), replies.text("It printed three lines."))
    result = await agent.prompt("run it")
    assert result.stop_reason == "stop"
    types = agent.event_types()
    start, end = types.index("tool_execution_start"), types.index("tool_execution_end")
    updates = agent.events("tool_execution_update")
    assert updates and all(start < types.index("tool_execution_update") < end for _ in updates)
    texts = [text_of({"content": update.content}) for update in updates]
    assert any(text.startswith("line1") and "line3" not in text for text in texts)
    assert all(update.tool_call_id == "call-1" and update.name == "bash" for update in updates)
    assert text_of(agent.messages()[2]).startswith("line1\nline2\nline3")


async def test_an_aborted_command_keeps_the_output_it_printed(agent):
    command = "echo started; sleep 30"
    agent.model.script(bash_call(command))
    prompt = agent.start_prompt("run it")
    first = await agent.wait_for("tool_execution_update")
    assert text_of({"content": first.content}).startswith("started")
    agent.agent.abort(agent.runtime)
    result = await asyncio.wait_for(prompt, 10)
    assert result.stop_reason == "aborted"
    tool_result = agent.messages()[-1]
    assert tool_result["role"] == "toolResult" and tool_result["isError"]
    assert text_of(tool_result).startswith("started") and "Command aborted" in text_of(tool_result)
    assert tool_result["details"]["cancelled"] is True


async def test_without_a_model_a_prompt_says_how_to_configure_one(make_agent):
    from pi_lsp.errors import ModelNotConfiguredError

    agent = make_agent(options={"model": None})
    with pytest.raises(ModelNotConfiguredError, match=r"pi\.model") as raised:
        await agent.prompt("hi")
    assert raised.value.code == -32020 and agent.entry_types() == ["thinking_level_change"]
