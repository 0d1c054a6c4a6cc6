"""The editor's own models (``vscode-lm``) end to end: a test client plays the editor's part.

The client advertises ``piLanguageModels`` in ``initialize``, lists its models with
``pi/languageModels`` and answers each ``pi/languageModel/chat`` from a script, streaming the
answer's parts as ``pi/languageModel/part`` notifications before its response, as VS Code's
extension does; the server runs real turns, tools, compaction and aborts on them. A client that
does not advertise the capability is offered none of it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from pi_lsp import protocol
from pi_lsp.handlers.base import to_plain
from tests.e2e.conftest import another_server, request
from tests.e2e.test_compaction import SMALL, SUMMARY

MODEL = {
    "id": "scripted-1",
    "vendor": "test",
    "family": "scripted",
    "name": "Scripted (test)",
    "maxInputTokens": 64000,
}
REFERENCE = "vscode-lm/test/scripted-1"
REFUSAL = "the editor says no"
CAPABILITIES = types.ClientCapabilities(experimental={protocol.LANGUAGE_MODELS_CAPABILITY: True})


class EditorModel:
    """The editor's side: answers each chat request with the next scripted answer, a list of
    parts, or a JSON-RPC error code; ``hang`` streams one part and then waits to be cancelled."""

    def __init__(self) -> None:
        self.answers: list[Any] = []
        self.requests: list[dict[str, Any]] = []
        self.cancelled = asyncio.Event()

    def install(self, client) -> None:
        report = client.report_server_error

        def report_unscripted(error: Exception, source: Any) -> None:
            # A scripted error answer is the editor's word, not a failure of the test client.
            if not (isinstance(error, JsonRpcException) and error.message == REFUSAL):
                report(error, source)

        client.report_server_error = report_unscripted

        @client.feature(protocol.LANGUAGE_MODEL_CHAT)
        async def on_chat(params):
            chat = to_plain(params)
            self.requests.append(chat)
            answer = self.answers.pop(0)
            if isinstance(answer, int):
                raise JsonRpcException(code=answer, message=REFUSAL)
            parts = [text("Thinking about it")] if answer == "hang" else answer
            for part in parts:
                client.protocol.notify(
                    protocol.LANGUAGE_MODEL_PART, {"requestId": chat["requestId"], "part": part}
                )
            if answer == "hang":
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    self.cancelled.set()
                    raise
            return {"inputTokens": 1200, "outputTokens": 34}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def session_messages(workspace: Path) -> list[dict]:
    [path] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [line["message"] for line in lines if line.get("type") == "message"]


async def editor_server(workspace: Path, editor: EditorModel, **options: Any):
    server = another_server(
        workspace,
        {"model": REFERENCE, "retry": {"baseDelayMs": 20}, **options},
        capabilities=CAPABILITIES,
        setup=editor.install,
    )
    client = await server.__aenter__()
    client.protocol.notify(protocol.LANGUAGE_MODELS, {"models": [MODEL]})
    return server, client


@pytest.fixture
async def editor_client(workspace: Path, request: pytest.FixtureRequest):
    editor = EditorModel()
    marker = request.node.get_closest_marker("options")
    server, client = await editor_server(workspace, editor, **(marker.kwargs if marker else {}))
    client.editor = editor
    yield client
    await server.__aexit__(None, None, None)


async def test_the_editors_models_are_listed_for_the_client_that_has_them(editor_client):
    listed = await request(editor_client, "pi/models", {"provider": "vscode-lm"})
    assert [
        (model["model"], model["name"], model["contextWindow"], model["available"], model["source"])
        for model in listed["models"]
    ] == [(REFERENCE, "Scripted (test)", 64000, True, "editor")]


async def test_a_turn_with_a_tool_call_runs_on_the_editors_model(editor_client, workspace):
    editor_client.editor.answers = [
        [
            text("Let me look."),
            {"type": "toolCall", "callId": "call-1", "name": "read", "input": {"path": "app.py"}},
        ],
        [text("It subtracts; "), text("it should add.")],
    ]
    result = await request(editor_client, "pi/prompt", {"text": "what is wrong in app.py?"})
    assert result["stopReason"] == "stop"
    first, second = editor_client.editor.requests
    assert first["model"] == "scripted-1"
    assert first["justification"]
    assert first["messages"][0]["role"] == "user"  # the system prompt: no system role
    assert "Always answer in English." in first["messages"][0]["content"][0]["text"]
    assert first["messages"][-1] == {
        "role": "user",
        "content": [text("what is wrong in app.py?")],
    }
    assert "read" in [tool["name"] for tool in first["tools"]]
    assert second["messages"][-2] == {
        "role": "assistant",
        "content": [
            text("Let me look."),
            {"type": "toolCall", "callId": "call-1", "name": "read", "input": {"path": "app.py"}},
        ],
    }
    [result_part] = second["messages"][-1]["content"]
    assert result_part["type"] == "toolResult" and result_part["callId"] == "call-1"
    assert "return a - b" in result_part["content"][0]["text"]
    answer = session_messages(workspace)[-1]
    assert answer["content"] == [{"type": "text", "text": "It subtracts; it should add."}]
    assert (answer["provider"], answer["model"], answer["api"]) == (
        "vscode-lm",
        "test/scripted-1",
        "vscode-lm",
    )
    assert (answer["usage"]["input"], answer["usage"]["output"]) == (1200, 34)
    assert answer["usage"]["cost"]["total"] == 0


async def test_a_refused_consent_ends_the_turn_saying_what_to_do(editor_client):
    editor_client.editor.answers = [protocol.LANGUAGE_MODEL_NO_PERMISSIONS]
    result = await request(editor_client, "pi/prompt", {"text": "hello"})
    assert result["stopReason"] == "error"
    assert 'choose "Allow" when VS Code asks' in result["errorMessage"]
    assert len(editor_client.editor.requests) == 1  # refused consent is not retried


@pytest.mark.options(**SMALL)
async def test_a_context_too_long_compacts_and_retries(editor_client, workspace):
    editor = editor_client.editor
    for turn in range(3):
        editor.answers.append([text(f"Answer {turn} " + "word " * 40)])
        await request(editor_client, "pi/prompt", {"text": f"Question {turn} " + "word " * 40})
    editor.answers += [
        protocol.LANGUAGE_MODEL_CONTEXT_TOO_LONG,
        [text(SUMMARY)],
        [text("Retried fine.")],
    ]
    result = await request(editor_client, "pi/prompt", {"text": "one more"})
    assert result["stopReason"] == "stop"
    assert session_messages(workspace)[-1]["content"] == [text("Retried fine.")]
    summary_request = editor.requests[-2]
    assert "one more" not in json.dumps(summary_request["messages"][-1])


async def test_aborting_the_turn_cancels_the_editors_request(editor_client, workspace):
    editor_client.editor.answers = ["hang"]
    prompt = asyncio.ensure_future(request(editor_client, "pi/prompt", {"text": "hello"}))
    while not editor_client.editor.requests:
        await asyncio.sleep(0.01)
    await request(editor_client, "pi/abort", {})
    result = await prompt
    assert result["stopReason"] == "aborted"
    await asyncio.wait_for(editor_client.editor.cancelled.wait(), 30)
    assert session_messages(workspace)[-1]["stopReason"] == "aborted"


async def test_a_client_without_the_capability_is_offered_none_of_it(client):
    client.protocol.notify(protocol.LANGUAGE_MODELS, {"models": [MODEL]})
    listed = await request(client, "pi/models", {})
    assert not [model for model in listed["models"] if model["provider"] == "vscode-lm"]
    await request(client, "pi/setModel", {"model": REFERENCE})
    with pytest.raises(JsonRpcException) as refused:
        await request(client, "pi/prompt", {"text": "hello"})
    assert refused.value.code == -32022
    assert "only the Pi extension for VS Code can run it" in refused.value.message
