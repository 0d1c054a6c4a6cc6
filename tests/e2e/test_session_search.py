"""Searching every session of the workspace, end to end: pi-lsp's own sessions, a session pi
0.84.2 wrote in its own directory (and appended to while the server runs), and the index after a
restart. The index is built in the background, so each test asks until the answer is complete.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from pi_lsp.project_memory.locations import index_path, pi_session_dir
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from tests.conformance.harness import REFERENCE_DIR, REFERENCE_NODE
from tests.e2e.conftest import HOME, SCRIPTED_MODEL, another_server, request

PHRASE = "exponential backoff with jitter"


async def search_until(client, params: dict, found, attempts: int = 400) -> dict:
    """``pi/searchSessions`` asked again until ``found(result)`` (the index builds in the
    background); the last answer either way."""
    result: dict = {}
    for _ in range(attempts):
        result = await request(client, "pi/searchSessions", params)
        if found(result):
            return result
        await asyncio.sleep(0.05)
    return result


def entry_ids_with(path: str, text: str) -> list[str]:
    lines = [json.loads(line) for line in Path(path).read_text().splitlines()]
    return [
        line["id"] for line in lines if line.get("type") == "message" and text in json.dumps(line)
    ]


async def test_a_phrase_from_another_session_is_found_with_its_entry(client, scripted_llm):
    scripted_llm.enqueue(replies.text("Agreed."))
    await request(client, "pi/prompt", {"text": f"Our retry policy: {PHRASE}."})
    first = await request(client, "pi/state", {})
    created = await request(client, "pi/newSession", {})
    scripted_llm.enqueue(replies.text("Sure."))
    await request(client, "pi/prompt", {"sessionId": created["sessionId"], "text": "What next?"})

    result = await search_until(
        client, {"query": f'"{PHRASE}"'}, lambda result: result["total"] >= 1
    )
    [hit] = result["hits"]
    assert hit["sessionId"] == first["sessionId"] != created["sessionId"]
    assert [hit["entryId"]] == entry_ids_with(hit["path"], PHRASE)
    assert (hit["type"], hit["role"], hit["onActivePath"]) == ("message", "user", True)
    assert PHRASE in hit["preview"]
    assert result["indexing"]["complete"] is True
    assert result["indexing"]["knownFiles"] == 2

    window = await request(
        client, "pi/treeWindow", {"sessionId": hit["sessionId"], "targetId": hit["entryId"]}
    )
    assert window["targetId"] == hit["entryId"]


async def test_the_search_syntax_never_fails(client, scripted_llm):
    scripted_llm.enqueue(replies.text("Done."))
    await request(client, "pi/prompt", {"text": "Fix foo-bar(x) in naïve café code."})
    found = await search_until(client, {"query": "foo-bar(x)"}, lambda result: result["total"])
    assert found["total"] == 1
    for query in ['"unbalanced', "NEAR(", "a:b*", "-", "AND"]:
        result = await request(client, "pi/searchSessions", {"query": query})
        assert result["total"] == 0
    best = await request(client, "pi/searchSessions", {"query": "naive cafe", "order": "best"})
    assert best["total"] == 1


@pytest.mark.parametrize(
    ("params", "problem"),
    [({"query": " "}, "blank"), ({"query": "x", "limit": 0}, "limit"), ({}, "query")],
)
async def test_bad_params_are_invalid_params(client, params, problem):
    from pi_lsp.client import PiRequestError

    with pytest.raises(PiRequestError) as raised:
        await request(client, "pi/searchSessions", params)
    assert raised.value.code == -32602 and problem in raised.value.message


def pi_writes(workspace: Path, texts: list[str], session_file: str | None = None) -> dict:
    if not REFERENCE_NODE.exists():
        pytest.skip("pi 0.84.2 is not installed (tests/reference/install.sh)")
    environment = {**os.environ, "HOME": str(HOME), "PI_CODING_AGENT_DIR": str(HOME / "agent")}
    command = [str(REFERENCE_NODE), str(REFERENCE_DIR / "pi_write_session.mjs"), str(workspace)]
    command += [session_file] if session_file else []
    completed = subprocess.run(
        [*command, "--", *texts], env=environment, capture_output=True, text=True, check=True
    )
    return json.loads(completed.stdout)


async def test_a_session_pi_wrote_in_its_own_directory_is_found_and_followed(workspace):
    written = pi_writes(workspace, ["the deploy freeze starts on Friday"])
    assert Path(written["path"]).parent == pi_session_dir(workspace, HOME / "agent")
    async with ScriptedLLM() as llm:
        options = {"model": SCRIPTED_MODEL, "apiBase": llm.base_url, "autoName": False}
        async with another_server(workspace, options) as client:
            result = await search_until(
                client, {"query": "deploy freeze"}, lambda result: result["total"] >= 2
            )
            assert {hit["entryId"] for hit in result["hits"]} == set(written["ids"])
            assert {hit["path"] for hit in result["hits"]} == {written["path"]}

            appended = pi_writes(workspace, ["rollback plan ready"], written["path"])
            result = await search_until(
                client, {"query": "rollback"}, lambda result: result["total"] >= 2
            )
            assert {hit["entryId"] for hit in result["hits"]} == set(appended["ids"])

            # A hit in pi's directory opens (pi's directory of the workspace is allowed).
            opened = await request(client, "pi/openSession", {"path": written["path"]})
            window = await request(client, "pi/treeWindow", {"targetId": appended["ids"][0]})
            assert window["targetId"] == appended["ids"][0]
            assert opened["sessionId"] == result["hits"][0]["sessionId"]


def last_row(database: Path) -> int:
    with contextlib.closing(sqlite3.connect(database)) as connection:
        return connection.execute("SELECT max(row) FROM entries").fetchone()[0]


def mark(database: Path) -> None:
    with contextlib.closing(sqlite3.connect(database)) as connection, connection:
        connection.execute("INSERT INTO meta (key, value) VALUES ('test', 'kept')")


def marked(database: Path) -> bool:
    with contextlib.closing(sqlite3.connect(database)) as connection:
        return bool(connection.execute("SELECT 1 FROM meta WHERE key = 'test'").fetchone())


async def test_the_index_survives_a_restart(workspace, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(HOME / "state"))
    database = index_path(workspace)
    async with ScriptedLLM() as llm:
        options = {"model": SCRIPTED_MODEL, "apiBase": llm.base_url, "autoName": False}
        async with another_server(workspace, options) as client:
            llm.enqueue(replies.text("Noted."))
            await request(client, "pi/prompt", {"text": "Remember the blue-green rollout."})
            await search_until(client, {"query": "rollout"}, lambda result: result["total"])
        indexed = last_row(database)
        mark(database)
        async with another_server(workspace, options) as client:
            result = await search_until(
                client,
                {"query": "rollout"},
                lambda result: result["indexing"]["complete"] and result["total"],
            )
            assert result["total"] == 1
    assert marked(database)  # the same database, not one built again
    assert last_row(database) == indexed  # nothing indexed again


def tool_names(sent_request: dict) -> set[str]:
    return {tool["function"]["name"] for tool in sent_request.get("tools", [])}


async def test_the_agent_searches_the_other_sessions_and_reads_a_hit(client, scripted_llm):
    scripted_llm.enqueue(replies.text("Agreed."))
    await request(client, "pi/prompt", {"text": f"Our retry policy: {PHRASE}."})
    earlier = await request(client, "pi/state", {})
    found = await search_until(client, {"query": "jitter"}, lambda result: result["total"])
    entry_id = found["hits"][0]["entryId"]

    later = await request(client, "pi/newSession", {})
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "search_sessions", {"query": "retry policy"})]),
        replies.tool_calls(
            [
                (
                    "call_2",
                    "read_session_entry",
                    {"session_id": earlier["sessionId"], "entry_id": entry_id},
                )
            ]
        ),
        replies.text("We use exponential backoff."),
    )
    await request(
        client,
        "pi/prompt",
        {"sessionId": later["sessionId"], "text": "What did we decide about retries?"},
    )
    first, second, third = scripted_llm.requests[-3:]
    assert {"search_sessions", "read_session_entry"} <= tool_names(first)
    assert "search_sessions" in first["messages"][0]["content"]  # listed in the system prompt
    searched = json.dumps(second["messages"][-1], ensure_ascii=False)
    assert PHRASE in searched and entry_id in searched and earlier["sessionId"] in searched
    read = json.dumps(third["messages"][-1], ensure_ascii=False)
    assert f"{PHRASE}." in read and "this entry" in read and "Agreed." in read


@pytest.mark.options(sessionSearchTools=False)
async def test_a_setting_turns_the_agents_session_search_off(client, scripted_llm):
    scripted_llm.enqueue(replies.text("Hi."))
    await request(client, "pi/prompt", {"text": "Hello"})
    assert not {"search_sessions", "read_session_entry"} & tool_names(scripted_llm.requests[-1])
    assert "read" in tool_names(scripted_llm.requests[-1])


@pytest.mark.options(trusted=False)
async def test_an_untrusted_workspace_has_no_session_search_tools(client, scripted_llm):
    scripted_llm.enqueue(replies.text("Hi."))
    await request(client, "pi/prompt", {"text": "Hello"})
    assert "search_sessions" not in tool_names(scripted_llm.requests[-1])
