"""Branch summaries: collecting the abandoned entries and fitting them into the token budget."""

from __future__ import annotations

from pi_lsp.compaction.branch import (
    DEFAULT_BRANCH_TOKEN_BUDGET,
    collect_entries_for_branch_summary,
    plan_branch_summary,
    prepare_branch_entries,
)
from tests.builders import SessionBuilder, tool_call, words


def forked_session() -> SessionBuilder:
    """1 ← 2 ← 3 ← 4 (old branch), and 2 ← 5 ← 6 (target branch)."""
    session = SessionBuilder()
    session.user("root question")  # 1
    session.assistant("root answer")  # 2
    session.user("old idea")  # 3
    session.assistant("old answer")  # 4
    session.branch_from("test-id-2")
    session.user("new idea")  # 5
    session.assistant("new answer")  # 6
    return session


def test_default_budget():
    assert DEFAULT_BRANCH_TOKEN_BUDGET == 128000 - 16384


def test_collects_old_branch_back_to_common_ancestor():
    session = forked_session()
    collected = collect_entries_for_branch_summary(session.by_id(), "test-id-4", "test-id-6")
    assert collected.common_ancestor_id == "test-id-2"
    assert [entry["id"] for entry in collected.entries] == ["test-id-3", "test-id-4"]


def test_navigating_up_collects_down_to_the_target():
    session = forked_session()
    collected = collect_entries_for_branch_summary(session.by_id(), "test-id-4", "test-id-2")
    assert collected.common_ancestor_id == "test-id-2"
    assert [entry["id"] for entry in collected.entries] == ["test-id-3", "test-id-4"]


def test_old_leaf_on_target_path_collects_nothing():
    session = forked_session()
    collected = collect_entries_for_branch_summary(session.by_id(), "test-id-2", "test-id-4")
    assert collected.entries == []
    assert collected.common_ancestor_id == "test-id-2"


def test_no_old_leaf_collects_nothing():
    session = forked_session()
    collected = collect_entries_for_branch_summary(session.by_id(), None, "test-id-4")
    assert (collected.entries, collected.common_ancestor_id) == ([], None)


def test_separate_roots_have_no_common_ancestor():
    session = forked_session()
    session.branch_from(None)
    session.user("second root")  # 7
    collected = collect_entries_for_branch_summary(session.by_id(), "test-id-4", "test-id-7")
    assert collected.common_ancestor_id is None
    assert [entry["id"] for entry in collected.entries] == [
        "test-id-1",
        "test-id-2",
        "test-id-3",
        "test-id-4",
    ]


def test_collection_does_not_stop_at_compactions():
    session = forked_session()
    session.branch_from("test-id-4")
    session.compaction("compacted", first_kept_entry_id="test-id-3")  # 7
    session.user("after")  # 8
    collected = collect_entries_for_branch_summary(session.by_id(), "test-id-8", "test-id-6")
    assert [entry["id"] for entry in collected.entries] == [
        "test-id-3",
        "test-id-4",
        "test-id-7",
        "test-id-8",
    ]


def test_collection_terminates_on_a_parent_cycle():
    by_id = {
        "a": {
            "type": "message",
            "id": "a",
            "parentId": "b",
            "message": {"role": "user", "content": "A"},
        },
        "b": {
            "type": "message",
            "id": "b",
            "parentId": "a",
            "message": {"role": "user", "content": "B"},
        },
    }
    collected = collect_entries_for_branch_summary(by_id, "a", "missing")
    assert [entry["id"] for entry in collected.entries] == ["b", "a"]


def test_tool_results_are_left_out_and_summaries_converted():
    session = SessionBuilder()
    session.user("go")
    session.assistant(tool_call("read", path="a.py"))
    session.tool_result("contents")
    session.branch_summary("")
    session.compaction("compacted", first_kept_entry_id="test-id-1")
    session.custom_message("note")
    session.model_change("openai", "gpt")
    prepared = prepare_branch_entries(session.entries)
    assert [message["role"] for message in prepared.messages] == [
        "user",
        "assistant",
        "branchSummary",
        "compactionSummary",
        "custom",
    ]
    assert (
        prepared.messages[2]["summary"] == ""
    )  # empty summaries still count here, unlike the context


def test_budget_keeps_the_newest_messages():
    session = SessionBuilder()
    session.user(words(100))
    session.assistant(words(100))
    session.user(words(100))
    session.assistant(words(100))
    prepared = prepare_branch_entries(session.entries, token_budget=250)
    assert len(prepared.messages) == 2
    assert prepared.messages[-1] is session.entries[-1]["message"]
    assert prepared.total_tokens == 200


def test_summary_is_squeezed_in_below_ninety_percent_of_the_budget():
    session = SessionBuilder()
    session.branch_summary(words(200))
    session.user(words(100))
    prepared = prepare_branch_entries(session.entries, token_budget=250)
    assert [message["role"] for message in prepared.messages] == ["branchSummary", "user"]
    assert prepared.total_tokens == 300

    session = SessionBuilder()
    session.branch_summary(words(200))
    session.user(words(230))  # 230 >= 0.9 * 250: no room left for the summary
    prepared = prepare_branch_entries(session.entries, token_budget=250)
    assert [message["role"] for message in prepared.messages] == ["user"]


def test_file_ops_from_branch_summaries_and_from_messages_within_budget():
    session = SessionBuilder()
    session.assistant(tool_call("read", path="too-old.py"))
    session.user(words(300))
    session.branch_summary(
        "earlier", details={"readFiles": ["r.py", "m.py"], "modifiedFiles": ["m.py"]}
    )
    session.branch_summary("hook", fromHook=True, details={"readFiles": ["hook.py"]})
    session.compaction("c", first_kept_entry_id="x", details={"readFiles": ["compaction.py"]})
    session.assistant(tool_call("edit", path="e.py"), tool_call("read", path="n.py"))
    prepared = prepare_branch_entries(session.entries, token_budget=100)
    plan_lists = (sorted(prepared.file_ops.read), sorted(prepared.file_ops.edited))
    assert plan_lists == (["m.py", "n.py", "r.py"], ["e.py", "m.py"])


def test_plan_to_json():
    session = forked_session()
    session.branch_from("test-id-4")
    session.assistant(tool_call("write", path="w.py"))  # 7
    plan = plan_branch_summary(session.by_id(), "test-id-7", "test-id-6")
    json = plan.to_json()
    assert list(json) == [
        "commonAncestorId",
        "entryIds",
        "messages",
        "totalTokens",
        "readFiles",
        "modifiedFiles",
    ]
    assert json["commonAncestorId"] == "test-id-2"
    assert json["entryIds"] == ["test-id-3", "test-id-4", "test-id-7"]
    assert json["modifiedFiles"] == ["w.py"]
    assert json["totalTokens"] == 2 + 3 + 5  # "old idea", "old answer", "write" + {"path":"w.py"}


def test_context_edits_on_the_abandoned_branch_apply_as_in_pi_16():
    session = forked_session()
    session.branch_from("test-id-4")
    call = session.assistant("editing", tool_call("edit", path="secret.env"), stop_reason="toolUse")
    session.tool_result("ok")
    session.context_edit("test-id-3", None)  # the old idea, left out
    session.context_edit("test-id-4", {"content": "old answer, shortened"})
    session.context_edit(call["id"], None)
    leaf = session.user("last words")
    plan = plan_branch_summary(session.by_id(), leaf["id"], "test-id-6")
    assert [message.get("content") for message in plan.messages] == [
        [{"type": "text", "text": "old answer, shortened"}],
        "last words",
    ]
    assert plan.to_json()["modifiedFiles"] == []
