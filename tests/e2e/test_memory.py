"""Memory beyond pi, end to end with the scripted model: nested AGENTS.md brought in on demand,
summary file lists that stay bounded over many compactions, ``compaction.threshold``, and the
user's ``/compact`` instructions reaching a split turn's prefix summary.

``tests/conformance/test_memory_against_pi.py`` replays the same kinds of entries through the
server and has pi 0.84.2 read the file back.
"""

from __future__ import annotations

import json

import pytest

from pi_lsp.scripted_llm import replies
from tests.builders import NESTED_RULE, api_package
from tests.e2e.conftest import request
from tests.e2e.test_compaction import SMALL, SPLIT, SUMMARY, chat, entries

MARKER = NESTED_RULE


def sent(scripted_llm, index: int = -1) -> str:
    return json.dumps(scripted_llm.requests[index]["messages"], ensure_ascii=False)


async def test_a_nested_agents_md_comes_after_a_read_below_it_once_and_again_when_changed(
    client, scripted_llm, workspace
):
    package = api_package(workspace)
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "read", {"path": "packages/api/src/server.py"})]),
        replies.text("It prints api."),
    )
    await request(client, "pi/prompt", {"text": "What does the api server do?"})
    assert MARKER not in sent(scripted_llm, 0)  # nothing touched the package yet
    assert sent(scripted_llm, 1).count(MARKER) == 1

    scripted_llm.enqueue(replies.text("Still tabs."))
    await request(client, "pi/prompt", {"text": "Tabs or spaces?"})
    assert sent(scripted_llm).count(MARKER) == 1  # once per branch

    resources = await request(client, "pi/resources", {})
    [loaded] = resources["nestedContextFiles"]
    assert loaded["path"] == "packages/api/AGENTS.md" and loaded["current"] is True
    tree = await request(client, "pi/tree", {})
    [shown] = [item for item in tree["entries"] if item["id"] == loaded["entryId"]]
    assert shown["type"] == "custom_message"
    assert "Instructions for files under packages/api/" in shown["preview"]

    (package / "AGENTS.md").write_text("NESTED-RULE-v2: spaces after all\n")
    resources = await request(client, "pi/resources", {})
    assert resources["nestedContextFiles"][0]["current"] is False
    scripted_llm.enqueue(replies.text("Spaces now."))
    await request(client, "pi/prompt", {"text": "And now?"})
    assert "NESTED-RULE-v2" in sent(scripted_llm) and "Updated instructions" in sent(scripted_llm)
    written = [
        entry
        for entry in entries(workspace)
        if entry["type"] == "custom_message" and entry["customType"] == "pi-lsp.context-file"
    ]
    assert [entry["details"]["path"] for entry in written] == ["packages/api/AGENTS.md"] * 2


@pytest.mark.options(**{**SMALL, "compaction": {**SMALL["compaction"], "fileListLimit": 3}})
async def test_summary_file_lists_stay_capped_over_three_compactions(
    client, scripted_llm, workspace
):
    for number in range(12):
        (workspace / f"file_{number:02}.py").write_text(f"x = {number}\n")
    for round_number in range(3):
        # One read per answer: each file is touched at a moment of its own.
        reads = [
            replies.tool_calls(
                [(f"read_{round_number}_{index}", "read", {"path": f"file_{number:02}.py"})]
            )
            for index, number in enumerate(range(round_number * 4, round_number * 4 + 4))
        ]
        write = {"path": f"out_{round_number}.py", "content": ""}
        scripted_llm.enqueue(
            *reads,
            replies.tool_calls([(f"write_{round_number}", "write", write)]),
            replies.text(f"Round {round_number} done. " + "details " * 30),
        )
        await request(client, "pi/prompt", {"text": f"Round {round_number}: " + "context " * 30})
        await chat(client, scripted_llm, 2)
        if round_number == 2:
            (workspace / "file_00.py").unlink()
            (workspace / "out_0.py").unlink()
        scripted_llm.enqueue(replies.text(SUMMARY))
        result = await request(client, "pi/compact", {})

    summary = result["summary"]
    # The newest three of eleven read files (file_00.py is gone), then a count of the rest.
    assert (
        "<read-files>\nfile_11.py\nfile_10.py\nfile_09.py\n(8 older files not listed)\n" in summary
    )
    assert "<modified-files>\nout_2.py\nout_1.py\nout_0.py (deleted)\n</modified-files>" in summary
    # details keep every path for the next compaction.
    assert sorted(result["readFiles"]) == [f"file_{number:02}.py" for number in range(1, 12)]
    assert result["modifiedFiles"] == ["out_2.py", "out_1.py", "out_0.py"]
    previous = json.dumps(scripted_llm.requests[-1]["messages"])
    assert "<previous-summary>" in previous


async def _threshold_turn(client, scripted_llm, events) -> list[str]:
    await chat(client, scripted_llm, 2)
    large = {"prompt_tokens": 60000, "completion_tokens": 10, "total_tokens": 60010}
    scripted_llm.enqueue(
        replies.text("A long answer.", usage=large),
        replies.text(SUMMARY),  # the automatic compaction, which splits the last turn
        replies.text("## Original Request\ngo on"),
    )
    await request(client, "pi/prompt", {"text": "go on " + "context " * 30})
    return [event["reason"] for event in events.events() if event["type"] == "compaction_start"]


HALF = {**SMALL, "compaction": {"keepRecentTokens": 100, "threshold": "50%"}}
PI_DEFAULT = {**SMALL, "compaction": {"keepRecentTokens": 100}}


@pytest.mark.options(**HALF)
async def test_a_threshold_of_half_the_window_compacts_where_the_reserve_would_not(
    client, events, scripted_llm, workspace
):
    state = await request(client, "pi/state", {})
    assert state["contextUsage"]["compactAt"] == 50000  # 100000 - 16384 would be 83616
    assert await _threshold_turn(client, scripted_llm, events) == ["threshold"]
    assert [entry["type"] for entry in entries(workspace)].count("compaction") == 1


@pytest.mark.options(**PI_DEFAULT)
async def test_without_a_threshold_the_same_turn_does_not_compact(
    client, events, scripted_llm, workspace
):
    state = await request(client, "pi/state", {})
    assert state["contextUsage"]["compactAt"] == 100000 - 16384
    assert await _threshold_turn(client, scripted_llm, events) == []


@pytest.mark.options(**SPLIT)
async def test_compact_instructions_reach_both_summary_requests_of_a_split_turn(
    client, scripted_llm, workspace
):
    await chat(client, scripted_llm, 3)
    scripted_llm.enqueue(
        replies.text(SUMMARY), replies.text("## Original Request\nQuestion number 2")
    )
    before = len(scripted_llm.requests)
    result = await request(client, "pi/compact", {"instructions": "Keep the exact error codes"})
    assert "**Turn Context (split turn):**" in result["summary"]
    summary_requests = scripted_llm.requests[before:]
    assert len(summary_requests) == 2
    for summary_request in summary_requests:
        assert "Keep the exact error codes" in json.dumps(summary_request["messages"][-1])


OVERRIDDEN = {
    **SMALL,
    "compaction": {
        "keepRecentTokens": 100,
        "modelOverrides": {"openai/scripted": {"reserveTokens": 50000}, "openai/other": {}},
    },
}


@pytest.mark.options(**OVERRIDDEN)
async def test_a_model_override_compacts_where_the_ordinary_reserve_would_not(
    client, events, scripted_llm, workspace
):
    """pi 0.86's ``compaction.modelOverrides``: the session's model has its own reserve."""
    state = await request(client, "pi/state", {})
    assert state["contextUsage"]["compactAt"] == 100000 - 50000
    assert (await request(client, "pi/context", {}))["compactAt"] == 50000
    assert await _threshold_turn(client, scripted_llm, events) == ["threshold"]
    await request(client, "pi/setModel", {"model": "openai/other"})
    state = await request(client, "pi/state", {})
    assert state["contextUsage"]["compactAt"] == 100000 - 16384
