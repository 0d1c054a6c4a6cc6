"""pi 0.84.2 reads a session whose answers came from a model VS Code provides (``vscode-lm``).

Nothing new is written for them: ordinary ``model_change`` entries and assistant messages whose
``provider`` and ``api`` are ``vscode-lm`` (a provider pi does not know, which it records and
replays as any other). The session is written by the agent itself, in process, through the real
provider path (``vscode_lm.py``) with the editor's side played by a scripted channel: a tool call,
its result, a streamed answer with the model's own token counts. pi must see the same tree, build
the same context at every entry and re-serialize every line to the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_lsp import protocol
from pi_lsp.llm.client import ProviderClient
from pi_lsp.protocol import LanguageModelChatParams, LanguageModelChatResult, LanguageModelPart
from pi_lsp.session.session import Session

from .harness import Query, disagreements, session_written_in

# The same check as for checkpoints, collected here again on this module's ``session_file``.
from .test_pi_reads_checkpoints import (  # noqa: F401
    test_pi_reads_the_same_tree_and_rewrites_every_line_to_the_same_bytes,
)

MODEL = protocol.LanguageModelInfo("scripted-1", "test", "scripted", "Scripted (test)", 64_000)
ANSWERS: list[list[dict[str, Any]]] = [
    [
        {"type": "text", "text": "Let me read it."},
        {"type": "toolCall", "callId": "call-1", "name": "read", "input": {"path": "app.py"}},
    ],
    [{"type": "text", "text": "It subtracts; "}, {"type": "text", "text": "it should add."}],
]


class _EditorChannel:
    """The editor's side: each request gets the next scripted answer's parts, then counts."""

    def __init__(self) -> None:
        self.answers = [list(answer) for answer in ANSWERS]

    async def chat(
        self, params: LanguageModelChatParams, on_part: Callable[[LanguageModelPart], None]
    ) -> LanguageModelChatResult:
        for part in self.answers.pop(0):
            on_part(protocol.converter.structure(part, LanguageModelPart))
        return LanguageModelChatResult(input_tokens=900, output_tokens=12)


async def _write_session(workspace: Path) -> Path:
    from tests.agent_harness import AgentHarness

    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    agent = AgentHarness(workspace)
    editor_models = agent.services.live.editor_models
    editor_models.connect(_EditorChannel())
    editor_models.replace([MODEL])
    agent.agent.client = ProviderClient(None, editor_models)
    try:
        agent.agent.set_model(agent.runtime, "vscode-lm/test/scripted-1")  # a model_change entry
        result = await agent.prompt("what is wrong in app.py?")
        assert result.stop_reason == "stop"
        return agent.runtime.session.path
    finally:
        agent.close()


@pytest.fixture(scope="module")
def session_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_written_in(tmp_path_factory, "editor-model", _write_session)


def test_the_answers_are_recorded_as_the_editors_models(session_file):
    session = Session.open(session_file, writable=False)
    answers = [
        entry["message"]
        for entry in session.entries
        if entry.type == "message" and entry.role == "assistant"
    ]
    assert [(m["provider"], m["model"], m["api"]) for m in answers] == [
        ("vscode-lm", "test/scripted-1", "vscode-lm")
    ] * 2
    assert answers[-1]["usage"]["input"] == 900
    [change] = [entry for entry in session.entries if entry.type == "model_change"]
    assert (change["provider"], change["modelId"]) == ("vscode-lm", "test/scripted-1")


def test_pi_builds_the_same_context_at_every_entry(reference_node, session_file):
    session = Session.open(session_file, writable=False)
    queries = [Query("context", session_file.name, ("--leaf", e.id)) for e in session.entries]
    mismatches, _ = disagreements(reference_node, session_file.parent, queries)
    assert mismatches == []
