"""kill -9 of the whole server in the middle of its work, over and over, on the same sessions.

Each trial starts a server on the same workspace, which first resumes every session (opened
writable, its leaf where the file ends) and then sets three of them going at once: one streams a
long answer, one runs a command (``bash``), one compacts with a summary that streams slowly.
Once all three are under way, and a random moment later, the server gets SIGKILL. The files
must still hold every entry they held before, and at most a torn last line. The next trial's
server resumes them, and after the last trial pi 0.84.2 reads every file (one Node process) with
the entries and the context pi-lsp sees.

Each kill interrupts three turns (streaming, a command, a compaction): ``PI_LSP_SERVER_KILLS``
kills (default 34, as in CI: 102 interrupted turns) on two chains of sessions running side by
side.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.client import PiClient
from pi_lsp.compaction.prompts import SUMMARIZER_SYSTEM_PROMPT
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from pi_lsp.session.store import parse_session_bytes

from .figures import record_figure
from .pi_reader import assert_same_reading
from .servers import make_workspace, server_options, start_server

KILLS = int(os.environ.get("PI_LSP_SERVER_KILLS", "34"))
CHAINS = 2
LONG_ANSWER = " ".join(f"token{number}" for number in range(400))
COMMAND = "for i in $(seq 30); do echo line $i; sleep 0.05; done"


def respond(body: Mapping[str, Any]) -> replies.Reply:
    """The scripted model: what it answers depends on what the session asked."""
    messages = body.get("messages", [])
    system = messages[0].get("content") if messages else ""
    if isinstance(system, str) and system.startswith(SUMMARIZER_SYSTEM_PROMPT[:40]):
        return replies.slow_text(
            "## Goal\nKeep going.\n" + LONG_ANSWER, chunks=200, chunk_delay=0.05
        )
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return replies.text("The command ran.")
    text = json.dumps(last.get("content"))
    if "STREAM" in text:
        return replies.slow_text(LONG_ANSWER, chunks=200, chunk_delay=0.05)
    if "COMMAND" in text:
        return replies.tool_calls([(f"call-{time.monotonic_ns()}", "bash", {"command": COMMAND})])
    return replies.text("Noted: " + text[:200])


def file_state(path: Path) -> tuple[list[str], bool]:
    loaded = parse_session_bytes(path.read_bytes(), path)
    return [entry.id for entry in loaded.lines], loaded.report.torn_last_line


async def wait_for(client: PiClient, session_id: str, event_type: str, since: int) -> None:
    while not any(
        notification["sessionId"] == session_id and notification["event"]["type"] == event_type
        for notification in client.events.notifications[since:]
    ):
        if client.process.returncode is not None:
            raise AssertionError(f"the server died before {event_type}")
        await asyncio.sleep(0.02)


async def resume_all(client: PiClient, sessions: dict[str, Path]) -> None:
    """The restarted server resumes every session: writable, with the leaf the file ends on."""
    for session_id, path in sessions.items():
        opened = await client.request("pi/openSession", {"sessionId": session_id})
        assert opened["readOnly"] is False, opened
        ids, _ = file_state(path)
        assert opened["leafId"] == ids[-1], f"{path.name}: resumed at another leaf"


async def one_trial(
    client: PiClient, sessions: dict[str, str], rng: random.Random
) -> dict[str, asyncio.Future]:
    """Set the three sessions going; return once all three are under way."""
    streaming, command, compacting = sessions
    since = len(client.events.notifications)
    work = {
        "streaming": asyncio.ensure_future(
            client.request("pi/prompt", {"sessionId": streaming, "text": "STREAM please"})
        ),
        "command": asyncio.ensure_future(
            client.request("pi/prompt", {"sessionId": command, "text": "run the COMMAND"})
        ),
    }
    await client.request("pi/prompt", {"sessionId": compacting, "text": "remember this"})
    work["compaction"] = asyncio.ensure_future(
        client.request("pi/compact", {"sessionId": compacting})
    )
    await asyncio.wait_for(
        asyncio.gather(
            wait_for(client, streaming, "text_delta", since),
            wait_for(client, command, "tool_execution_update", since),
            wait_for(client, compacting, "compaction_start", since),
        ),
        300,
    )
    await asyncio.sleep(rng.uniform(0, 0.4))
    return work


async def chain(root: Path, kills: int, seed: int) -> tuple[list[Path], dict[str, int]]:
    rng = random.Random(seed)
    workspace = make_workspace(root)
    counts = {"kills": 0, "interrupted turns": 0, "torn last lines": 0}
    async with ScriptedLLM(responder=respond) as model:
        options = server_options(model.base_url, workspace, compaction={"keepRecentTokens": 20})
        sessions: dict[str, Path] = {}
        for trial in range(kills + 1):
            client = await start_server(root / "home", workspace, options)
            try:
                await resume_all(client, sessions)
                if not sessions:
                    for _ in range(3):
                        created = await client.request("pi/newSession", {})
                        await client.request(
                            "pi/prompt", {"sessionId": created["sessionId"], "text": "hello"}
                        )
                        sessions[created["sessionId"]] = Path(created["path"])
                if trial == kills:  # the last server: one clean turn each, then a normal exit
                    for session_id in sessions:
                        answer = await client.request(
                            "pi/prompt", {"sessionId": session_id, "text": "after the crashes"}
                        )
                        assert answer["stopReason"] == "stop"
                    break
                before = {path: file_state(path)[0] for path in sessions.values()}
                work = await one_trial(client, list(sessions), rng)
                client.process.kill()
                await client.process.wait()
                for future in work.values():
                    future.cancel()
                counts["kills"] += 1
                counts["interrupted turns"] += len(work)
                for path, ids in before.items():
                    now, torn = file_state(path)
                    assert now[: len(ids)] == ids, f"{path.name}: entries written before changed"
                    counts["torn last lines"] += torn
            finally:
                await client.close()
    return list(sessions.values()), counts


@pytest.mark.timeout(max(900, KILLS * 25))
async def test_kill_9_of_the_server_mid_turn(tmp_path, reference_node):
    started = time.perf_counter()
    per_chain = [KILLS // CHAINS + (index < KILLS % CHAINS) for index in range(CHAINS)]
    results = await asyncio.gather(
        *(chain(tmp_path / f"chain-{index}", kills, index) for index, kills in enumerate(per_chain))
    )
    files = [path for paths, _ in results for path in paths]
    totals = {name: sum(counts[name] for _, counts in results) for name in results[0][1]}
    assert_same_reading(reference_node, files)
    record_figure(
        "kill -9 of the server mid-turn",
        **totals,
        sessions=len(files),
        entries_lost=0,
        seconds=round(time.perf_counter() - started, 1),
    )
