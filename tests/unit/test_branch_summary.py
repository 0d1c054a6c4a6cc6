"""Branch summaries with a scripted model: the request, the preamble, the file lists, failures."""

from __future__ import annotations

import pytest

from pi_lsp.compaction.branch import BranchSummaryPlan, plan_branch_summary
from pi_lsp.compaction.branch_summary import summarize_branch
from pi_lsp.compaction.prompts import (
    BRANCH_SUMMARY_INSTRUCTIONS,
    BRANCH_SUMMARY_PREAMBLE,
    SUMMARIZER_SYSTEM_PROMPT,
)
from pi_lsp.compaction.serialize import serialize_conversation
from pi_lsp.errors import CompactionCancelledError, SummaryError
from pi_lsp.session.messages import convert_to_llm
from tests.builders import SUMMARY_HEADINGS, ScriptedModel, SessionBuilder, answer, tool_call, usage


def forked_session() -> SessionBuilder:
    """1 ← 2 ← 3 ← 4 ← 5 ← 6 (old branch, with file work), and 2 ← 7 (the target)."""
    session = SessionBuilder()
    session.user("root question")  # 1
    session.assistant("root answer")  # 2
    session.user("try the cache idea")  # 3
    session.assistant(
        tool_call("read", call_id="c1", path="src/cache.py"),
        tool_call("read", call_id="c2", path="README.md"),
    )  # 4
    session.tool_result("class Cache: ...", call_id="c1")  # 5
    session.assistant(tool_call("edit", call_id="c3", path="src/cache.py"))  # 6
    session.branch_from("test-id-2")
    session.user("different idea")  # 7
    return session


def old_branch_plan(session: SessionBuilder, old_leaf: str = "test-id-6") -> BranchSummaryPlan:
    return plan_branch_summary(session.by_id(), old_leaf, "test-id-7")


async def test_request_and_summary():
    session = forked_session()
    plan = old_branch_plan(session)
    model = ScriptedModel(answer("## Goal\nA faster cache", usage_=usage(500, 80)))
    result = await summarize_branch(plan, model, max_output_tokens=64000)

    [(system_prompt, user_text, max_tokens)] = model.calls
    assert system_prompt == SUMMARIZER_SYSTEM_PROMPT
    assert max_tokens == 64000
    conversation = serialize_conversation(convert_to_llm(plan.messages))
    assert "[User]: try the cache idea" in conversation
    assert user_text == (
        f"<conversation>\n{conversation}\n</conversation>\n\n" + BRANCH_SUMMARY_INSTRUCTIONS
    )
    assert result.summary == (
        BRANCH_SUMMARY_PREAMBLE
        + "## Goal\nA faster cache"
        + "\n\n<read-files>\nREADME.md\n</read-files>"
        + "\n\n<modified-files>\nsrc/cache.py\n</modified-files>"
    )
    assert result.details == {"readFiles": ["README.md"], "modifiedFiles": ["src/cache.py"]}
    assert result.usage == usage(500, 80)


def test_preamble_introduces_the_summary():
    assert BRANCH_SUMMARY_PREAMBLE.endswith("\n\n")
    assert "branch" in BRANCH_SUMMARY_PREAMBLE


def test_branch_instructions_have_no_critical_context():
    for heading in SUMMARY_HEADINGS:
        assert f"\n{heading}\n" in BRANCH_SUMMARY_INSTRUCTIONS
    assert "## Critical Context" not in BRANCH_SUMMARY_INSTRUCTIONS


async def test_user_instructions_add_focus_or_replace():
    plan = old_branch_plan(forked_session())
    model = ScriptedModel(answer("a"), answer("b"), answer("c"))
    await summarize_branch(plan, model, instructions="what failed")
    await summarize_branch(
        plan, model, instructions="Only list the files.", replace_instructions=True
    )
    await summarize_branch(plan, model, replace_instructions=True)
    focused, replaced, default = model.user_texts
    assert focused.endswith(BRANCH_SUMMARY_INSTRUCTIONS + "\n\nAdditional focus: what failed")
    assert replaced.endswith("\n</conversation>\n\nOnly list the files.")
    assert default.endswith("\n</conversation>\n\n" + BRANCH_SUMMARY_INSTRUCTIONS)


async def test_nothing_to_summarize_gives_no_summary_and_no_call():
    session = forked_session()
    session.branch_from("test-id-2")
    session.label("test-id-1", "start")  # 8: a branch of metadata only
    plan = plan_branch_summary(session.by_id(), "test-id-8", "test-id-7")
    assert plan.entries and not plan.messages
    model = ScriptedModel()
    assert await summarize_branch(plan, model) is None
    assert model.calls == []


async def test_file_lists_include_nested_summaries_and_editor_records():
    session = forked_session()
    session.branch_from("test-id-6")
    session.branch_summary(
        "an earlier detour",
        from_id="test-id-6",
        details={"readFiles": ["docs/notes.md"], "modifiedFiles": ["setup.cfg"]},
    )  # 8
    session.custom(
        "pi-lsp.editor-file-ops",
        {"readFiles": ["src/cache.py", "TODO.md"], "modifiedFiles": ["README.md"]},
    )  # 9
    session.user("and now?")  # 10
    plan = plan_branch_summary(session.by_id(), "test-id-10", "test-id-7")
    result = await summarize_branch(plan, ScriptedModel(answer("summary")))
    assert result.details == {
        "readFiles": ["TODO.md", "docs/notes.md"],
        # The editor's record (9) is newer than the earlier summary's lists (8).
        "modifiedFiles": ["README.md", "src/cache.py", "setup.cfg"],
    }
    assert result.summary.endswith(
        "summary\n\n<read-files>\nTODO.md\ndocs/notes.md\n</read-files>"
        "\n\n<modified-files>\nREADME.md\nsrc/cache.py\nsetup.cfg\n</modified-files>"
    )
    assert plan.file_ops.read == {"src/cache.py", "README.md", "docs/notes.md"}  # plan untouched


async def test_editor_records_beyond_the_token_budget_still_count():
    session = forked_session()
    session.custom("pi-lsp.editor-file-ops", {"readFiles": ["early.md"], "modifiedFiles": []})  # 8
    session.user("x" * 4000)  # 9: alone fills the budget
    plan = plan_branch_summary(session.by_id(), "test-id-9", "test-id-7", token_budget=1100)
    assert len(plan.messages) == 1
    result = await summarize_branch(plan, ScriptedModel(answer("summary")))
    assert "early.md" in result.details["readFiles"]


@pytest.mark.parametrize(
    ("response", "error_type", "message"),
    [
        (answer(stop_reason="error", errorMessage="rate limited"), SummaryError, "rate limited"),
        (answer("cut", stop_reason="length"), SummaryError, "cut off at the output limit"),
        (answer(tool_call("read", path="a.py"), stop_reason="toolUse"), SummaryError, "tool"),
        (answer(""), SummaryError, "no summary text"),
        (answer(stop_reason="aborted"), CompactionCancelledError, "cancelled"),
    ],
    ids=["error", "length", "tool call", "empty", "aborted"],
)
async def test_unusable_answers_fail(response, error_type, message):
    with pytest.raises(error_type, match=message) as raised:
        await summarize_branch(old_branch_plan(forked_session()), ScriptedModel(response))
    assert raised.value.message.startswith("Branch summary")


async def test_branch_summary_lists_follow_the_same_bounds_as_compactions():
    session = forked_session()
    session.branch_from("test-id-6")
    session.assistant(*[tool_call("read", call_id=f"r{n}", path=f"doc{n}.md") for n in range(4)])
    plan = plan_branch_summary(session.by_id(), session.entries[-1]["id"], "test-id-7")
    existing = {"README.md", "doc0.md", "doc1.md", "doc2.md"}  # doc3.md and src/cache.py are gone
    result = await summarize_branch(
        plan, ScriptedModel(answer("summary")), file_list_limit=2, file_exists=existing.__contains__
    )
    assert result.details == {
        "readFiles": ["doc0.md", "doc1.md", "doc2.md", "README.md"],
        "modifiedFiles": ["src/cache.py"],
    }
    assert result.summary.endswith(
        "<read-files>\ndoc0.md\ndoc1.md\n(2 older files not listed)\n</read-files>"
        "\n\n<modified-files>\nsrc/cache.py (deleted)\n</modified-files>"
    )
