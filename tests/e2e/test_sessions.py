"""Session requests end to end: tree, navigation, labels,
names, forks, listing, opening, state, models."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request


async def two_turns(client, scripted_llm) -> dict:
    scripted_llm.enqueue(replies.text("First answer."), replies.text("Second answer."))
    await request(client, "pi/prompt", {"text": "first question"})
    await request(client, "pi/prompt", {"text": "second question"})
    return await request(client, "pi/tree", {})


async def test_tree_lists_entries_with_roles_previews_and_the_leaf(client, scripted_llm):
    tree = await two_turns(client, scripted_llm)
    messages = [entry for entry in tree["entries"] if entry["type"] == "message"]
    assert [(entry["role"], entry["preview"]) for entry in messages] == [
        ("user", "first question"),
        ("assistant", "First answer."),
        ("user", "second question"),
        ("assistant", "Second answer."),
    ]
    assert tree["leafId"] == messages[-1]["id"] and all(
        entry["timestamp"] for entry in tree["entries"]
    )


async def test_navigating_to_a_user_message_returns_its_text_and_branches_from_its_parent(
    client, events, scripted_llm
):
    tree = await two_turns(client, scripted_llm)
    messages = [entry for entry in tree["entries"] if entry["type"] == "message"]
    second_user, first_answer = messages[2], messages[1]
    result = await request(client, "pi/navigate", {"targetId": second_user["id"]})
    assert result == {
        "leafId": first_answer["id"],
        "summaryEntryId": None,
        "editorText": "second question",
    }
    changed = events.events()[-1]
    assert changed["type"] == "tree_changed" and changed["leafId"] == first_answer["id"]
    assert changed["entries"] == [] and changed["labels"] == {}  # a move writes nothing
    scripted_llm.enqueue(replies.text("A different path."))
    await request(client, "pi/prompt", {"text": "another question"})
    tree = await request(client, "pi/tree", {})
    assert tree["children"][first_answer["id"]].__len__() == 2  # the old branch stays
    context = scripted_llm.requests[-1]["messages"]
    assert "second question" not in json.dumps(context) and "another question" in json.dumps(
        context
    )


async def test_navigating_to_an_answer_continues_from_it(client, scripted_llm):
    tree = await two_turns(client, scripted_llm)
    first_answer = next(entry for entry in tree["entries"] if entry.get("role") == "assistant")
    result = await request(client, "pi/navigate", {"targetId": first_answer["id"]})
    assert result["leafId"] == first_answer["id"] and result["editorText"] is None
    again = await request(
        client, "pi/navigate", {"targetId": first_answer["id"], "summarize": True}
    )
    assert again == {
        "leafId": first_answer["id"],
        "summaryEntryId": None,
        "editorText": None,
    }  # already there


async def test_labels_names_and_forks(client, scripted_llm, workspace):
    tree = await two_turns(client, scripted_llm)
    first_user = next(entry for entry in tree["entries"] if entry.get("role") == "user")
    await request(client, "pi/label", {"entryId": first_user["id"], "label": "start"})
    named = await request(client, "pi/name", {"name": "Greeting session"})
    assert named["name"] == "Greeting session"
    tree = await request(client, "pi/tree", {})
    assert tree["labels"] == {first_user["id"]: "start"} and tree["name"] == "Greeting session"
    answer = next(entry for entry in tree["entries"] if entry.get("role") == "assistant")
    fork = await request(client, "pi/fork", {"entryId": answer["id"]})
    assert fork["sessionId"] != tree["sessionId"] and fork["parentSessionId"] == tree["sessionId"]
    forked_tree = await request(client, "pi/tree", {"sessionId": fork["sessionId"]})
    assert [entry["type"] for entry in forked_tree["entries"]][-1] == "label"
    listing = await request(client, "pi/sessions", {})
    assert {info["id"] for info in listing["sessions"]} >= {tree["sessionId"], fork["sessionId"]}


async def test_a_fork_without_an_entry_is_at_the_leaf_and_a_prompt_sent_right_after_lands_in_it(
    client, scripted_llm
):
    tree = await two_turns(client, scripted_llm)
    scripted_llm.enqueue(replies.text("Going on in the fork."))
    # Both sent before either answer is read, as a client does for `:PiFork` then `:Pi go on`.
    forked = client.protocol.send_request_async("pi/fork", {})
    prompted = client.protocol.send_request_async("pi/prompt", {"text": "go on"})
    fork, prompt = await forked, await prompted
    assert fork["parentSessionId"] == tree["sessionId"] != fork["sessionId"]
    assert fork["leafId"] == tree["leafId"] and "files" not in fork
    assert prompt["sessionId"] == fork["sessionId"]
    old = await request(client, "pi/tree", {"sessionId": tree["sessionId"]})
    assert old["leafId"] == tree["leafId"] and len(old["entries"]) == len(tree["entries"])
    new = await request(client, "pi/tree", {})
    assert new["sessionId"] == fork["sessionId"]
    assert [entry["preview"] for entry in new["entries"] if entry["type"] == "message"] == [
        "first question",
        "First answer.",
        "second question",
        "Second answer.",
        "go on",
        "Going on in the fork.",
    ]
    sent = json.dumps(scripted_llm.requests[-1]["messages"])
    assert "second question" in sent and "go on" in sent  # the model saw the forked history


async def test_a_fork_without_an_entry_of_an_empty_session_is_invalid_params(client):
    empty = await request(client, "pi/newSession", {})
    with pytest.raises(JsonRpcException) as raised:
        await request(client, "pi/fork", {})
    assert raised.value.code == -32602
    assert "the session is empty" in raised.value.message
    assert "entryId" in raised.value.message
    assert (await request(client, "pi/state", {}))["sessionId"] == empty["sessionId"]  # unchanged


@pytest.mark.options(allowedSessionDirs=["../pi-sessions"])
async def test_new_and_open_sessions_including_pis_own_files(
    client, scripted_llm, workspace, tmp_path
):
    first = await request(client, "pi/newSession", {})
    second = await request(client, "pi/newSession", {})
    assert first["sessionId"] != second["sessionId"]
    scripted_llm.enqueue(replies.text("Hi from the second session."))
    result = await request(client, "pi/prompt", {"text": "hello"})
    assert result["sessionId"] == second["sessionId"]  # a new session becomes the current one
    pi_file = tmp_path / "pi-sessions" / "pi-session.jsonl"  # a directory allowedSessionDirs names
    pi_file.parent.mkdir()
    shutil.copy(second["path"], pi_file)
    opened = await request(client, "pi/openSession", {"path": str(pi_file)})
    assert opened["leafId"] is not None and opened["readOnly"] is False
    with pytest.raises(Exception, match="no session"):
        await request(client, "pi/openSession", {"sessionId": "does-not-exist"})
    with pytest.raises(Exception, match="exactly one of sessionId and path"):
        await request(client, "pi/openSession", {})


def session_copy_with_a_new_id(source: str, target: Path) -> str:
    """A valid session file at ``target``: ``source`` under a new session id; returns the id."""
    lines = Path(source).read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["id"] = str(uuid.uuid4())
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    return header["id"]


async def test_session_files_outside_the_session_directory_are_refused(
    client, scripted_llm, workspace, tmp_path
):
    scripted_llm.enqueue(replies.text("Private answer."))
    inside = await request(client, "pi/prompt", {"text": "hello"})
    inside_path = (await request(client, "pi/state", {}))["path"]
    outside = tmp_path / "elsewhere" / "secret.jsonl"
    outside_id = session_copy_with_a_new_id(inside_path, outside)
    before = outside.read_bytes()
    session_dir = workspace / ".pi" / "sessions"
    (session_dir / "link.jsonl").symlink_to(outside)
    for path in (
        "../elsewhere/secret.jsonl",
        ".pi/sessions/../../../elsewhere/secret.jsonl",
        str(outside),
        str(session_dir / "link.jsonl"),
        ".pi/sessions/link.jsonl",
    ):
        with pytest.raises(JsonRpcException) as raised:
            await request(client, "pi/openSession", {"path": path})
        assert raised.value.code == -32602, path
        assert "outside the session directory" in raised.value.message
        assert "allowedSessionDirs" in raised.value.message
    for method in ("pi/openSession", "pi/tree", "pi/messages", "pi/state"):
        with pytest.raises(JsonRpcException) as raised:
            await request(client, method, {"sessionId": outside_id})
        assert raised.value.code == -32602, method
    listing = await request(client, "pi/sessions", {})
    assert [info["id"] for info in listing["sessions"]] == [inside["sessionId"]]
    assert (await request(client, "pi/state", {}))["sessionId"] == inside["sessionId"]
    assert outside.read_bytes() == before


async def test_state_reports_model_thinking_level_and_context_usage(client, scripted_llm):
    state = await request(client, "pi/state", {})
    assert state["model"]["model"] == "openai/scripted" and state["thinkingLevel"] == "medium"
    context = await request(client, "pi/context", {})
    assert state["isStreaming"] is False and state["contextUsage"]["tokens"] == context["total"]
    scripted_llm.enqueue(replies.text("Counting tokens."))
    await request(client, "pi/prompt", {"text": "count"})
    state = await request(client, "pi/state", {})
    assert state["contextUsage"]["tokens"] > 0 and state["contextUsage"]["percent"] >= 0
    await request(client, "pi/setThinkingLevel", {"level": "high"})
    await request(client, "pi/setModel", {"model": "openai/other-model"})
    state = await request(client, "pi/state", {})
    assert state["thinkingLevel"] == "high" and state["model"]["modelId"] == "other-model"
    # The configured model stays listed after a switch; OpenAI's cloud catalogue never is, since
    # the settings' apiBase sends openai/ models to the local server.
    models = await request(client, "pi/models", {"filter": "scripted"})
    assert [model["model"] for model in models["models"]] == ["openai/scripted"]
    assert (await request(client, "pi/models", {"filter": "gpt-4o"}))["models"] == []


async def test_every_request_is_also_a_command(client, scripted_llm):
    scripted_llm.enqueue(replies.text("Via a command."))
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="pi.prompt", arguments=[{"text": "hello"}])
    )
    assert result["stopReason"] == "stop"
    tree = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="pi.tree", arguments=[])
    )
    assert tree["leafId"] == result["leafId"]


@pytest.mark.options(model=None)
async def test_without_a_model_everything_but_prompting_works(client):
    tree = await request(client, "pi/tree", {})
    assert tree["entries"][0]["type"] == "thinking_level_change"
    with pytest.raises(Exception, match="No model is configured"):
        await request(client, "pi/prompt", {"text": "hello"})
    state = await request(client, "pi/state", {})
    assert state["model"] is None and state["contextUsage"] is None


async def test_opening_a_loaded_session_by_id_makes_it_current_and_naming_one_does_not(
    client, scripted_llm
):
    scripted_llm.enqueue(
        replies.text("First answer."),
        replies.text("Second answer."),
        replies.text("Back in the first."),
    )
    first = await request(client, "pi/newSession", {})
    await request(client, "pi/prompt", {"text": "one"})
    second = await request(client, "pi/newSession", {})
    await request(client, "pi/prompt", {"text": "two"})
    await request(
        client, "pi/tree", {"sessionId": first["sessionId"]}
    )  # naming a session is not switching
    assert (await request(client, "pi/state", {}))["sessionId"] == second["sessionId"]
    opened = await request(client, "pi/openSession", {"sessionId": first["sessionId"]})
    assert opened["sessionId"] == first["sessionId"]
    assert (await request(client, "pi/state", {}))["sessionId"] == first["sessionId"]
    result = await request(client, "pi/prompt", {"text": "three"})
    assert result["sessionId"] == first["sessionId"]


async def test_messages_return_the_whole_active_path_for_a_chat_view(client, scripted_llm):
    scripted_llm.enqueue(replies.text("First answer."), replies.text("Second answer."))
    await request(client, "pi/prompt", {"text": "one"})
    await request(client, "pi/prompt", {"text": "two"})
    transcript = await request(client, "pi/messages", {})
    tree = await request(client, "pi/tree", {})
    messages = [entry["message"] for entry in transcript["entries"]]
    assert [message["role"] for message in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[-1]["content"][0]["text"] == "Second answer."
    assert transcript["total"] == 4 and transcript["leafId"] == tree["leafId"]
    assert [entry["entryId"] for entry in transcript["entries"]] == [
        entry["id"] for entry in tree["entries"] if entry["type"] == "message"
    ]
    last = await request(client, "pi/messages", {"limit": 1})
    assert last["total"] == 4 and [entry["message"]["role"] for entry in last["entries"]] == [
        "assistant"
    ]
    with pytest.raises(Exception, match="limit must be at least 1"):
        await request(client, "pi/messages", {"limit": 0})
    first_answer = transcript["entries"][1]["entryId"]
    await request(client, "pi/navigate", {"targetId": first_answer})
    moved = await request(client, "pi/messages", {})
    assert [entry["entryId"] for entry in moved["entries"]][-1] == first_answer and moved[
        "total"
    ] == 2
