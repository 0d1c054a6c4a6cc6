"""The windowed tree and paged history end to end: first screens of a big session, incremental
``tree_changed`` events with a version a client resyncs on, tree search, earlier pages."""

from __future__ import annotations

import json

import pytest
from pygls.exceptions import JsonRpcException

from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request


async def _turn(client, scripted_llm, text: str, answer: str) -> dict:
    scripted_llm.enqueue(replies.text(answer))
    return await request(client, "pi/prompt", {"text": text})


def _tree_events(events) -> list[dict]:
    return [event for event in events.events() if event["type"] == "tree_changed"]


async def test_events_carry_the_new_entries_and_a_gap_is_healed_by_a_window(
    client, events, scripted_llm
):
    await _turn(client, scripted_llm, "first question", "First answer.")
    window = await request(client, "pi/treeWindow", {})
    version = window["version"]
    assert window["version"] == _tree_events(events)[-1]["version"]
    rows = [row["preview"] for row in window["levels"][-1]["rows"]]
    assert rows[-2:] == ["first question", "First answer."]

    await _turn(client, scripted_llm, "second question", "Second answer.")
    changed = _tree_events(events)[-1]
    assert changed["version"] == version + 1
    assert [row["preview"] for row in changed["entries"]] == ["second question", "Second answer."]
    assert changed["entries"][0]["parentId"] == window["leafId"]
    assert all(row["active"] for row in changed["entries"])
    assert changed["leafId"] == changed["entries"][-1]["id"]

    # A client that missed the next two changes sees a version gap and fetches a window again.
    first_user = window["levels"][-1]["rows"][-2]["id"]
    await request(client, "pi/label", {"entryId": first_user, "label": "start"})
    await _turn(client, scripted_llm, "third question", "Third answer.")
    seen = _tree_events(events)[-1]
    assert seen["version"] == changed["version"] + 2  # the gap a client detects
    resync = await request(client, "pi/treeWindow", {})
    assert resync["version"] == seen["version"]
    shown = {row["id"]: row for row in resync["levels"][-1]["rows"]}
    assert shown[first_user]["label"] == "start"
    assert [row["preview"] for row in resync["levels"][-1]["rows"]][-2:] == [
        "third question",
        "Third answer.",
    ]
    label_event = _tree_events(events)[-2]
    assert label_event["labels"] == {first_user: "start"}


async def test_tree_search_jumps_to_a_labelled_entry_and_history_pages_go_back(
    client, scripted_llm
):
    # One server for both: starting the model client is what costs time in these tests.
    for index in range(3):
        await _turn(client, scripted_llm, f"question {index}", f"answer {index}")
    tree = await request(client, "pi/tree", {})
    target = next(entry for entry in tree["entries"] if entry["preview"] == "question 1")
    await request(client, "pi/label", {"entryId": target["id"], "label": "Parser milestone"})
    found = await request(client, "pi/treeSearch", {"query": "MILESTONE"})
    assert target["id"] in [row["id"] for row in found["rows"]]
    assert found["total"] == len(found["rows"]) == 2  # the entry and its label entry
    jump = await request(client, "pi/treeWindow", {"targetId": target["id"], "limit": 3})
    assert jump["targetId"] == target["id"]
    assert [row["id"] for row in jump["levels"][-1]["rows"]][1] == target["id"]
    with pytest.raises(JsonRpcException, match="query must not be empty"):
        await request(client, "pi/treeSearch", {"query": "  "})
    with pytest.raises(JsonRpcException, match="limit must be between 1 and 1000"):
        await request(client, "pi/treeWindow", {"limit": 0})

    tail = await request(client, "pi/messages", {"limit": 2})
    assert tail["total"] == 6 and tail["offset"] == 4
    earlier = await request(
        client, "pi/messages", {"limit": 3, "before": tail["entries"][0]["entryId"]}
    )
    assert earlier["offset"] == 1
    texts = [entry["message"]["content"][0]["text"] for entry in earlier["entries"]]
    assert texts == ["answer 0", "question 1", "answer 1"]
    with pytest.raises(JsonRpcException, match="not found"):
        await request(client, "pi/messages", {"before": "nope"})


async def test_a_big_session_opens_on_a_small_first_screen(client, workspace):
    entries = 20_000
    path = workspace / ".pi" / "sessions" / "big.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": "big", "timestamp": "2026-01-01T00:00:00.000Z"}
    lines = [json.dumps({**header, "cwd": str(workspace)})]
    parent = None
    for index in range(entries):
        entry_id = f"{index:08x}"
        role = "user" if index % 2 == 0 else "assistant"
        message = {"role": role, "content": [{"type": "text", "text": f"message {index} " * 20}]}
        timestamp = (
            f"2026-01-01T{index // 3600 % 24:02d}:{index // 60 % 60:02d}:{index % 60:02d}.000Z"
        )
        lines.append(
            json.dumps(
                {"type": "message", "id": entry_id, "parentId": parent, "timestamp": timestamp}
                | {"message": message}
            )
        )
        parent = entry_id
    # A branch off an early entry: its branch point shows as a collapsed row with a count.
    lines.append(
        json.dumps(
            {"type": "message", "id": "branch01", "parentId": "00000010"}
            | {"timestamp": "2026-01-02T00:00:00.000Z", "message": {"role": "user", "content": "b"}}
        )
    )
    path.write_text("\n".join(lines) + "\n")
    opened = await request(client, "pi/openSession", {"path": str(path)})
    leaf = f"{entries - 1:08x}"
    await request(client, "pi/navigate", {"sessionId": opened["sessionId"], "targetId": leaf})
    window = await request(client, "pi/treeWindow", {"sessionId": opened["sessionId"]})
    assert len(json.dumps(window)) < 200_000
    top, branches, run = window["levels"]
    assert top["total"] == 17 and [row["id"] for row in top["rows"]] == ["00000010"]
    assert top["rows"][0]["childCount"] == 2 and top["rows"][0]["expandable"]
    assert branches["total"] == 2 and branches["rows"][0]["id"] == "00000011"
    assert run["total"] == entries - 18 and run["rows"][-1]["id"] == leaf
    assert len(run["rows"]) == 100 and run["offset"] == entries - 18 - 100
    other = await request(
        client, "pi/treeChildren", {"sessionId": opened["sessionId"], "parentId": "00000010"}
    )
    assert [row["id"] for row in other["level"]["rows"]] == ["00000011", "branch01"]
    page = await request(client, "pi/messages", {"sessionId": opened["sessionId"], "limit": 50})
    assert page["total"] == entries and len(json.dumps(page)) < 200_000


async def test_malformed_window_requests_say_what_is_wrong(client):
    for method, params, message in (
        ("pi/treeChildren", {"parentId": 7}, "parentId"),
        ("pi/treeChildren", {"offset": -1}, "offset must be at least 0"),
        ("pi/treeChildren", {"offset": 1, "aroundId": "x"}, "not both"),
        ("pi/treeChildren", {"parentId": "nope"}, "not found"),
        ("pi/treeSearch", {}, "query"),
        ("pi/treeWindow", {"targetId": "nope"}, "not found"),
        ("pi/messages", {"before": 3}, "before"),
    ):
        with pytest.raises(JsonRpcException, match=message):
            await request(client, method, params)
    fresh = await request(client, "pi/treeWindow", {})  # a new session: its settings entries
    assert [level["parentId"] for level in fresh["levels"]] == [None]
    assert fresh["levels"][0]["rows"][-1]["id"] == fresh["leafId"] == fresh["targetId"]
