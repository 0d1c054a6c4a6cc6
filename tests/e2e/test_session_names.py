"""Automatic session names (``autoName``), end to end with the scripted model: after a session's
first answer the summary model names it (on by default), written as pi's ``session_info`` entry; a
name the user gave is never replaced; with the setting off nothing is asked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pi_lsp.agent.session_names import NAME_PROMPT
from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request


async def until_named(client, attempts: int = 400) -> dict:
    state: dict = {}
    for _ in range(attempts):
        state = await request(client, "pi/state", {})
        if state["name"]:
            return state
        await asyncio.sleep(0.05)
    return state


def asked_for_a_name(scripted_llm) -> bool:
    return any(sent["messages"][0]["content"] == NAME_PROMPT for sent in scripted_llm.requests)


def session_infos(path: str) -> list[dict]:
    lines = [json.loads(line) for line in Path(path).read_text().splitlines()]
    return [line for line in lines if line.get("type") == "session_info"]


@pytest.mark.options(autoName=None)  # not sent: the server's default, on
async def test_the_first_answer_names_the_session(client, scripted_llm):
    scripted_llm.enqueue(
        replies.text("Use exponential backoff."), replies.text('"Retry policy design."')
    )
    await request(client, "pi/prompt", {"text": "How should we retry failed uploads?"})
    state = await until_named(client)
    assert state["name"] == "Retry policy design"
    naming = scripted_llm.requests[-1]
    assert naming["messages"][0]["content"] == NAME_PROMPT
    assert "How should we retry failed uploads?" in json.dumps(naming["messages"])
    assert [info["name"] for info in session_infos(state["path"])] == ["Retry policy design"]

    scripted_llm.enqueue(replies.text("Sure."))
    await request(client, "pi/prompt", {"text": "And the timeout?"})
    assert len(session_infos(state["path"])) == 1  # asked once: after the first answer


@pytest.mark.options(autoName=True)
async def test_a_name_the_user_gave_is_never_replaced(client, scripted_llm):
    created = await request(client, "pi/newSession", {"name": "My own name"})
    scripted_llm.enqueue(replies.text("Hello."))
    await request(client, "pi/prompt", {"sessionId": created["sessionId"], "text": "Hi"})
    scripted_llm.enqueue(replies.text("Hello again."))
    await request(client, "pi/prompt", {"sessionId": created["sessionId"], "text": "Hi again"})
    state = await request(client, "pi/state", {"sessionId": created["sessionId"]})
    assert state["name"] == "My own name"
    assert not asked_for_a_name(scripted_llm)


@pytest.mark.options(autoName=False)
async def test_with_the_setting_off_nothing_is_asked(client, scripted_llm):
    scripted_llm.enqueue(replies.text("Hello."), replies.text("Hello again."))
    await request(client, "pi/prompt", {"text": "Hi"})
    await request(client, "pi/prompt", {"text": "Hi again"})
    state = await request(client, "pi/state", {})
    assert state["name"] is None and not asked_for_a_name(scripted_llm)


@pytest.mark.options(autoName=True, compaction={"model": "openai/scripted-namer"})
async def test_the_name_is_asked_of_the_compaction_model_when_one_is_set(client, scripted_llm):
    scripted_llm.enqueue(replies.text("Hello."), replies.text("Greeting exchange"))
    await request(client, "pi/prompt", {"text": "Hi"})
    state = await until_named(client)
    assert state["name"] == "Greeting exchange"
    answer, naming = scripted_llm.requests[-2:]
    assert answer["model"] == "scripted"
    assert naming["model"] == "scripted-namer"
    assert naming["messages"][0]["content"] == NAME_PROMPT
