"""The client's live settings: the server pulls ``workspace/configuration`` (section ``pi``) after
``initialized`` and again on ``workspace/didChangeConfiguration``; clients that cannot be asked push
the section in the notification. The next turn's request at the scripted model shows the effect."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from tests.e2e.conftest import SERVER, request


class EditorSettings:
    """What the test client answers to ``workspace/configuration``, and how often it was asked."""

    def __init__(self) -> None:
        self.pi: dict = {}
        self.questions: list[str | None] = []

    def answer(self, *, section: str | None, scope_uri: str | None = None):
        self.questions.append(section)
        return self.pi if section == "pi" else None

    async def asked(self, times: int, timeout: float = 10.0) -> None:
        async def wait() -> None:
            while len(self.questions) < times:
                await asyncio.sleep(0.02)

        await asyncio.wait_for(wait(), timeout)


async def start(
    lsp_client: LanguageClient, workspace: Path, *, can_answer: bool
) -> tuple[ScriptedLLM, EditorSettings]:
    scripted_llm = ScriptedLLM()
    await scripted_llm.start()
    settings = EditorSettings()
    settings.pi = {
        "model": "openai/scripted",
        "apiBase": scripted_llm.base_url,
        "retry": {"baseDelayMs": 20},
        "contextWindow": None,
        "autoName": False,
    }
    lsp_client.get_configuration = (
        settings.answer
    )  # pytest-lsp answers workspace/configuration with it
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(configuration=can_answer)
            ),
            root_uri=workspace.as_uri(),
            initialization_options={},
        )
    )
    return scripted_llm, settings


async def serve(lsp_client: LanguageClient, workspace: Path, *, can_answer: bool):
    lsp_client.scripted_llm, lsp_client.editor_settings = await start(
        lsp_client, workspace, can_answer=can_answer
    )
    yield
    await lsp_client.shutdown_session()
    await lsp_client.scripted_llm.stop()


@pytest_lsp.fixture(config=SERVER)
async def asking_client(lsp_client: LanguageClient, workspace: Path):
    async for _ in serve(lsp_client, workspace, can_answer=True):
        yield


@pytest_lsp.fixture(config=SERVER)
async def slow_answering_client(lsp_client: LanguageClient, workspace: Path):
    """A client that answers ``workspace/configuration`` only after half a second."""
    answer = lsp_client.protocol.fm.features[types.WORKSPACE_CONFIGURATION]

    async def answer_late(params):
        await asyncio.sleep(0.5)
        return answer(params)

    lsp_client.protocol.fm.features[types.WORKSPACE_CONFIGURATION] = answer_late
    async for _ in serve(lsp_client, workspace, can_answer=True):
        yield


@pytest_lsp.fixture(config=SERVER)
async def pushing_client(lsp_client: LanguageClient, workspace: Path):
    async for _ in serve(lsp_client, workspace, can_answer=False):
        yield


async def test_the_first_prompt_uses_the_model_from_workspace_configuration(asking_client):
    scripted_llm = asking_client.scripted_llm
    scripted_llm.enqueue(replies.text("Configured."))
    result = await request(asking_client, "pi/prompt", {"text": "hello"})
    assert result["stopReason"] == "stop"
    assert asking_client.editor_settings.questions[0] == "pi"
    assert scripted_llm.requests[-1]["model"] == "scripted"


async def test_a_changed_setting_is_pulled_again_and_used_by_the_next_turn(asking_client):
    scripted_llm, settings = asking_client.scripted_llm, asking_client.editor_settings
    await settings.asked(1)
    settings.pi = {**settings.pi, "model": "openai/renamed", "contextWindow": 5000}
    asking_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=None)
    )
    await settings.asked(2)
    state = await request(asking_client, "pi/state", {})
    for _ in range(50):  # the answer is applied when it arrives, just after the question
        if state["contextUsage"]["contextWindow"] == 5000:
            break
        await asyncio.sleep(0.02)
        state = await request(asking_client, "pi/state", {})
    assert state["model"]["modelId"] == "renamed" and state["contextUsage"]["contextWindow"] == 5000
    scripted_llm.enqueue(replies.text("Renamed."))
    await request(asking_client, "pi/prompt", {"text": "again"})
    assert scripted_llm.requests[-1]["model"] == "renamed"


async def test_a_prompt_sent_right_after_a_change_waits_for_the_changed_settings(
    slow_answering_client,
):
    """A user changes a setting and prompts at once: the change is a question to the client
    (half a second here), and the prompt, arriving meanwhile, must not run on the old settings."""
    client = slow_answering_client
    scripted_llm, settings = client.scripted_llm, client.editor_settings
    await settings.asked(1)
    await request(client, "pi/state", {})  # the first answer is in force
    settings.pi = {**settings.pi, "model": "openai/renamed"}
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    scripted_llm.enqueue(replies.text("Renamed."))
    await request(client, "pi/prompt", {"text": "at once"})
    assert scripted_llm.requests[-1]["model"] == "renamed"


async def test_an_invalid_live_setting_is_shown_once_and_the_rest_still_applies(asking_client):
    settings = asking_client.editor_settings
    await settings.asked(1)
    settings.pi = {**settings.pi, "thinkingLevel": "enormous", "contextWindow": 7000}
    asking_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=None)
    )
    await settings.asked(2)
    for _ in range(100):
        if asking_client.messages:  # window/showMessage, recorded by pytest-lsp
            break
        await asyncio.sleep(0.02)
    assert any("thinkingLevel" in shown.message for shown in asking_client.messages)
    state = await request(asking_client, "pi/state", {})
    assert state["contextUsage"]["contextWindow"] == 7000 and state["thinkingLevel"] == "medium"


async def test_a_client_that_cannot_be_asked_pushes_its_settings(pushing_client):
    scripted_llm = pushing_client.scripted_llm
    assert pushing_client.editor_settings.questions == []
    with_model = {"model": "openai/pushed", "apiBase": scripted_llm.base_url, "autoName": False}
    pushing_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"pi": with_model})
    )
    scripted_llm.enqueue(replies.text("Pushed."))
    result = await request(pushing_client, "pi/prompt", {"text": "hello"})
    assert result["stopReason"] == "stop" and scripted_llm.requests[-1]["model"] == "pushed"
    assert pushing_client.editor_settings.questions == []


def write_two_turns(workspace: Path) -> tuple[str, str]:
    """A session file with two turns, as the server finds it: (first answer id, leaf id)."""
    from pi_lsp.session.session import Session

    session = Session.create(workspace / ".pi" / "sessions", str(workspace))
    ids = []
    for index in range(2):
        session.append_message({"role": "user", "content": f"Question {index}", "timestamp": 1})
        ids.append(
            session.append_message(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"Answer {index}"}],
                    "stopReason": "stop",
                    "timestamp": 2,
                }
            )
        )
    session.close()
    return ids[0], ids[1]


@pytest.fixture
def two_turns(workspace: Path) -> tuple[str, str]:
    return write_two_turns(workspace)


async def test_a_summarized_navigation_waits_for_the_first_configuration_answer(
    two_turns, slow_answering_client
):
    """The model is only in the client's settings; a summary asked at once must wait for them."""
    first_answer, _ = two_turns
    client = slow_answering_client
    client.scripted_llm.enqueue(replies.text("## Goal\nAnswered question 1"))
    result = await request(client, "pi/navigate", {"targetId": first_answer, "summarize": True})
    assert result["summaryEntryId"] and result["leafId"] == result["summaryEntryId"]
    assert client.scripted_llm.requests[-1]["model"] == "scripted"
