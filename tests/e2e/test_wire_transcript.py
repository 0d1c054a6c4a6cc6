"""The protocol as seen on the wire does not change by accident: a recorded transcript.

A scripted scenario sends every ``pi/*`` request to the real server over stdio (the scripted
model answering), and compares what comes back with ``wire/transcript.json``: every response
body, key order included, and every ``pi/event`` of each session in ``seq`` order. Only what
differs from run to run is normalised: session and entry ids (numbered in order of appearance),
timestamps, tool durations, the temporary folder, token counts (which follow the length of its
path), and how many consecutive text deltas the event stream merged.

A refactoring of the protocol's classes must leave this transcript as it is. A deliberate change
of the protocol re-records it: ``PI_LSP_RECORD_WIRE=1 pytest tests/e2e/test_wire_transcript.py``,
and the diff of ``transcript.json`` shows the change for review.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.client import STREAM_LIMIT, isolated_environment
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM

TRANSCRIPT = Path(__file__).with_name("wire") / "transcript.json"
RECORD = os.environ.get("PI_LSP_RECORD_WIRE") == "1"


class WireClient:
    """A client that frames JSON-RPC itself and keeps every body the server sends, as sent."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.responses: dict[int, Any] = {}
        self.notifications: list[Any] = []
        self.next_id = 0
        self.arrived = asyncio.Event()
        self.reader = asyncio.ensure_future(self.read_frames())

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        request_id = self.next_id
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        await self.wait_until(lambda: request_id in self.responses)
        return self.responses.pop(request_id)

    async def wait_until(self, condition, timeout: float = 120) -> None:
        async def arrived() -> None:
            while not condition():
                if self.reader.done():
                    raise ConnectionError("the server closed the connection")
                self.arrived.clear()
                await self.arrived.wait()

        await asyncio.wait_for(arrived(), timeout)

    async def read_frames(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                length = 0
                while (line := await stdout.readline()) != b"\r\n":
                    if not line:
                        return
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                message = json.loads(await stdout.readexactly(length))
                if "method" in message and "id" in message:  # a request of the server's
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                elif "method" in message:
                    self.notifications.append(message)
                else:
                    self.responses[message["id"]] = message
                self.arrived.set()
        finally:
            self.arrived.set()


# ------------------------------------------------------------------------------- the scenario


def make_workspace(root: Path, llm: ScriptedLLM) -> Path:
    """The project, and pi's agent folder with a models.json provider on this machine."""
    models = {
        "providers": {
            "wire-local": {
                "baseUrl": llm.base_url,
                "api": "openai-completions",
                "models": [{"id": "scripted", "name": "Scripted", "contextWindow": 32000}],
            }
        }
    }
    (root / "home" / "agent").mkdir(parents=True)
    (root / "home" / "agent" / "models.json").write_text(json.dumps(models))
    workspace = root / "project"
    (workspace / ".pi" / "skills" / "greet").mkdir(parents=True)
    (workspace / "AGENTS.md").write_text("Always answer in English.\n")
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / ".pi" / "skills" / "greet" / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Says hello.\n---\nSay hello.\n"
    )
    return workspace


async def run_scenario(client: WireClient, llm: ScriptedLLM, workspace: Path) -> list[dict]:
    exchanges: list[dict] = []

    async def send(method: str, params: dict) -> dict:
        response = await client.request(method, params)
        exchanges.append({"method": method, "params": params, "response": response})
        return response.get("result") or {}

    await send("pi/state", {})
    await send("pi/models", {"provider": "wire-local"})
    await send("pi/resources", {})
    await send("pi/reload", {})
    llm.enqueue(
        replies.tool_calls([("call_1", "write", {"path": "notes.txt", "content": "one\n"})]),
        replies.text("Wrote notes.txt.", chunks=4),
    )
    first = await send("pi/prompt", {"text": "Write the notes"})
    llm.enqueue(replies.text("The second answer.", chunks=3, reasoning="Thinking it over."))
    await send("pi/prompt", {"text": "And again"})
    session_id = first["sessionId"]
    llm.enqueue(replies.text("## Goal\nA compacted session.\n"))
    await send("pi/compact", {"instructions": "Keep the file names"})
    tree = await send("pi/tree", {})
    [first_user] = [entry["id"] for entry in tree["entries"] if entry.get("role") == "user"][:1]
    await send("pi/treeWindow", {"limit": 3})
    await send("pi/treeChildren", {"parentId": None, "offset": 1, "limit": 2})
    await send("pi/treeSearch", {"query": "notes"})
    await send("pi/messages", {"limit": 4})
    await send("pi/label", {"entryId": first_user, "label": "start"})
    await send("pi/name", {"name": "wire transcript"})
    await send("pi/fileChanges", {"toId": first_user, "includeText": True})
    llm.enqueue(replies.text("## Goal\nWrite the notes.\n"))
    await send(
        "pi/navigate",
        {"targetId": first_user, "summarize": True, "restoreFiles": True, "force": True},
    )
    await send("pi/fork", {"entryId": first["leafId"], "sessionId": session_id})
    await send("pi/sessions", {})
    await send("pi/openSession", {"sessionId": session_id})
    await send("pi/newSession", {"name": "scratch"})
    await send("pi/setModel", {"model": "openai/scripted", "sessionId": session_id})
    await send("pi/setThinkingLevel", {"level": "high", "sessionId": session_id})
    await send("pi/compact", {"sessionId": session_id})
    await send("pi/state", {"sessionId": session_id})
    await send("pi/abort", {"sessionId": session_id})
    await send("pi/label", {"entryId": 42})
    await send("pi/navigate", {"targetId": "ffffffff", "sessionId": session_id})
    await send("pi/login", {"provider": "wire-test", "key": "sk-wire"})
    await send("pi/logout", {"provider": "wire-test"})
    await send("pi/queue", {"sessionId": session_id})
    await send("pi/clearQueue", {"sessionId": session_id})
    await send("pi/removeQueued", {"id": "q0", "sessionId": session_id})
    await send("pi/editQueued", {"id": "q0", "text": "Say it again", "sessionId": session_id})
    return exchanges


# ----------------------------------------------------------------------------- normalisation

FILE_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z")
SESSION_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ENTRY_ID = re.compile(r"\b[0-9a-f]{8}\b")
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
MERGED = ("text_delta", "thinking_delta")
TOKEN_COUNTS = frozenset(
    {"input", "output", "cacheRead", "cacheWrite", "totalTokens", "contextTokens", "tokens"}
    | {"percent", "tokensBefore", "tokensAfter", "cachedPercent"}
)
"""Numbers that follow the prompt's size, which follows the length of the temporary folder's
path (in the system prompt): only their type is compared."""


class Normaliser:
    """Replaces what differs between runs with stable placeholders, in order of appearance."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.names: dict[str, str] = {}

    def name(self, kind: str, value: str) -> str:
        if value not in self.names:
            count = sum(1 for name in self.names.values() if name.startswith(f"<{kind}-"))
            self.names[value] = f"<{kind}-{count + 1}>"
        return self.names[value]

    def text(self, value: str) -> str:
        value = value.replace(self.root, "<tmp>")
        value = SESSION_ID.sub(lambda match: self.name("session", match.group()), value)
        value = ISO_TIME.sub("<time>", FILE_TIME.sub("<file-time>", value))
        return ENTRY_ID.sub(lambda match: self.name("entry", match.group()), value)

    def json(self, value: Any, key: str | None = None) -> Any:
        if isinstance(value, dict):
            return {self.text(name): self.json(item, name) for name, item in value.items()}
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, str):
            return self.text(value)
        if key == "timestamp" and isinstance(value, int) and value > 10**12:
            return "<epoch-ms>"
        if key == "durationMs" and isinstance(value, int):
            return "<ms>"
        if key in TOKEN_COUNTS and isinstance(value, int | float) and not isinstance(value, bool):
            return f"<{type(value).__name__}>"
        return value


def events_by_session(notifications: list[dict]) -> dict[str, list[dict]]:
    """Each session's events in ``seq`` order, consecutive deltas merged and ``seq`` left out."""
    sessions: dict[str, list[dict]] = {}
    for message in notifications:
        if message["method"] == "pi/event":
            sessions.setdefault(message["params"]["sessionId"], []).append(message["params"])
    merged: dict[str, list[dict]] = {}
    for session, params in sessions.items():
        params.sort(key=lambda item: item["seq"])
        events: list[dict] = []
        for item in params:
            event = dict(item["event"])
            previous = events[-1] if events else None
            if previous and event["type"] in MERGED and previous["type"] == event["type"]:
                previous["delta"] += event["delta"]
            else:
                events.append(event)
        merged[session] = events
    return merged


def normalised_transcript(
    exchanges: list[dict], notifications: list[dict], root: Path
) -> dict[str, Any]:
    normaliser = Normaliser(root)
    recorded = [normaliser.json(exchange) for exchange in exchanges]
    events = {
        normaliser.text(session): normaliser.json(items)
        for session, items in events_by_session(notifications).items()
    }
    return {"exchanges": recorded, "events": events}


# ------------------------------------------------------------------------------------ the test


@pytest.fixture
async def wire(tmp_path: Path):
    llm = ScriptedLLM()
    await llm.start()
    workspace = make_workspace(tmp_path, llm)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "pi_lsp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=isolated_environment(tmp_path / "home"),
        limit=STREAM_LIMIT,
    )
    client = WireClient(process)
    options = {
        "model": "openai/scripted",
        "apiBase": llm.base_url,
        "retry": {"baseDelayMs": 20},
        "autoName": False,
        "compaction": {"keepRecentTokens": 20, "reserveTokens": 100},
        "contextWindow": 100000,
        "tokenizer": "chars4",
    }
    initialize = {
        "processId": None,
        "rootUri": workspace.as_uri(),
        "capabilities": {},
        "initializationOptions": options,
    }
    await client.request("initialize", initialize)
    client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    yield client, llm, workspace, tmp_path
    await client.request("shutdown", None)
    client.send({"jsonrpc": "2.0", "method": "exit"})
    await asyncio.wait_for(process.wait(), 60)
    await llm.stop()


async def test_the_protocol_on_the_wire_is_what_was_recorded(wire):
    client, llm, workspace, root = wire
    exchanges = await run_scenario(client, llm, workspace)
    transcript = normalised_transcript(exchanges, client.notifications, root)

    if RECORD:
        TRANSCRIPT.parent.mkdir(exist_ok=True)
        TRANSCRIPT.write_text(json.dumps(transcript, indent=1, ensure_ascii=False) + "\n")
    recorded = json.loads(TRANSCRIPT.read_text())
    for index, (got, wanted) in enumerate(
        zip(transcript["exchanges"], recorded["exchanges"], strict=True)
    ):
        assert_same_json(got, wanted, f"exchange {index} ({wanted['method']})")
    assert list(transcript["events"]) == list(recorded["events"])
    for session, events in recorded["events"].items():
        got_events = transcript["events"][session]
        assert [event["type"] for event in got_events] == [event["type"] for event in events]
        for got, wanted in zip(got_events, events, strict=True):
            assert_same_json(got, wanted, f"{session}: {wanted['type']}")


def assert_same_json(got: Any, wanted: Any, where: str) -> None:
    """Compared as text: a key that moves is a change on the wire too."""
    got_text, wanted_text = json.dumps(got, indent=1), json.dumps(wanted, indent=1)
    if got_text != wanted_text:
        diff = difflib.unified_diff(
            wanted_text.splitlines(), got_text.splitlines(), "recorded", "now", lineterm=""
        )
        pytest.fail(f"{where} differs from the recording:\n" + "\n".join(diff))
