"""The agent's services in process, for fast tests of orchestration: no server, no HTTP, no litellm.

``AgentHarness`` builds the same service graph the server builds at ``initialize``
(``Services.create``) on a temporary workspace, with the in-process model double
(``pi_lsp.llm.double.ModelDouble``) answering from a script, and records every ``pi/event``::

    async def test_a_tool_round(agent):  # the fixture in tests/unit/conftest.py
        agent.model.script(
            replies.tool_calls([("call-1", "read", {"path": "app.py"})]),
            replies.text("It adds."),
        )
        result = await agent.prompt("What does app.py do?")
        assert result.stop_reason == "stop"
        assert "tool_execution_end" in agent.event_types()

``start_prompt`` runs a prompt as a task (to queue, steer or abort while it runs), ``wait_for``
waits for an event, ``model.hold(reply)`` pauses an answer mid-stream until released, and
``tools=`` replaces the agent's tools (a tool that blocks, to abort a running tool), ``editor=``
the editor bridge (none by default: every change goes to the disk), ``asker=`` who answers
permission questions (none by default: every question is refused).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_lsp import protocol
from pi_lsp.agent.permissions import PermissionAsker
from pi_lsp.agent.resource_service import ResourceService
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.config import load_config
from pi_lsp.llm.double import ModelDouble
from pi_lsp.protocol import PromptResult
from pi_lsp.services import Services
from pi_lsp.tools.base import EditorBridge, Tool

DOUBLE_MODEL = "openai/double"
DEFAULT_OPTIONS: dict[str, Any] = {
    "model": DOUBLE_MODEL,
    # The double answers in process; an endpoint of its own marks it as needing no key.
    "apiBase": "http://127.0.0.1:9/v1",
    "contextWindow": 128_000,
    "tokenizer": "chars4",
    "retry": {"baseDelayMs": 1},
    "autoName": False,  # the double answers exactly the replies a test scripts
}


class AgentHarness:
    """The services of one workspace with a model double (see the module docstring)."""

    def __init__(
        self,
        workspace: Path,
        *,
        options: dict[str, Any] | None = None,
        tools: Callable[[], list[Tool]] | None = None,
        editor: EditorBridge | None = None,
        asker: PermissionAsker | None = None,
    ) -> None:
        self.workspace = workspace
        self.model = ModelDouble()
        self.notifications: list[protocol.EventNotification] = []
        resources = ResourceService(workspace, workspace / ".agent-dir", trusted=True)
        config = load_config(
            workspace,
            {**DEFAULT_OPTIONS, **(options or {})},
            pi_settings=resources.snapshot.settings.settings.merged,
        )
        self.services = Services.create(
            config,
            resources,
            self.notifications.append,
            client=self.model,
            tools=tools,
            editor=editor,
            asker=asker,
        )
        self._changed = asyncio.Event()

    @property
    def agent(self):
        return self.services.agent

    @property
    def runtime(self) -> SessionRuntime:
        """The workspace's current session."""
        return self.services.sessions.current()

    async def prompt(self, text: str, behavior: str | None = None) -> PromptResult:
        return await self.agent.prompt(self.runtime, text, [], behavior)

    def start_prompt(self, text: str, behavior: str | None = None) -> asyncio.Task[PromptResult]:
        """The prompt as a running task; yields once so it has started (or queued) on return."""
        return asyncio.ensure_future(self.prompt(text, behavior))

    def events(self, event_type: str | None = None) -> list[Any]:
        """The events sent so far (pending merged deltas included), in order."""
        for runtime in self.services.sessions.open_runtimes:
            runtime.events.flush()
        return [
            item.event
            for item in self.notifications
            if event_type is None or event_type == item.event.TYPE
        ]

    def event_types(self) -> list[str]:
        return [event.TYPE for event in self.events()]

    async def wait_for(self, event_type: str, count: int = 1, timeout: float = 5.0) -> Any:
        """The ``count``-th event of ``event_type``, waiting for it if needed."""

        async def arrived() -> Any:
            while len(self.events(event_type)) < count:
                await asyncio.sleep(0.001)
            return self.events(event_type)[count - 1]

        return await asyncio.wait_for(arrived(), timeout)

    def messages(self) -> list[dict[str, Any]]:
        """The messages of the active path, as saved (compactions and other entries left out)."""
        return [
            entry["message"] for entry in self.runtime.session.branch() if entry.type == "message"
        ]

    def entry_types(self) -> list[str]:
        return [entry.type for entry in self.runtime.session.branch()]

    def close(self) -> None:
        self.agent.abort_all()
        self.services.sessions.close_all()


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or [] if block.get("type") == "text")
