"""pi-lsp's requests against pi 1.6's, field by field, for each wire API pi-lsp speaks itself.

pi 1.6's own provider code (pi-ai 1.6.0, driven by ``tests/reference/wire_request.mjs``) and
pi-lsp (``AssistantStream``) hold the same conversation with the scripted server, each through
one wire API: a question with an image and thinking on, answered with reasoning and a tool call,
then the tool's result sent back with each agent's own answer replayed. The scripted server records
both agents' request bodies; every field must be equal, except the differences listed per API
below, each with its reason.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import attrs
import pytest

from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.events import Completed
from pi_lsp.llm.messages import ToolSpec
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.scripted_llm import ScriptedLLM, replies

from .harness import install_reference

REFERENCE_SCRIPT = Path(__file__).parents[1] / "reference" / "wire_request.mjs"
SYSTEM = "You are a coding agent."
TOOL = {
    "name": "read",
    "description": "Read a file",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAC"
    "hwGA60e6kgAAAABJRU5ErkJggg=="
)
QUESTION = {
    "role": "user",
    "content": [
        {"type": "text", "text": "What is in a.py and this picture?"},
        {"type": "image", "data": PIXEL, "mimeType": "image/png"},
    ],
    "timestamp": 1,
}

# path (dotted, list items by index) → why pi-lsp's value differs from pi 1.6's there.
_OWN_IDS = "each agent replays the ids of its own first answer (the server numbers its answers)"
ALLOWED: dict[str, dict[str, str]] = {
    "openai-completions": {
        "prompt_cache_key": (
            "pi sends it to api.openai.com only; pi-lsp to every endpoint litellm forwarded it to "
            "(OpenAI-compatible servers ignore it or use it to route to a warm cache)"
        ),
    },
    "openai-responses": {
        "tools.0.strict": (
            "pi omits it for a models.json provider without supportsStrictMode and sends false to "
            "OpenAI; pi-lsp always sends false (the Responses API's default is strict)"
        ),
        "input.2.id": _OWN_IDS,
        "input.2.encrypted_content": _OWN_IDS,
        "input.3.id": _OWN_IDS,
    },
    "anthropic-messages": {
        "thinking.budget_tokens": (
            "pi-lsp keeps the budgets its users had through litellm (1024/2048/4096 for "
            "low/medium/high); pi 1.6 sizes the budget from max_tokens"
        ),
        "thinking.display": "litellm's request, which pi-lsp keeps, leaves it to the default",
        "tools.0.eager_input_streaming": "pi 1.6 asks for fine-grained tool input streaming",
        "tools.0.type": "litellm's request, which pi-lsp keeps, names the tool type",
        "messages.0.content.1.cache_control": (
            "pi-lsp's fourth breakpoint, where the previous request ended (caching.py)"
        ),
        "messages.2.content.0.is_error": (
            "the chat messages pi-lsp converts from carry no error flag (an error's text says so)"
        ),
    },
    "google-generative-ai": {
        "contents.1.parts": (
            "pi sends back the same model's unsigned thought text too; pi-lsp only signed thinking "
            "(a thought without a signature does not restore the model's reasoning)"
        ),
    },
}


MODEL_IDS = {
    "openai-completions": "gpt-5-mini",
    "openai-responses": "gpt-5-mini",
    "anthropic-messages": "claude-sonnet-4-5",
    "google-generative-ai": "gemini-2.5-flash",
}


def base_url(server: ScriptedLLM, api: str) -> str:
    if api == "anthropic-messages":
        return server.root_url
    if api == "google-generative-ai":
        return server.gemini_url
    return server.base_url


def our_model(server: ScriptedLLM, api: str, model_id: str) -> ModelConfig:
    prefixes = {
        "openai-completions": "openai/",
        "openai-responses": "openai/responses/",
        "anthropic-messages": "anthropic/",
        "google-generative-ai": "gemini/",
    }
    return ModelConfig(
        model=f"lab/{model_id}",
        provider="lab",
        model_id=model_id,
        api_base=base_url(server, api),
        api_key="k",
        reasoning=True,
        litellm_model=prefixes[api] + model_id,
        max_output_tokens=8000,
        source="models.json",
    )


def pi_request(server: ScriptedLLM, api: str, model_id: str, messages: list) -> dict[str, Any]:
    return {
        "api": api,
        "provider": "lab",
        "modelId": model_id,
        "baseUrl": base_url(server, api),
        "reasoning": True,
        "systemPrompt": SYSTEM,
        "messages": messages,
        "tools": [TOOL],
        "thinkingLevel": "medium",
        "maxTokens": 8000,
        "sessionId": "session-1",
        "apiKey": "k",
    }


async def ask_pi(node: Path, request: dict[str, Any]) -> dict[str, Any]:
    result = await asyncio.to_thread(
        subprocess.run,
        [str(node), str(REFERENCE_SCRIPT)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


async def ask_ours(model: ModelConfig, messages: list) -> dict[str, Any]:
    request = CompletionRequest(
        model=model,
        system_prompt=SYSTEM,
        messages=messages,
        tools=[ToolSpec(TOOL["name"], TOOL["description"], TOOL["parameters"])],
        thinking_level="medium",
        max_tokens=8000,
        session_id="session-1",
        timeout=30,
    )
    events = [event async for event in AssistantStream(request).events()]
    assert isinstance(events[-1], Completed)
    return events[-1].message


def differences(ours: Any, theirs: Any, path: str = "") -> dict[str, tuple[Any, Any]]:
    """Every leaf path where the two JSON values differ."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        found: dict[str, tuple[Any, Any]] = {}
        for key in sorted(set(ours) | set(theirs)):
            found |= differences(ours.get(key), theirs.get(key), f"{path}.{key}".lstrip("."))
        return found
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        found = {}
        for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            found |= differences(mine, other, f"{path}.{index}".lstrip("."))
        return found
    return {} if ours == theirs else {path: (ours, theirs)}


def tool_result(answer: dict[str, Any]) -> dict[str, Any]:
    [call] = [block for block in answer["content"] if block["type"] == "toolCall"]
    return {
        "role": "toolResult",
        "toolCallId": call["id"],
        "toolName": "read",
        "content": [{"type": "text", "text": "print('hi')"}],
        "isError": False,
        "timestamp": 3,
    }


@pytest.fixture(scope="module")
def node() -> Path:
    return install_reference()


@pytest.mark.parametrize("api", list(ALLOWED))
async def test_request_bodies_match_pi16_field_by_field(api: str, node: Path) -> None:
    model_id = MODEL_IDS[api]
    answer = with_reasoning(replies.tool_calls([("call_1", "read", {"path": "a.py"})]))
    async with ScriptedLLM() as server:
        server.enqueue(answer, answer, replies.text("ok"), replies.text("ok"))
        model = our_model(server, api, model_id)
        first_ours = await ask_ours(model, [QUESTION])
        first_pi = await ask_pi(node, pi_request(server, api, model_id, [QUESTION]))
        assert first_ours["stopReason"] == first_pi["stopReason"] == "toolUse", (
            first_ours,
            first_pi,
        )
        await ask_ours(model, [QUESTION, first_ours, tool_result(first_ours)])
        await ask_pi(
            node, pi_request(server, api, model_id, [QUESTION, first_pi, tool_result(first_pi)])
        )
        ours_1, pi_1, ours_2, pi_2 = server.requests
    found = {f"1:{path}": value for path, value in differences(ours_1, pi_1).items()}
    found |= {f"2:{path}": value for path, value in differences(ours_2, pi_2).items()}
    allowed = ALLOWED[api]
    unexplained = {path: value for path, value in found.items() if path[2:] not in allowed}
    assert not unexplained, json.dumps(unexplained, indent=1)
    # Each listed difference is still a difference: the list stays true.
    assert {path[2:] for path in found} == set(allowed)


def with_reasoning(reply: replies.Reply) -> replies.Reply:
    return attrs.evolve(reply, deltas=({"reasoning_content": "Read it first."}, *reply.deltas))
