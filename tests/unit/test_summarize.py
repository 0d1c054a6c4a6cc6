"""Compaction summaries with a scripted model: the
requests it is sent and the summaries assembled."""

from __future__ import annotations

import asyncio

import pytest

from pi_lsp.compaction.file_ops import EditorFileOps
from pi_lsp.compaction.prepare import CompactionPreparation, prepare_compaction
from pi_lsp.compaction.prompts import (
    FRESH_SUMMARY_INSTRUCTIONS,
    NO_PRIOR_HISTORY,
    SPLIT_TURN_SEPARATOR,
    SUMMARIZER_SYSTEM_PROMPT,
    TURN_PREFIX_INSTRUCTIONS,
    UPDATE_SUMMARY_INSTRUCTIONS,
)
from pi_lsp.compaction.serialize import serialize_conversation
from pi_lsp.compaction.settings import CompactionSettings
from pi_lsp.compaction.summarize import (
    combine_usage,
    editor_file_ops_in,
    editor_records_to_fold_in,
    entries_to_summarize,
    summarize_compaction,
)
from pi_lsp.errors import CompactionCancelledError, SummaryError
from pi_lsp.session.messages import convert_to_llm
from tests.builders import (
    BASE_EPOCH_MS,
    SUMMARY_HEADINGS,
    ScriptedModel,
    SessionBuilder,
    answer,
    conversation,
    keep,
    split_turn_session,
    text,
    thinking,
    tool_call,
    usage,
    words,
)

CHECKPOINT_HEADINGS = [*SUMMARY_HEADINGS, "## Critical Context"]


def plan(session: SessionBuilder, keep_tokens: int) -> CompactionPreparation:
    preparation = prepare_compaction(session.entries, keep(keep_tokens))
    assert preparation is not None
    return preparation


def serialized(messages) -> str:
    return serialize_conversation(convert_to_llm(messages))


# ------------------------------------------------------------------ the requests


async def test_fresh_summary_request_and_result():
    preparation = plan(conversation(5), 200)
    assert not preparation.is_split_turn
    model = ScriptedModel(answer("## Goal\nShip it"))
    result = await summarize_compaction(preparation, model, max_output_tokens=32000)

    [(system_prompt, user_text, max_tokens)] = model.calls
    assert system_prompt == SUMMARIZER_SYSTEM_PROMPT
    assert max_tokens == 32000
    assert user_text == (
        "<conversation>\n"
        + serialized(preparation.messages_to_summarize)
        + "\n</conversation>\n\n"
        + FRESH_SUMMARY_INSTRUCTIONS
    )
    assert "<previous-summary>" not in user_text
    assert result.summary == "## Goal\nShip it"
    assert result.first_kept_entry_id == preparation.first_kept_entry_id == "test-id-9"
    assert result.tokens_before == preparation.tokens_before
    assert result.details == {"readFiles": [], "modifiedFiles": []}
    assert result.usage == usage(100, 10)


async def test_conversation_in_the_request_is_the_planned_serialization():
    preparation = plan(split_turn_session(), 450)
    model = ScriptedModel(answer("history"), answer("prefix"))
    await summarize_compaction(preparation, model)
    history_text, prefix_text = model.user_texts
    assert history_text.startswith(f"<conversation>\n{preparation.serialized}\n</conversation>\n\n")
    prefix = serialized(preparation.turn_prefix_messages)
    assert '[Assistant tool calls]: read(path="a.py")' in prefix
    assert prefix_text.startswith(f"<conversation>\n{prefix}\n</conversation>\n\n")


async def test_thinking_is_left_out_of_the_summarizer_text_but_not_the_plan():
    """pi 1.2.0+ serializes no thinking for the summarizer; the plan keeps 0.84.2's text."""
    session = SessionBuilder()
    for turn in range(5):
        session.user(f"u{turn}" + words(100))
        session.assistant(thinking("PRIVATE-REASONING"), text(words(100)))
    preparation = plan(session, 200)
    assert "[Assistant thinking]: PRIVATE-REASONING" in preparation.serialized
    model = ScriptedModel(answer("## Goal\nShip it"))
    await summarize_compaction(preparation, model)
    [user_text] = model.user_texts
    assert "PRIVATE-REASONING" not in user_text and "[Assistant]: " in user_text


async def test_without_an_output_limit_the_provider_default_applies():
    model = ScriptedModel(answer("summary"))
    await summarize_compaction(plan(conversation(5), 200), model)
    assert model.calls[0][2] is None


async def test_previous_summary_is_updated_not_regenerated():
    session = conversation(3)
    session.compaction("earlier checkpoint", first_kept_entry_id="test-id-5")  # 7
    for turn in range(3):
        session.user(f"later{turn}" + words(100))
        session.assistant(words(100))
    preparation = plan(session, 200)
    assert not preparation.is_split_turn
    assert preparation.previous_summary == "earlier checkpoint"
    model = ScriptedModel(answer("merged"))
    result = await summarize_compaction(preparation, model)

    [user_text] = model.user_texts
    assert user_text == (
        "<conversation>\n"
        + serialized(preparation.messages_to_summarize)
        + "\n</conversation>\n\n<previous-summary>\nearlier checkpoint\n</previous-summary>\n\n"
        + UPDATE_SUMMARY_INSTRUCTIONS
    )
    assert result.summary == "merged"


async def test_user_instructions_are_the_additional_focus():
    model = ScriptedModel(answer("summary"))
    await summarize_compaction(plan(conversation(5), 200), model, instructions="the parser bugs")
    assert model.user_texts[0].endswith(
        FRESH_SUMMARY_INSTRUCTIONS + "\n\nAdditional focus: the parser bugs"
    )


def test_instructions_use_the_checkpoint_format():
    for heading in CHECKPOINT_HEADINGS:
        assert f"\n{heading}\n" in FRESH_SUMMARY_INSTRUCTIONS
        assert f"\n{heading}\n" in UPDATE_SUMMARY_INSTRUCTIONS
    assert "<previous-summary>" in UPDATE_SUMMARY_INSTRUCTIONS
    for heading in ["## Original Request", "## Progress So Far", "## Context Needed to Continue"]:
        assert f"\n{heading}\n" in TURN_PREFIX_INSTRUCTIONS


# ------------------------------------------------------------------ split turns


async def test_split_turn_summarizes_history_then_the_turn_prefix():
    preparation = plan(split_turn_session(), 450)
    assert preparation.is_split_turn and preparation.messages_to_summarize
    model = ScriptedModel(
        answer("history summary", usage_=usage(1000, 200)),
        answer("prefix summary", usage_=usage(300, 50)),
    )
    result = await summarize_compaction(
        preparation, model, max_output_tokens=8000, instructions="tests"
    )

    history_call, prefix_call = model.calls
    assert history_call[1].endswith(FRESH_SUMMARY_INSTRUCTIONS + "\n\nAdditional focus: tests")
    assert prefix_call == (
        SUMMARIZER_SYSTEM_PROMPT,
        "<conversation>\n"
        + serialized(preparation.turn_prefix_messages)
        + "\n</conversation>\n\n"
        + TURN_PREFIX_INSTRUCTIONS
        + "\n\nAdditional focus: tests",
        8000,
    )
    assert result.summary == (
        "history summary\n\n---\n\n**Turn Context (split turn):**\n\nprefix summary"
        "\n\n<read-files>\na.py\n</read-files>"
    )
    assert result.usage == usage(1300, 250)


async def test_split_turn_calls_run_one_after_the_other():
    running = 0
    overlaps = []

    async def complete(system_prompt, user_text, max_tokens):
        nonlocal running
        running += 1
        overlaps.append(running)
        await asyncio.sleep(0)  # give a concurrent call the chance to start
        running -= 1
        return answer("part")

    await summarize_compaction(plan(split_turn_session(), 450), complete)
    assert overlaps == [1, 1]


def split_turn_right_after_compaction() -> SessionBuilder:
    """A compaction kept the start of a long turn; the next cut falls inside that same turn."""
    session = conversation(2)
    session.user("big task")  # 5
    session.compaction("the previous checkpoint", first_kept_entry_id="test-id-5")  # 6
    session.assistant(tool_call("read", path="a.py"))  # 7
    session.tool_result(words(200))  # 8
    session.assistant(tool_call("write", call_id="call-2", path="c.py"))  # 9
    session.tool_result(words(400), call_id="call-2", tool_name="write")  # 10
    return session


async def test_split_turn_without_new_history_keeps_the_previous_summary():
    preparation = plan(split_turn_right_after_compaction(), 300)
    assert preparation.is_split_turn
    assert preparation.messages_to_summarize == []
    assert preparation.previous_summary == "the previous checkpoint"
    model = ScriptedModel(answer("prefix summary"))
    result = await summarize_compaction(preparation, model)

    [user_text] = model.user_texts  # only the turn prefix is summarized
    assert user_text.endswith(TURN_PREFIX_INSTRUCTIONS)
    assert result.summary.startswith(
        "the previous checkpoint" + SPLIT_TURN_SEPARATOR + "prefix summary"
    )
    assert NO_PRIOR_HISTORY not in result.summary
    assert result.usage == usage(100, 10)  # the kept summary cost nothing


async def test_split_first_turn_has_no_prior_history():
    session = SessionBuilder()
    session.user("big task")  # 1
    session.assistant(tool_call("read", path="a.py"))  # 2
    session.tool_result(words(200))  # 3
    session.assistant(tool_call("edit", call_id="call-2", path="a.py"))  # 4
    session.tool_result(words(400), call_id="call-2", tool_name="edit")  # 5
    preparation = plan(session, 300)
    assert preparation.is_split_turn and not preparation.messages_to_summarize
    model = ScriptedModel(answer("prefix summary"))
    result = await summarize_compaction(preparation, model)
    assert result.summary == "No prior history." + SPLIT_TURN_SEPARATOR + "prefix summary" + (
        "\n\n<read-files>\na.py\n</read-files>"
    )


# ------------------------------------------------------------------ failures


FAILURES = [
    pytest.param(
        answer(stop_reason="error", errorMessage="503 upstream overloaded"),
        SummaryError,
        "503 upstream overloaded",
        id="error",
    ),
    pytest.param(
        answer("## Goal\nhalf a summ", stop_reason="length"),
        SummaryError,
        "the summary was cut off at the output limit",
        id="length",
    ),
    pytest.param(
        answer("Let me look first.", tool_call("read", path="a.py"), stop_reason="toolUse"),
        SummaryError,
        "tool",
        id="tool call",
    ),
    pytest.param(
        answer("summary", tool_call("read", path="a.py")),
        SummaryError,
        "tool",
        id="tool call, stop",
    ),
    pytest.param(answer(), SummaryError, "no summary text", id="no text"),
    pytest.param(answer(" \n "), SummaryError, "no summary text", id="blank text"),
    pytest.param(
        answer("partial", stop_reason="aborted"),
        CompactionCancelledError,
        "cancelled",
        id="aborted",
    ),
]


@pytest.mark.parametrize(("response", "error_type", "message"), FAILURES)
async def test_unusable_answers_fail_the_compaction(response, error_type, message):
    with pytest.raises(error_type, match=message) as raised:
        await summarize_compaction(plan(conversation(5), 200), ScriptedModel(response))
    assert raised.value.message.startswith("Compaction summary")


async def test_error_without_a_message_still_explains():
    with pytest.raises(SummaryError, match="failed: the model reported an unknown error"):
        await summarize_compaction(
            plan(conversation(5), 200), ScriptedModel(answer(stop_reason="error"))
        )


async def test_length_failure_names_the_limit():
    with pytest.raises(SummaryError, match=r"output limit \(4096 tokens\)"):
        await summarize_compaction(
            plan(conversation(5), 200),
            ScriptedModel(answer("cut", stop_reason="length")),
            max_output_tokens=4096,
        )


async def test_a_failed_turn_prefix_summary_fails_the_split_turn():
    model = ScriptedModel(answer("history"), answer("cut", stop_reason="length"))
    with pytest.raises(SummaryError, match=r"^Split-turn summary failed: the summary was cut off"):
        await summarize_compaction(plan(split_turn_session(), 450), model)


async def test_a_failed_history_summary_stops_before_the_turn_prefix():
    model = ScriptedModel(answer(stop_reason="error", errorMessage="boom"), answer("prefix"))
    with pytest.raises(SummaryError, match="boom"):
        await summarize_compaction(plan(split_turn_session(), 450), model)
    assert len(model.calls) == 1


def test_error_codes():
    assert SummaryError.code == -32012
    assert CompactionCancelledError.code == -32013


# ------------------------------------------------------------------ usage


def test_combine_usage_sums_numbers_and_nested_costs():
    first = usage(100, 10, cache_read=5) | {"reasoning": 7}
    first["cost"] = {"input": 0.5, "output": 0.25, "cacheRead": 0, "cacheWrite": 0, "total": 0.75}
    second = usage(200, 20, cache_write=3)
    second["cost"] = {
        "input": 1.0,
        "output": 0.5,
        "cacheRead": 0,
        "cacheWrite": 0.125,
        "total": 1.625,
    }
    assert combine_usage(first, second) == {
        "input": 300,
        "output": 30,
        "cacheRead": 5,
        "cacheWrite": 3,
        "totalTokens": 338,
        "cost": {"input": 1.5, "output": 0.75, "cacheRead": 0, "cacheWrite": 0.125, "total": 2.375},
        "reasoning": 7,
    }


def test_combine_usage_with_a_missing_side():
    assert combine_usage(None, None) is None
    assert combine_usage(usage(1, 2), None) == usage(1, 2)
    assert combine_usage(None, usage(1, 2)) == usage(1, 2)


async def test_answers_without_usage_give_no_usage():
    response = answer("summary")
    del response["usage"]
    result = await summarize_compaction(plan(conversation(5), 200), ScriptedModel(response))
    assert result.usage is None


# ------------------------------------------------------------------ file lists


def file_heavy_session() -> SessionBuilder:
    session = SessionBuilder()
    session.user("refactor" + words(100))  # 1
    session.assistant(
        tool_call("read", call_id="c1", path="z.py"),
        tool_call("read", call_id="c2", path="b.py"),
        tool_call("read", call_id="c3", path="a.py"),
    )  # 2
    session.tool_result(words(100), call_id="c1")  # 3
    session.assistant(tool_call("edit", call_id="c4", path="b.py"))  # 4
    session.tool_result(words(100), call_id="c4", tool_name="edit")  # 5
    session.assistant(
        tool_call("write", call_id="c5", path="new.py"), tool_call("bash", command="ls")
    )  # 6
    session.tool_result(words(100), call_id="c5", tool_name="write")  # 7
    session.user("next" + words(100))  # 8
    session.assistant(words(100))  # 9
    return session


async def test_file_lists_end_the_summary_and_fill_details():
    preparation = plan(file_heavy_session(), 150)
    assert preparation.first_kept_entry_id == "test-id-8"
    result = await summarize_compaction(preparation, ScriptedModel(answer("## Goal\nRefactor")))
    # Most recently touched first; paths touched by one message in pi's order.
    assert result.details == {"readFiles": ["a.py", "z.py"], "modifiedFiles": ["new.py", "b.py"]}
    assert result.summary == (
        "## Goal\nRefactor"
        "\n\n<read-files>\na.py\nz.py\n</read-files>"
        "\n\n<modified-files>\nnew.py\nb.py\n</modified-files>"
    )


async def test_file_lists_carry_over_from_the_previous_compaction():
    session = conversation(3)
    session.compaction(
        "earlier", "test-id-5", details={"readFiles": ["old.md"], "modifiedFiles": ["old.py"]}
    )
    for turn in range(3):
        session.user(f"later{turn}" + words(100))
        session.assistant(words(100))
    result = await summarize_compaction(plan(session, 200), ScriptedModel(answer("merged")))
    assert result.details == {"readFiles": ["old.md"], "modifiedFiles": ["old.py"]}


async def test_editor_file_operations_are_folded_in():
    preparation = plan(file_heavy_session(), 150)
    planned_reads = set(preparation.file_ops.read)
    result = await summarize_compaction(
        preparation,
        ScriptedModel(answer("summary")),
        editor_file_ops=[
            EditorFileOps(["README.md", "a.py"], [], BASE_EPOCH_MS + 500),  # before the reads
            EditorFileOps([], ["a.py", "docs/guide.md"], BASE_EPOCH_MS + 4500),  # before the write
        ],
    )
    # a.py was read by the agent and later saved in the editor: it only counts as modified.
    assert result.details == {
        "readFiles": ["z.py", "README.md"],
        "modifiedFiles": ["new.py", "a.py", "docs/guide.md", "b.py"],
    }
    assert "<read-files>\nz.py\nREADME.md\n</read-files>" in result.summary
    assert preparation.file_ops.read == planned_reads  # the plan is left as it was


def test_editor_file_ops_are_read_from_their_custom_entries():
    session = SessionBuilder()
    session.user("hi")
    session.custom("pi-lsp.editor-file-ops", {"readFiles": ["a.md"], "modifiedFiles": ["b.py"]})
    session.custom("some-extension", {"readFiles": ["ignored.md"], "modifiedFiles": []})
    session.custom_message("not a record", custom_type="pi-lsp.editor-file-ops")
    session.custom("pi-lsp.editor-file-ops", {"readFiles": ["c.md", 7, ""], "modifiedFiles": None})
    session.custom("pi-lsp.editor-file-ops", "garbage")
    found = editor_file_ops_in(session.entries)
    assert [(record.read_files, record.modified_files) for record in found] == [
        (["a.md"], ["b.py"]),
        (["c.md"], []),
    ]
    assert found[0].timestamp == BASE_EPOCH_MS + 1000  # the entry's time, for recency


def test_entries_to_summarize_run_from_the_boundary_to_the_first_kept_entry():
    session = conversation(3)
    assert [entry["id"] for entry in entries_to_summarize(session.entries, "test-id-5")] == [
        "test-id-1",
        "test-id-2",
        "test-id-3",
        "test-id-4",
    ]
    session.compaction("earlier", first_kept_entry_id="test-id-3")  # 7
    session.user("later")  # 8
    session.custom("pi-lsp.editor-file-ops", {"readFiles": ["x.md"], "modifiedFiles": []})  # 9
    session.user("latest")  # 10
    summarized = entries_to_summarize(session.entries, "test-id-10")
    assert [entry["id"] for entry in summarized] == [f"test-id-{n}" for n in range(3, 10)]
    assert [record.read_files for record in editor_file_ops_in(summarized)] == [["x.md"]]
    assert entries_to_summarize(session.entries, "no-such-id") == []


async def test_editor_file_ops_of_a_planned_range_end_up_in_the_summary():
    session = SessionBuilder()
    session.user("first" + words(100))  # 1
    session.custom("pi-lsp.editor-file-ops", {"readFiles": [], "modifiedFiles": ["saved.py"]})  # 2
    session.assistant(words(100))  # 3
    session.custom("pi-lsp.editor-file-ops", {"readFiles": ["kept.md"], "modifiedFiles": []})  # 4
    session.user("second" + words(100))  # 5
    session.assistant(words(100))  # 6
    preparation = plan(session, 150)
    assert preparation.first_kept_entry_id == "test-id-4"  # the cut moves back over the record
    result = await summarize_compaction(
        preparation,
        ScriptedModel(answer("s")),
        editor_file_ops=editor_file_ops_in(editor_records_to_fold_in(session.entries)),
    )
    # kept.md was opened in the kept tail: no kept message shows it to the model, so it is listed.
    assert result.details == {"readFiles": ["kept.md"], "modifiedFiles": ["saved.py"]}


def test_editor_records_are_folded_in_from_the_previous_boundary_to_the_leaf():
    session = conversation(3)
    session.custom("pi-lsp.editor-file-ops", {"readFiles": ["before.md"], "modifiedFiles": []})  # 7
    session.compaction("earlier", first_kept_entry_id="test-id-5")  # 8
    session.custom("pi-lsp.editor-file-ops", {"readFiles": ["after.md"], "modifiedFiles": []})  # 9
    records = editor_file_ops_in(editor_records_to_fold_in(session.entries))
    assert [record.read_files for record in records] == [["before.md"], ["after.md"]]
    session.compaction("latest", first_kept_entry_id="no-such-id")  # 10: starts after itself
    session.custom("pi-lsp.editor-file-ops", {"readFiles": ["last.md"], "modifiedFiles": []})  # 11
    records = editor_file_ops_in(editor_records_to_fold_in(session.entries))
    assert [record.read_files for record in records] == [["last.md"]]


# ------------------------------------------------------------------ in place


class InPlaceModel:
    """A ``ConversationInCache`` complete function that records what it was asked."""

    def __init__(self, *responses) -> None:
        self.responses = list(responses)
        self.calls: list[tuple[list, str, int | None]] = []
        self.pasted: list[str] = []

    async def __call__(self, request):
        self.calls.append((list(request.prefix), request.instruction, request.max_output_tokens))
        self.pasted.append(request.pasted_text)
        return self.responses.pop(0)


def in_cache(session: SessionBuilder, model: InPlaceModel):
    from pi_lsp.compaction.summarize import ConversationInCache
    from pi_lsp.session.context import build_session_context

    return ConversationInCache(build_session_context(session.entries).messages, model)


async def test_a_split_turn_is_summarized_in_place_in_two_prefixes():
    session = split_turn_session()
    preparation = plan(session, 450)
    cached = InPlaceModel(answer("history summary"), answer("prefix summary"))
    pasted = ScriptedModel()
    result = await summarize_compaction(
        preparation, pasted, max_output_tokens=8000, in_cache=in_cache(session, cached)
    )
    assert pasted.calls == []
    (history_prefix, history_text, _), (turn_prefix, turn_text, _) = cached.calls
    history = preparation.messages_to_summarize
    assert history_prefix == history and turn_prefix == [
        *history,
        *preparation.turn_prefix_messages,
    ]
    assert history_text.startswith("Pause the work here") and "## Goal" in history_text
    assert 'latest request above (the one beginning "big task")' in turn_text
    # Each in-place request knows what the pasted one would have been, to be asked only if dearer.
    assert cached.pasted[1].startswith("<conversation>\n[User]: big task")
    assert result.summary.startswith("history summary" + SPLIT_TURN_SEPARATOR + "prefix summary")


async def test_an_in_place_refusal_or_a_prefix_not_in_the_cache_falls_back_to_pasting():
    session = conversation(4)
    preparation = plan(session, 150)
    refused = InPlaceModel(None)  # the agent found the prefix too long for the window
    pasted = ScriptedModel(answer("pasted summary"))
    result = await summarize_compaction(preparation, pasted, in_cache=in_cache(session, refused))
    assert len(refused.calls) == 1 and result.summary.startswith("pasted summary")

    other = conversation(4)
    other.user("a question the summarized session never had")
    unrelated = InPlaceModel()
    from pi_lsp.compaction.summarize import ConversationInCache

    stale = ConversationInCache(other.entries[::-1], unrelated)  # not this session's context
    pasted = ScriptedModel(answer("pasted again"))
    await summarize_compaction(preparation, pasted, in_cache=stale)
    assert unrelated.calls == [] and len(pasted.calls) == 1


async def test_the_file_list_limit_setting_bounds_the_summary_text_not_the_details():
    session = SessionBuilder()
    session.user("survey" + words(100))
    for index in range(8):
        session.assistant(tool_call("read", call_id=f"c{index}", path=f"m{index}.py"))
        session.tool_result(words(50), call_id=f"c{index}")
    session.user("next" + words(100))
    session.assistant(words(100))
    settings = CompactionSettings(keep_recent_tokens=150, file_list_limit=3)
    preparation = prepare_compaction(session.entries, settings)
    assert preparation is not None
    result = await summarize_compaction(
        preparation, ScriptedModel(answer("s")), file_exists=lambda path: path != "m6.py"
    )
    assert result.details["readFiles"] == [
        "m7.py",
        "m5.py",
        "m4.py",
        "m3.py",
        "m2.py",
        "m1.py",
        "m0.py",
    ]
    assert result.summary.endswith(
        "<read-files>\nm7.py\nm5.py\nm4.py\n(4 older files not listed)\n</read-files>"
    )
