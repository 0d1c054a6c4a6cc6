"""The queue against pi 1.6 itself: pi 1.6.0 in RPC mode (``--mode rpc``: ``prompt``, ``steer``,
``follow_up``) and pi-lsp over LSP play the same scenarios (``tests/queue_scenarios.py``) against
scripted models; for each mode of ``steeringMode`` and ``followUpMode`` the model must receive the
same requests, in the same order, from both."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.client import isolated_environment
from pi_lsp.scripted_llm import ScriptedLLM
from tests.e2e.conftest import SCRIPTED_MODEL, another_server
from tests.queue_scenarios import SCENARIOS, QueueScenario, play, play_over_lsp

PI16_DIR = Path(
    os.environ.get(
        "PI16_REFERENCE_PI_DIR", Path(__file__).parents[1] / "reference" / "node_modules" / "pi16"
    )
)
APP = "def add(a, b):\n    return a - b\n"


class Pi16Rpc:
    """pi 1.6 in RPC mode: commands as JSON lines on stdin, responses and events on stdout."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        async for line in self.process.stdout:
            with contextlib.suppress(json.JSONDecodeError):
                self.lines.append(json.loads(line))
                self._changed.set()

    async def command(self, command: dict[str, Any]) -> dict[str, Any]:
        """Send ``command``; its response (pi answers a prompt once it started or queued it)."""
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(command) + "\n").encode())
        await self.process.stdin.drain()
        return await self.wait_for(
            lambda line: line.get("type") == "response" and line["command"] == command["type"]
        )

    async def wait_for(self, matches) -> dict[str, Any]:
        seen = 0
        while True:
            for line in self.lines[seen:]:
                if matches(line):
                    return line
            seen = len(self.lines)
            self._changed.clear()
            await self._changed.wait()

    def last_queue(self) -> tuple[list[str], list[str]]:
        updates = [line for line in self.lines if line.get("type") == "queue_update"]
        return (updates[-1]["steering"], updates[-1]["followUp"]) if updates else ([], [])

    async def close(self) -> None:
        self.process.kill()
        await self.process.wait()
        self._reader.cancel()


async def play_on_pi16(node: Path, tmp_path: Path, scenario: QueueScenario) -> list[list[str]]:
    agent_dir, workspace = tmp_path / "pi16-agent", tmp_path / "pi16-project"
    workspace.mkdir()
    (workspace / "app.py").write_text(APP)
    scenario.write_settings(agent_dir)
    async with ScriptedLLM() as llm:
        provider = {
            "baseUrl": llm.base_url,
            "api": "openai-completions",
            "apiKey": "scripted",
            "models": [{"id": "scripted"}],
        }
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"scripted": provider}}))
        environment = {
            **isolated_environment(tmp_path / "pi16-home"),
            "PI_CODING_AGENT_DIR": str(agent_dir),
        }
        process = await asyncio.create_subprocess_exec(
            str(node),
            str(PI16_DIR / "dist" / "bundle" / "cli.js"),
            *("--mode", "rpc", "--provider", "scripted", "--model", "scripted", "--no-session"),
            cwd=workspace,
            env=environment,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        pi = Pi16Rpc(process)
        try:

            async def send_prompt(text: str, kind: str | None):
                command = {"prompt": "prompt", "steer": "steer", "followUp": "follow_up"}
                response = await pi.command({"type": command[kind or "prompt"], "message": text})
                assert response["success"], response

            async def queued_count() -> int:
                return sum(map(len, pi.last_queue()))

            async def finished(_sent) -> None:
                await pi.wait_for(lambda line: line.get("type") == "agent_settled")

            return await play(scenario, llm, send_prompt, queued_count, finished)
        finally:
            await pi.close()


async def play_on_pi_lsp(tmp_path: Path, scenario: QueueScenario) -> list[list[str]]:
    home, workspace = tmp_path / "pi-lsp-home", tmp_path / "pi-lsp-project"
    workspace.mkdir()
    (workspace / "app.py").write_text(APP)
    scenario.write_settings(home / "agent")
    async with ScriptedLLM() as llm:
        options = {"model": SCRIPTED_MODEL, "apiBase": llm.base_url}
        async with another_server(workspace, options, isolated_environment(home)) as client:
            return await play_over_lsp(client, llm, scenario)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario.name)
async def test_the_model_receives_what_pi_16_sends(reference_node, tmp_path, scenario):
    pi16 = await play_on_pi16(reference_node, tmp_path, scenario)
    ours = await play_on_pi_lsp(tmp_path, scenario)
    assert len(pi16) > 1, "the scenario queued nothing"
    assert ours == pi16
