"""Queue scenarios both agents play against the scripted model: pi-lsp over LSP and pi 1.6 over
its RPC mode (``tests/e2e/test_queue.py``, ``tests/conformance/test_queue_against_pi16.py``).

In each scenario the first answer is held open at a gate of the scripted server while prompts are
queued one by one (steering or follow-ups), then released; what the model received, request by
request, is the result compared. The modes come from pi's ``settings.json`` in the agent
directory, which pi and pi-lsp both read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs

from pi_lsp.client import pi_request
from pi_lsp.scripted_llm import ScriptedLLM, replies
from pi_lsp.scripted_llm.replies import Reply, gated

GATE = "first-answer"
WAIT_SECONDS = 60


@attrs.frozen
class QueueScenario:
    name: str
    steering_mode: str
    follow_up_mode: str
    held: Reply
    """The first answer, held open while the prompts are queued."""
    queued: tuple[tuple[str, str], ...]
    """``(kind, text)`` in the order they are sent: ``steer`` or ``followUp``."""

    def replies(self) -> list[Reply]:
        answers = [replies.text(f"Answer {index}") for index in range(len(self.queued) + 1)]
        return [gated(self.held, GATE), *answers]

    def write_settings(self, agent_dir: Path) -> None:
        agent_dir.mkdir(parents=True, exist_ok=True)
        settings = {"steeringMode": self.steering_mode, "followUpMode": self.follow_up_mode}
        (agent_dir / "settings.json").write_text(json.dumps(settings))


READ_APP = replies.tool_calls([("call_1", "read", {"path": "app.py"})])
SCENARIOS = [
    *(
        QueueScenario(
            f"follow-ups {mode}",
            "one-at-a-time",
            mode,
            replies.text("First answer"),
            (("followUp", "one"), ("followUp", "two")),
        )
        for mode in ("one-at-a-time", "all")
    ),
    *(
        QueueScenario(
            f"steering {mode}",
            mode,
            "one-at-a-time",
            READ_APP,
            (("steer", "left"), ("steer", "right")),
        )
        for mode in ("one-at-a-time", "all")
    ),
    QueueScenario(
        "steering before follow-ups, both all",
        "all",
        "all",
        replies.text("First answer"),
        (("followUp", "later"), ("steer", "now"), ("followUp", "last"), ("steer", "also")),
    ),
]


def model_view(requests: list[dict[str, Any]]) -> list[list[str]]:
    """Each chat-completions request as the model reads it, one short line per message after the
    system prompt: ``user: text``, ``assistant: text`` or ``assistant calls read``, ``tool``."""
    return [[_line(message) for message in body["messages"][1:]] for body in requests]


def _line(message: dict[str, Any]) -> str:
    role = message["role"]
    if role == "tool":
        return "tool"
    if message.get("tool_calls"):
        return "assistant calls " + ",".join(c["function"]["name"] for c in message["tool_calls"])
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return f"{role}: {content}"


async def play(
    scenario: QueueScenario,
    llm: ScriptedLLM,
    send_prompt: Callable[[str, str | None], Awaitable[Any]],
    queued_count: Callable[[], Awaitable[int]],
    finished: Callable[[list[Any]], Awaitable[None]],
) -> list[list[str]]:
    """Play ``scenario`` through one agent's ``send_prompt(text, kind)`` (None: the first, idle
    prompt; returns what to wait on), ``queued_count()`` (prompts waiting) and ``finished(sent)``
    (waits until the agent is done); the model's view of every request."""
    llm.enqueue(*scenario.replies())
    sent = [await send_prompt("start", None)]
    await llm.gates.reached(GATE, WAIT_SECONDS)
    for index, (kind, text) in enumerate(scenario.queued, start=1):
        sent.append(await send_prompt(text, kind))
        await _until(lambda count=index: _at_least(queued_count, count))
    llm.gates.release(GATE)
    await asyncio.wait_for(finished(sent), WAIT_SECONDS)
    return model_view(llm.requests)


async def play_over_lsp(client, llm: ScriptedLLM, scenario: QueueScenario) -> list[list[str]]:
    """``play`` on a pi-lsp server: ``pi/prompt`` (with ``streamingBehavior``) and ``pi/queue``."""

    async def send_prompt(text: str, kind: str | None):
        params = {"text": text} if kind is None else {"text": text, "streamingBehavior": kind}
        return asyncio.ensure_future(pi_request(client, "pi/prompt", params))

    async def queued_count() -> int:
        queue = await pi_request(client, "pi/queue", {})
        return len(queue["steering"]) + len(queue["followUp"])

    async def finished(sent) -> None:
        await asyncio.gather(*sent)

    return await play(scenario, llm, send_prompt, queued_count, finished)


async def _at_least(queued_count: Callable[[], Awaitable[int]], count: int) -> bool:
    return await queued_count() >= count


async def _until(condition: Callable[[], Awaitable[bool]]) -> None:
    async def poll() -> None:
        while not await condition():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), WAIT_SECONDS)
