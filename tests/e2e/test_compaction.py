"""Compaction and branch summaries end to end, with the summaries written by the scripted model.

Small windows and budgets (``contextWindow``, ``compaction.keepRecentTokens``) make a few short
turns enough to compact; every plan is checked against what ``pi-lsp session plan-compaction``
gives for the same branch.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from pi_lsp.scripted_llm import ScriptedLLM, replies
from tests.e2e.conftest import request
from tests.e2e.test_models_and_keys import scripted_provider, server, write_json

SUMMARY = (
    "## Goal\nFix add() in app.py\n\n## Progress\n### Done\n- [x] Read app.py\n\n"
    "## Next Steps\n1. Run the tests"
)
SMALL = {
    "compaction": {"keepRecentTokens": 100, "reserveTokens": 100},
    "contextWindow": 100000,
    "tokenizer": "chars4",
}
SPLIT = {**SMALL, "compaction": {"keepRecentTokens": 40, "reserveTokens": 100}}


def session_file(workspace: Path) -> Path:
    [path] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    return path


def entries(workspace: Path) -> list[dict]:
    return [json.loads(line) for line in session_file(workspace).read_text().splitlines()]


def cli_plan(workspace: Path, *extra: str) -> dict:
    output = subprocess.run(
        [
            sys.executable,
            "-m",
            "pi_lsp",
            "session",
            "plan-compaction",
            str(session_file(workspace)),
            *extra,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(output)


async def chat(client, scripted_llm, turns: int) -> None:
    for index in range(turns):
        scripted_llm.enqueue(replies.text(f"Answer number {index}: " + "details " * 30))
        await request(client, "pi/prompt", {"text": f"Question number {index}: " + "context " * 30})


@pytest.mark.options(**SMALL)
async def test_manual_compaction_with_instructions(client, events, scripted_llm, workspace):
    await chat(client, scripted_llm, 3)
    plan = cli_plan(workspace, "--keep-recent-tokens", "100", "--tokenizer", "chars4")
    scripted_llm.enqueue(replies.text(SUMMARY))
    result = await request(client, "pi/compact", {"instructions": "Keep the file names"})
    assert (
        result["firstKeptEntryId"] == plan["firstKeptEntryId"]
        and result["tokensBefore"] == plan["tokensBefore"]
    )
    assert result["summary"].startswith("## Goal")
    summary_request = scripted_llm.requests[-1]
    user_text = summary_request["messages"][-1]["content"]
    user_text = (
        user_text if isinstance(user_text, str) else "".join(part["text"] for part in user_text)
    )
    assert "<conversation>\n" + plan["serialized"] + "\n</conversation>" in user_text
    assert "Additional focus: Keep the file names" in user_text and "tools" not in summary_request
    compaction = entries(workspace)[-1]
    assert (
        compaction["type"] == "compaction"
        and compaction["firstKeptEntryId"] == plan["firstKeptEntryId"]
    )
    assert [
        event["type"] for event in events.events() if event["type"].startswith("compaction")
    ] == [
        "compaction_start",
        "compaction_end",
    ]
    state = await request(client, "pi/state", {})
    assert state["contextUsage"]["tokens"] is None  # unknown until the model answers again
    scripted_llm.enqueue(replies.text("Continuing."))
    await request(client, "pi/prompt", {"text": "go on"})
    sent = scripted_llm.requests[-1]["messages"]
    assert (
        sent[0]["role"] == "system"
        and "<summary>" in json.dumps(sent[1])
        and "Fix add() in app.py" in json.dumps(sent[1])
    )
    assert "Question number 0" not in json.dumps(sent)
    with pytest.raises(JsonRpcException, match=r"Nothing to compact|Already compacted"):
        await request(client, "pi/compact", {})


@pytest.mark.options(**SPLIT)
async def test_a_split_turn_gets_its_own_turn_prefix_summary(client, scripted_llm, workspace):
    await chat(client, scripted_llm, 3)
    plan = cli_plan(workspace, "--keep-recent-tokens", "40", "--tokenizer", "chars4")
    assert plan["isSplitTurn"] is True
    scripted_llm.enqueue(
        replies.text(SUMMARY), replies.text("## Original Request\nQuestion number 2")
    )
    result = await request(client, "pi/compact", {})
    assert result["firstKeptEntryId"] == plan["firstKeptEntryId"]
    assert (
        "**Turn Context (split turn):**" in result["summary"]
        and "Question number 2" in result["summary"]
    )


@pytest.mark.options(**SMALL)
@pytest.mark.parametrize(
    "failure", [replies.error(400, "bad request"), replies.length_stop("## Goal\ncut")]
)
async def test_a_failed_summary_leaves_the_session_file_byte_identical(
    client, events, scripted_llm, workspace, failure
):
    await chat(client, scripted_llm, 3)
    before = session_file(workspace).read_bytes()
    scripted_llm.enqueue(failure)
    with pytest.raises(JsonRpcException):
        await request(client, "pi/compact", {})
    assert session_file(workspace).read_bytes() == before
    end = [event for event in events.events() if event["type"] == "compaction_end"][-1]
    assert end["errorMessage"] and "entryId" not in end


@pytest.mark.options(**SMALL)
async def test_repeated_compactions_update_the_previous_summary(client, scripted_llm, workspace):
    await chat(client, scripted_llm, 3)
    scripted_llm.enqueue(replies.text(SUMMARY))
    await request(client, "pi/compact", {})
    await chat(client, scripted_llm, 3)
    plan = cli_plan(workspace, "--keep-recent-tokens", "100", "--tokenizer", "chars4")
    scripted_llm.enqueue(replies.text(SUMMARY + "\n- [x] Second round"))
    result = await request(client, "pi/compact", {})
    assert result["firstKeptEntryId"] == plan["firstKeptEntryId"]
    user_text = json.dumps(scripted_llm.requests[-1]["messages"][-1])
    assert "<previous-summary>" in user_text and "Fix add() in app.py" in user_text
    assert [entry["type"] for entry in entries(workspace)].count("compaction") == 2


@pytest.mark.options(
    compaction={"keepRecentTokens": 40, "reserveTokens": 1000},
    contextWindow=3000,
    tokenizer="chars4",
)
async def test_a_long_tool_loop_compacts_between_rounds(client, events, scripted_llm, workspace):
    big = {"prompt_tokens": 2500, "completion_tokens": 10, "total_tokens": 2510}
    await chat(client, scripted_llm, 1)
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "read", {"path": "app.py"})], usage=big),
        replies.text(SUMMARY),  # the automatic compaction between the rounds
        replies.text(
            "Done after compacting.",
            usage={"prompt_tokens": 300, "completion_tokens": 5, "total_tokens": 305},
        ),
    )
    result = await request(client, "pi/prompt", {"text": "read the file " + "please " * 200})
    assert result["stopReason"] == "stop"
    reasons = [event["reason"] for event in events.events() if event["type"] == "compaction_start"]
    assert reasons == ["threshold"]
    types = [entry["type"] for entry in entries(workspace)]
    assert types.index("compaction") < len(types) - 1  # the turn went on after compacting


@pytest.mark.options(**SMALL)
async def test_context_overflow_compacts_and_retries_once(client, events, scripted_llm, workspace):
    await chat(client, scripted_llm, 3)
    scripted_llm.enqueue(
        replies.context_overflow(), replies.text(SUMMARY), replies.text("Retried fine.")
    )
    result = await request(client, "pi/prompt", {"text": "one more"})
    assert result["stopReason"] == "stop"
    assert [
        event["reason"] for event in events.events() if event["type"] == "compaction_start"
    ] == ["overflow"]
    # pi 1.6's ordering: the failed attempt is left out of the context, then compacted, retried.
    written = entries(workspace)
    [failed] = [e for e in written if e.get("message", {}).get("stopReason") == "error"]
    [edit] = [e for e in written if e["type"] == "context_edit"]
    assert edit["targetId"] == failed["id"] and edit["replacement"] is None
    assert edit["parentId"] == failed["id"]
    assert written.index(edit) < [e["type"] for e in written].index("compaction")
    assert "maximum context length" not in json.dumps(scripted_llm.requests[-1]["messages"])
    await chat(client, scripted_llm, 2)
    scripted_llm.enqueue(
        replies.context_overflow(), replies.text(SUMMARY), replies.context_overflow()
    )
    result = await request(client, "pi/prompt", {"text": "and again"})
    assert (
        result["stopReason"] == "error"
    )  # a second overflow in the same turn is reported, not looped


OUTPUT_LIMIT = 1000


@contextlib.asynccontextmanager
async def model_with_an_output_limit(home: Path, workspace: Path):
    """A server whose model (pi's ``models.json``) may write ``OUTPUT_LIMIT`` tokens an answer."""
    async with ScriptedLLM() as llm:
        model = {"id": "scripted", "contextWindow": 100000, "maxTokens": OUTPUT_LIMIT}
        write_json(
            home / "agent" / "models.json",
            {"providers": {"local": scripted_provider(llm, "local-key", models=[model])}},
        )
        write_json(
            home / "agent" / "settings.json",
            {"defaultProvider": "local", "defaultModel": "scripted"},
        )
        options = {key: value for key, value in SMALL.items() if key != "contextWindow"}
        async with server(workspace, home, options) as client:
            yield client, llm


def cut_answer(text: str, output_tokens: int):
    usage = {
        "prompt_tokens": 300,
        "completion_tokens": output_tokens,
        "total_tokens": 300 + output_tokens,
    }
    return replies.length_stop(text, usage=usage)


async def test_a_recoverable_length_stop_compacts_and_retries_once(tmp_path, workspace):
    # pi 1.6: a length stop below the model's own output limit is recoverable.
    async with model_with_an_output_limit(tmp_path / "home", workspace) as (client, llm):
        await chat(client, llm, 3)
        llm.enqueue(
            cut_answer("Half an answ", 200), replies.text(SUMMARY), replies.text("The whole one.")
        )
        result = await request(client, "pi/prompt", {"text": "one more"})
        assert result["stopReason"] == "stop"
        events = client.pi_events.events()
        starts = [event for event in events if event["type"] == "compaction_start"]
        assert [event["reason"] for event in starts] == ["overflow"]
        [end] = [event for event in events if event["type"] == "compaction_end"]
        assert end["willRetry"] is True
        written = entries(workspace)
        [cut] = [e for e in written if e.get("message", {}).get("stopReason") == "length"]
        [edit] = [e for e in written if e["type"] == "context_edit"]
        assert edit["targetId"] == cut["id"] and edit["replacement"] is None
        assert written.index(edit) < [e["type"] for e in written].index("compaction")
        assert "Half an answ" not in json.dumps(llm.requests[-1]["messages"])
        await chat(client, llm, 2)
        llm.enqueue(cut_answer("Cut", 10), replies.text(SUMMARY), cut_answer("Cut again", 10))
        result = await request(client, "pi/prompt", {"text": "and again"})
        assert result["stopReason"] == "length"  # once per turn, as pi 1.6


async def test_a_length_stop_at_the_output_limit_ends_the_turn(tmp_path, workspace):
    async with model_with_an_output_limit(tmp_path / "home", workspace) as (client, llm):
        await chat(client, llm, 3)
        requests_before = len(llm.requests)
        llm.enqueue(cut_answer("As long as allowed", OUTPUT_LIMIT))
        result = await request(client, "pi/prompt", {"text": "one more"})
        assert result["stopReason"] == "length"
        assert len(llm.requests) == requests_before + 1
        assert not [e for e in entries(workspace) if e["type"] in ("context_edit", "compaction")]


@pytest.mark.filterwarnings("ignore:Unknown progress token")
@pytest.mark.options(**SMALL)
async def test_navigation_with_a_branch_summary(client, events, scripted_llm, workspace):
    await chat(client, scripted_llm, 2)
    tree = await request(client, "pi/tree", {})
    old_leaf = tree["leafId"]
    first_answer = next(entry for entry in tree["entries"] if entry.get("role") == "assistant")
    scripted_llm.enqueue(replies.error(500, "summary failed"))
    with pytest.raises(JsonRpcException):
        await request(client, "pi/navigate", {"targetId": first_answer["id"], "summarize": True})
    assert (await request(client, "pi/tree", {}))[
        "leafId"
    ] == old_leaf  # a failed summary cancels the move
    failed_end = [event for event in events.events() if event["type"] == "branch_summary_end"][-1]
    assert "errorMessage" in failed_end and "entryId" not in failed_end
    scripted_llm.enqueue(replies.text("## Goal\nExplored question number 1"))
    result = await request(
        client,
        "pi/navigate",
        {
            "targetId": first_answer["id"],
            "summarize": True,
            "instructions": "Mention the question",
            "workDoneToken": "summary-1",
        },
    )
    reports = client.progress_reports["summary-1"]
    assert [report.kind for report in reports] == ["begin", "report", "end"]
    assert "branch being left" in reports[1].message
    summary_events = [event for event in events.events() if event["type"].startswith("branch_")]
    card = summary_events[-1].pop("card")
    assert summary_events[-2:] == [
        {"type": "branch_summary_start", "targetId": first_answer["id"]},
        {
            "type": "branch_summary_end",
            "targetId": first_answer["id"],
            "aborted": False,
            "entryId": result["summaryEntryId"],
        },
    ]
    assert "Explored question number 1" in card["summary"] and card["model"] == "openai/scripted"
    assert card["tokensAfter"] > 0 and card["readFiles"] == [] and "tokensBefore" not in card
    summary = entries(workspace)[-1]
    assert (
        summary["type"] == "branch_summary"
        and summary["id"] == result["summaryEntryId"] == result["leafId"]
    )
    assert summary["parentId"] == first_answer["id"] and summary["fromId"] == old_leaf
    assert "Explored question number 1" in summary["summary"]
    assert "Additional focus: Mention the question" in json.dumps(scripted_llm.requests[-1])


@pytest.mark.options(**SMALL)
async def test_abort_during_compaction_cancels_it_cleanly_and_the_tree_is_locked_meanwhile(
    client, events, scripted_llm, workspace
):
    await chat(client, scripted_llm, 3)
    before = session_file(workspace).read_bytes()
    scripted_llm.enqueue(replies.slow_text(SUMMARY, chunks=20, chunk_delay=0.3))
    compaction = asyncio.ensure_future(request(client, "pi/compact", {}))
    await events.wait_for("compaction_start")
    tree = await request(client, "pi/tree", {})
    with pytest.raises(
        Exception, match="cannot navigate the session tree while the agent is working"
    ):
        await request(client, "pi/navigate", {"targetId": tree["entries"][1]["id"]})
    with pytest.raises(JsonRpcException, match="already being compacted"):
        await request(client, "pi/compact", {})
    assert (await request(client, "pi/abort", {}))["aborted"] is True
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(compaction, 15)
    end = [event for event in events.events() if event["type"] == "compaction_end"][-1]
    assert end["aborted"] is True
    assert session_file(workspace).read_bytes() == before
    scripted_llm.enqueue(replies.text("Still usable."))
    assert (await request(client, "pi/prompt", {"text": "hello"}))["stopReason"] == "stop"


@pytest.mark.options(**SMALL)
async def test_editor_file_operations_and_tool_calls_land_in_the_summary_file_lists(
    client, scripted_llm, workspace
):
    notes = workspace / "NOTES.md"
    notes.write_text("notes\n")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=notes.as_uri(), language_id="markdown", version=1, text="notes\n"
            )
        )
    )
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "read", {"path": "app.py"})]),
        replies.tool_calls([("call_2", "write", {"path": "new.py", "content": "x = 1\n"})]),
        replies.text("Wrote new.py " + "done " * 30),
    )
    await request(client, "pi/prompt", {"text": "look around " + "please " * 30})
    await chat(client, scripted_llm, 2)
    scripted_llm.enqueue(replies.text(SUMMARY))
    result = await request(client, "pi/compact", {})
    # Most recently touched first: the agent read app.py after the editor opened NOTES.md.
    assert result["readFiles"] == ["app.py", "NOTES.md"] and result["modifiedFiles"] == ["new.py"]
    assert "<read-files>\napp.py\nNOTES.md\n</read-files>" in result["summary"]
    assert "<modified-files>\nnew.py\n</modified-files>" in result["summary"]


# pytest-lsp only knows work-done tokens of standard requests; a custom request's is valid LSP too.
@pytest.mark.filterwarnings("ignore:Unknown progress token")
@pytest.mark.options(**SMALL)
async def test_manual_compaction_reports_progress_on_the_offered_token(
    client, scripted_llm, workspace
):
    await chat(client, scripted_llm, 3)
    scripted_llm.enqueue(replies.text(SUMMARY))
    await request(client, "pi/compact", {"workDoneToken": "compact-1"})
    reports = client.progress_reports["compact-1"]
    assert [report.kind for report in reports] == ["begin", "report", "end"]
    assert reports[0].title == "Compacting the session" and "Summarizing" in reports[1].message


@pytest.mark.options(**SMALL)
async def test_a_prompt_sent_during_a_compaction_waits_for_it(
    client, events, scripted_llm, workspace
):
    await chat(client, scripted_llm, 3)
    scripted_llm.enqueue(
        replies.slow_text(SUMMARY, chunks=4, chunk_delay=0.3), replies.text("After the compaction.")
    )
    compaction = asyncio.ensure_future(request(client, "pi/compact", {}))
    await events.wait_for("compaction_start")
    prompt = await request(client, "pi/prompt", {"text": "are you there?"})
    assert (await compaction)["entryId"] and prompt["stopReason"] == "stop"
    types = [entry["type"] for entry in entries(workspace)]
    assert types[-3:] == [
        "compaction",
        "message",
        "message",
    ]  # the prompt landed after the compaction


@pytest.mark.options(**SMALL)
async def test_a_summary_is_retried_on_a_transient_error(client, events, scripted_llm, workspace):
    """pi 1.6: summaries get the turns' retries, with events of their own."""
    await chat(client, scripted_llm, 3)
    scripted_llm.enqueue(replies.error(503, "overloaded"), replies.text(SUMMARY))
    result = await request(client, "pi/compact", {})
    assert result["summary"].startswith(SUMMARY.split("\n")[0])
    retries = [event for event in events.events() if event["type"].startswith("summarization")]
    assert [event["type"] for event in retries] == [
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
    ]
    assert retries[0]["attempt"] == 1 and "overloaded" in retries[0]["errorMessage"]
    assert retries[1] == {
        "type": "summarization_retry_attempt_start",
        "source": "compaction",
        "reason": "manual",
    }
    assert not [event for event in events.events() if event["type"] == "retry"]


@pytest.mark.options(**SMALL)
async def test_a_compaction_card_says_what_was_summarized_and_what_it_freed(
    client, events, scripted_llm, workspace
):
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "read", {"path": "app.py"})]), replies.text("Read it.")
    )
    await request(client, "pi/prompt", {"text": "Read app.py " + "context " * 30})
    await chat(client, scripted_llm, 3)
    scripted_llm.enqueue(replies.text(SUMMARY))
    result = await request(client, "pi/compact", {})
    [end] = [event for event in events.events() if event["type"] == "compaction_end"]
    card = end["card"]
    assert card["summary"] == result["summary"] and card["readFiles"] == ["app.py"]
    assert card["modifiedFiles"] == [] and card["model"] == "openai/scripted"
    assert card["tokensBefore"] == result["tokensBefore"] > card["tokensAfter"] > 0
    assert card["cost"] >= 0  # the summary's usage was recorded
    history = await request(client, "pi/messages", {})
    [compaction] = [entry for entry in history["entries"] if entry["type"] == "compaction"]
    assert compaction["card"] == {
        key: value for key, value in card.items() if key not in ("tokensAfter", "model")
    }


@pytest.mark.options(**SMALL)
async def test_a_failed_compaction_has_no_card(client, events, scripted_llm, workspace):
    await chat(client, scripted_llm, 3)
    scripted_llm.enqueue(replies.error(400, "bad request"))
    with pytest.raises(JsonRpcException):
        await request(client, "pi/compact", {})
    [end] = [event for event in events.events() if event["type"] == "compaction_end"]
    assert "card" not in end and end["errorMessage"]
