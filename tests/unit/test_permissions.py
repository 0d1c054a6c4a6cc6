"""Tool permissions in a turn: asking before a call, what each answer does, timeouts, aborts."""

from __future__ import annotations

import asyncio
import concurrent.futures
import types

import pytest

from pi_lsp.agent.permission_policy import PermissionQuestion
from pi_lsp.agent.permissions import Answer
from pi_lsp.llm.double import replies

UNTRUSTED = {"trusted": False}


class ScriptedAsker:
    """Answers questions from a list (or waits forever when it runs out), recording them."""

    def __init__(self, *answers: Answer | None) -> None:
        self.answers = list(answers)
        self.questions: list[PermissionQuestion] = []
        self.withdrawn = 0
        self.asked = asyncio.Event()

    async def ask(self, question: PermissionQuestion) -> Answer | None:
        self.questions.append(question)
        self.asked.set()
        if self.answers:
            return self.answers.pop(0)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.withdrawn += 1
            raise
        return None


def write_call(call_id: str, path: str = "new.txt", content: str = "hello\n"):
    return replies.tool_calls([(call_id, "write", {"path": path, "content": content})])


def tool_results(agent):
    return [message for message in agent.messages() if message["role"] == "toolResult"]


async def test_an_allowed_call_runs_after_the_question(make_agent):
    asker = ScriptedAsker(Answer.ALLOW)
    agent = make_agent(options=UNTRUSTED, asker=asker)
    agent.model.script(write_call("call-1"), replies.text("Written."))
    result = await agent.prompt("write it")
    assert result.stop_reason == "stop"
    assert (agent.workspace / "new.txt").read_text() == "hello\n"
    [question] = asker.questions
    assert (question.tool_name, question.subject, question.summary) == (
        "write",
        "new.txt",
        "new file, 1 line",
    )
    # The call itself, for channels that show it (ACP's session/request_permission).
    assert (question.session_id, question.tool_call_id) == (agent.runtime.id, "call-1")
    assert question.arguments == {"path": "new.txt", "content": "hello\n"}
    assert tool_results(agent)[0]["isError"] is False


async def test_a_denied_call_does_not_run_and_its_result_says_so(make_agent):
    asker = ScriptedAsker(Answer.DENY)
    agent = make_agent(options=UNTRUSTED, asker=asker)
    agent.model.script(
        replies.tool_calls([("call-1", "bash", {"command": "touch ran.txt"})]),
        replies.text("Understood."),
    )
    await agent.prompt("run it")
    assert not (agent.workspace / "ran.txt").exists()
    [denied] = tool_results(agent)
    assert denied["isError"] is True
    assert denied["content"][0]["text"] == (
        "Not run: permission for bash 'touch ran.txt' was not given (the user denied it). "
        "Nothing was changed."
    )
    assert denied["details"] == {"permission": {"decision": "denied", "subject": "touch ran.txt"}}
    # The model sees the refusal as the call's result and answers after it.
    sent = agent.model.requests[1].messages[-1]
    assert sent["role"] == "toolResult" and "the user denied it" in str(sent["content"])
    end = agent.events("tool_execution_end")[0]
    assert end.is_error is True


async def test_allow_for_this_session_stops_asking_for_the_same_scope(make_agent):
    asker = ScriptedAsker(Answer.ALLOW_FOR_SESSION, Answer.DENY)
    agent = make_agent(options=UNTRUSTED, asker=asker)
    agent.model.script(
        write_call("call-1", "a.txt"),
        write_call("call-2", "b.txt"),
        replies.tool_calls([("call-3", "bash", {"command": "touch c.txt"})]),
        replies.text("Done."),
    )
    await agent.prompt("go")
    assert (agent.workspace / "a.txt").exists() and (agent.workspace / "b.txt").exists()
    assert not (agent.workspace / "c.txt").exists()  # bash was a new question, denied
    assert [question.tool_name for question in asker.questions] == ["write", "bash"]


async def test_a_dismissed_question_refuses_the_call(make_agent):
    agent = make_agent(options=UNTRUSTED, asker=ScriptedAsker(None))
    agent.model.script(write_call("call-1"), replies.text("ok"))
    await agent.prompt("go")
    assert not (agent.workspace / "new.txt").exists()
    assert "dismissed" in tool_results(agent)[0]["content"][0]["text"]


async def test_no_answer_within_the_timeout_refuses_the_call(make_agent):
    asker = ScriptedAsker()
    agent = make_agent(options={**UNTRUSTED, "permissions": {"timeoutSeconds": 0.05}}, asker=asker)
    agent.model.script(write_call("call-1"), replies.text("ok"))
    await agent.prompt("go")
    assert not (agent.workspace / "new.txt").exists()
    [result] = tool_results(agent)
    assert "no answer within 0.05 seconds" in result["content"][0]["text"]
    assert result["details"]["permission"]["decision"] == "timeout"
    assert asker.withdrawn == 1


async def test_aborting_while_asking_withdraws_the_question(make_agent):
    asker = ScriptedAsker()
    agent = make_agent(options=UNTRUSTED, asker=asker)
    agent.model.script(write_call("call-1"))
    running = agent.start_prompt("go")
    await asyncio.wait_for(asker.asked.wait(), 5)
    assert agent.agent.abort(agent.runtime)
    result = await running
    assert result.stop_reason == "aborted"
    assert asker.withdrawn == 1
    assert not (agent.workspace / "new.txt").exists()
    [aborted] = tool_results(agent)
    assert aborted["isError"] is True


async def test_a_trusted_workspace_asks_only_for_writes_outside_the_root(make_agent, tmp_path):
    asker = ScriptedAsker(Answer.DENY)
    agent = make_agent(asker=asker)
    outside = tmp_path / "outside.txt"
    agent.model.script(
        replies.tool_calls(
            [
                ("call-1", "write", {"path": "inside.txt", "content": "x"}),
                ("call-2", "write", {"path": str(outside), "content": "x"}),
            ]
        ),
        replies.text("ok"),
    )
    await agent.prompt("go")
    assert (agent.workspace / "inside.txt").exists()
    assert not outside.exists()
    [question] = asker.questions
    assert question.outside_workspace and question.subject == str(outside)


async def test_without_anyone_to_ask_a_call_that_asks_is_refused(make_agent):
    agent = make_agent(options={"permissions": {"bash": "ask"}})
    agent.model.script(
        replies.tool_calls([("call-1", "bash", {"command": "touch ran.txt"})]),
        replies.text("ok"),
    )
    await agent.prompt("go")
    assert not (agent.workspace / "ran.txt").exists()
    assert tool_results(agent)[0]["details"]["permission"]["decision"] == "dismissed"


class _FakeProtocol:
    """Records what the LSP asker sends; answers are set on the returned futures."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, object, str]] = []
        self.notified: list[tuple[str, object]] = []
        self._request_futures: dict[str, concurrent.futures.Future] = {}

    def send_request(self, method, params, msg_id):
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._request_futures[msg_id] = future
        self.sent.append((method, params, msg_id))
        return future

    def notify(self, method, params):
        self.notified.append((method, params))


def _lsp_asker():
    from pi_lsp.handlers.permissions import LspPermissionAsker

    protocol = _FakeProtocol()
    return LspPermissionAsker(types.SimpleNamespace(protocol=protocol)), protocol


QUESTION = PermissionQuestion("bash", "make", reason="the permissions setting asks")


async def test_the_lsp_asker_sends_a_show_message_request_and_reads_the_answer():
    from lsprotocol import types as lsp

    asker, protocol = _lsp_asker()
    asking = asyncio.ensure_future(asker.ask(QUESTION))
    await asyncio.sleep(0)
    [(method, params, request_id)] = protocol.sent
    assert method == "window/showMessageRequest"
    assert params.message == "pi wants to run:\nmake\n(the permissions setting asks)"
    assert [action.title for action in params.actions] == [
        "Allow",
        "Allow for this session",
        "Deny",
    ]
    protocol._request_futures[request_id].set_result(lsp.MessageActionItem(title="Deny"))
    assert await asking is Answer.DENY
    assert protocol.notified == []


async def test_the_lsp_asker_reads_no_choice_as_dismissed():
    asker, protocol = _lsp_asker()
    asking = asyncio.ensure_future(asker.ask(QUESTION))
    await asyncio.sleep(0)
    protocol._request_futures[protocol.sent[0][2]].set_result(None)
    assert await asking is None


async def test_a_withdrawn_question_is_cancelled_with_cancel_request():
    asker, protocol = _lsp_asker()
    asking = asyncio.ensure_future(asker.ask(QUESTION))
    await asyncio.sleep(0)
    request_id = protocol.sent[0][2]
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    [(method, params)] = protocol.notified
    assert (method, params.id) == ("$/cancelRequest", request_id)
    assert request_id not in protocol._request_futures  # a late answer finds no one waiting
