"""Export, import and delete, end to end: the three export formats (the HTML page opened in
headless Chromium, its tree switching branches, offline), a session file copied in with its id
and cwd, and a session moved to the trash and dropped from the index."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from pi_lsp.client import PiRequestError
from pi_lsp.scripted_llm import replies
from tests.conformance.harness import REFERENCE_NODE
from tests.e2e.conftest import HOME, another_server, request, server_environment
from tests.e2e.test_session_search import search_until

REPO = Path(__file__).resolve().parents[2]
EXPORT_PAGE = REPO / "editors" / "vscode" / "test" / "export_page.mjs"
CHROMIUM = Path("/usr/bin/chromium")


def file_entries(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def message_id(path: str, role: str, text: str) -> str:
    return next(
        entry["id"]
        for entry in file_entries(path)
        if entry.get("message", {}).get("role") == role and text in json.dumps(entry)
    )


async def branched_session(client, scripted_llm) -> dict:
    """alpha question → (read app.py) alpha answer → {alpha follow-up, beta question (leaf)}."""
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "read", {"path": "app.py"})]), replies.text("alpha answer")
    )
    await request(client, "pi/prompt", {"text": "alpha question"})
    scripted_llm.enqueue(replies.text("follow-up answer"))
    await request(client, "pi/prompt", {"text": "alpha follow-up"})
    state = await request(client, "pi/state", {})
    path = state["path"]
    answer = message_id(path, "assistant", "alpha answer")
    await request(client, "pi/navigate", {"targetId": answer})
    scripted_llm.enqueue(replies.text("beta answer"))
    await request(client, "pi/prompt", {"text": "beta question"})
    return {"sessionId": state["sessionId"], "path": path}


async def test_a_session_exports_as_jsonl_markdown_and_a_page_whose_tree_switches_branches(
    client, scripted_llm, workspace
):
    session = await branched_session(client, scripted_llm)
    exported = {}
    for format in ("jsonl", "markdown", "html"):
        result = await request(
            client, "pi/exportSession", {"sessionId": session["sessionId"], "format": format}
        )
        exported[format] = Path(result["path"])
    assert exported["jsonl"].read_bytes() == Path(session["path"]).read_bytes()
    assert exported["markdown"].parent == workspace
    markdown = exported["markdown"].read_text()
    assert "## User\n\nalpha question" in markdown and "Tool call `read`" in markdown
    assert "beta answer" in markdown and "alpha follow-up" not in markdown  # the active path

    named = await request(
        client,
        "pi/exportSession",
        {"sessionId": session["sessionId"], "format": "html", "path": "out/page.html"},
    )
    assert named["path"] == str(workspace / "out" / "page.html")

    if not (
        CHROMIUM.exists()
        and REFERENCE_NODE.exists()
        and (EXPORT_PAGE.parent.parent / "node_modules" / "playwright-core").exists()
    ):
        pytest.skip("Chromium, Node or playwright-core is not installed")
    follow_up = message_id(session["path"], "user", "alpha follow-up")
    shown = json.loads(
        subprocess.run(  # noqa: ASYNC221 - the server is idle while the browser looks at the page
            [str(REFERENCE_NODE), str(EXPORT_PAGE), str(exported["html"]), follow_up],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
    )
    assert shown["errors"] == [] and shown["requests"] == []  # no script error, no network
    before, after = " ".join(shown["before"]["texts"]), " ".join(shown["after"]["texts"])
    assert "beta question" in before and "alpha follow-up" not in before
    assert "tool call: read" in before and "alpha answer" in before
    assert "alpha follow-up" in after and "follow-up answer" in after and "beta" not in after
    assert shown["after"]["hash"].startswith("#leaf=")


async def test_an_unknown_session_is_not_exported(client):
    with pytest.raises(PiRequestError) as raised:
        await request(client, "pi/exportSession", {"sessionId": "nope", "format": "html"})
    assert raised.value.code == -32001


def pi_session_lines(session_id: str, cwd: str) -> str:
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": session_id,
            "timestamp": "2025-03-01T10:00:00.000Z",
            "cwd": cwd,
        },
        {
            "type": "message",
            "id": "aaaa0001",
            "parentId": None,
            "timestamp": "2025-03-01T10:00:01.000Z",
            "message": {"role": "user", "content": "imported canary question", "timestamp": 1},
        },
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


async def test_a_session_file_is_imported_with_its_id_and_cwd(client, workspace, tmp_path):
    source = tmp_path / "from-elsewhere.jsonl"
    source.write_text(pi_session_lines("0196f000-aaaa-7bbb-8ccc-000000000001", "/elsewhere"))
    result = await request(client, "pi/importSession", {"path": str(source)})
    assert result["sessionId"] == "0196f000-aaaa-7bbb-8ccc-000000000001"
    target = Path(result["path"])
    assert target.parent == workspace / ".pi" / "sessions"
    assert target.read_bytes() == source.read_bytes()
    opened = await request(client, "pi/openSession", {"sessionId": result["sessionId"]})
    assert opened["sessionId"] == result["sessionId"]
    found = await search_until(client, {"query": "canary"}, lambda found: found["total"])
    assert found["hits"][0]["sessionId"] == result["sessionId"]

    with pytest.raises(PiRequestError) as again:
        await request(client, "pi/importSession", {"path": str(source)})
    assert again.value.code == -32602 and "already" in again.value.message


async def test_a_file_that_is_not_a_session_is_not_imported(client, workspace, tmp_path):
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"note": "not a session"}\n')
    before = (
        sorted((workspace / ".pi" / "sessions").glob("*"))
        if (workspace / ".pi" / "sessions").exists()
        else []
    )
    for path in (str(notes), str(tmp_path / "missing.jsonl")):
        with pytest.raises(PiRequestError) as raised:
            await request(client, "pi/importSession", {"path": path})
        assert raised.value.code == -32602
    after = (
        sorted((workspace / ".pi" / "sessions").glob("*"))
        if (workspace / ".pi" / "sessions").exists()
        else []
    )
    assert after == before


async def test_a_deleted_session_goes_to_the_trash_and_out_of_the_index(client, scripted_llm):
    scripted_llm.enqueue(replies.text("Noted."))
    await request(client, "pi/prompt", {"text": "the doomed canary session"})
    doomed = await request(client, "pi/state", {})
    await search_until(client, {"query": "doomed"}, lambda found: found["total"])
    await request(client, "pi/newSession", {})

    result = await request(client, "pi/deleteSession", {"sessionId": doomed["sessionId"]})
    assert result["path"] == doomed["path"]
    assert not Path(doomed["path"]).exists()
    trashed = HOME / ".local" / "share" / "Trash" / "files" / Path(doomed["path"]).name
    assert trashed.exists()
    gone = await search_until(client, {"query": "doomed"}, lambda found: not found["total"])
    assert gone["total"] == 0
    with pytest.raises(PiRequestError) as raised:
        await request(client, "pi/deleteSession", {"sessionId": doomed["sessionId"]})
    assert raised.value.code == -32001


async def test_a_session_with_a_turn_running_is_not_deleted(client, events, scripted_llm):
    scripted_llm.enqueue(replies.text("Noted."))
    await request(client, "pi/prompt", {"text": "a session that stays"})
    busy = await request(client, "pi/state", {})
    events.notifications.clear()  # the text_delta waited for below is the slow turn's
    scripted_llm.enqueue(
        replies.slow_text("one two three four five six", chunks=6, chunk_delay=0.5)
    )
    prompt = asyncio.ensure_future(request(client, "pi/prompt", {"text": "count slowly"}))
    await events.wait_for("text_delta")
    with pytest.raises(PiRequestError) as raised:
        await request(client, "pi/deleteSession", {"sessionId": busy["sessionId"]})
    assert raised.value.code == -32011
    await request(client, "pi/abort", {})
    await asyncio.wait_for(prompt, 15)
    assert Path(busy["path"]).exists()


def write_session_file(path: Path, session_id: str, text: str, cwd: Path) -> None:
    lines = [
        {"type": "session", "version": 3, "id": session_id, "timestamp": "2025-01-01T00:00:00Z"}
        | {"cwd": str(cwd)},
        {"type": "message", "id": "m1", "parentId": None, "timestamp": "2025-01-01T00:00:01Z"}
        | {"message": {"role": "user", "content": text, "timestamp": 1}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


async def test_where_no_trash_can_take_the_file_the_session_is_not_deleted(workspace, tmp_path):
    sessions = workspace / ".pi" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    kept = sessions / "2025-01-01T00-00-00-000Z_kept.jsonl"
    write_session_file(kept, "kept", "keep me", workspace)
    newer = sessions / "2025-01-02T00-00-00-000Z_newer.jsonl"
    write_session_file(newer, "newer", "a newer session", workspace)
    os.utime(kept, (1_700_000_000, 1_700_000_000))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    # No trash folder can be made under a regular file, as on a read-only home.
    environment = server_environment() | {"XDG_DATA_HOME": str(blocker / "share")}
    async with another_server(workspace, {}, environment) as client:
        await request(client, "pi/openSession", {"sessionId": "kept"})
        with pytest.raises(PiRequestError) as raised:
            await request(client, "pi/deleteSession", {"sessionId": "kept"})
        assert raised.value.code == -32006
        assert "trash" in str(raised.value) and "nothing was deleted" in str(raised.value)
        # Still the current session, open as before (not the newest file in its place).
        state = await request(client, "pi/state", {})
        assert state["sessionId"] == "kept" and state["path"] == str(kept)
        listed = await request(client, "pi/sessions", {})
        assert sorted(info["id"] for info in listed["sessions"]) == ["kept", "newer"]
    assert json.loads(kept.read_text().splitlines()[1])["message"]["content"] == "keep me"
