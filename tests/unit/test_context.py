"""buildSessionContext and the path walk: pi's build-context test cases, cycles and odd lines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.session.context import (
    UNSET,
    branch_path,
    build_context_entries,
    build_session_context,
    session_entry_to_context_messages,
    session_path,
)
from tests.builders import SessionBuilder, tool_call


def roles(context) -> list[str]:
    return [message["role"] for message in context.messages]


def texts(context) -> list[str]:
    out = []
    for message in context.messages:
        if "summary" in message:
            out.append(message["summary"])
        elif isinstance(message["content"], str):
            out.append(message["content"])
        else:
            out.append("".join(block.get("text", "") for block in message["content"]))
    return out


def simple_conversation() -> SessionBuilder:
    session = SessionBuilder()
    session.user("u1")
    session.assistant("a1")
    session.user("u2")
    session.assistant("a2")
    return session


def test_empty_entries_give_empty_context():
    context = build_session_context([])
    assert context.to_json() == {"messages": [], "thinkingLevel": "off", "model": None}


def test_single_user_message():
    session = SessionBuilder()
    session.user("hello")
    context = build_session_context(session.entries)
    assert roles(context) == ["user"]
    assert context.model is None


def test_simple_conversation_takes_model_from_assistant():
    context = build_session_context(simple_conversation().entries)
    assert texts(context) == ["u1", "a1", "u2", "a2"]
    assert context.thinking_level == "off"
    assert context.model == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}


def test_thinking_level_changes_last_one_wins():
    session = SessionBuilder()
    session.thinking_level("high")
    session.user("u1")
    session.thinking_level("low")
    context = build_session_context(session.entries)
    assert context.thinking_level == "low"
    assert roles(context) == ["user"]


def test_model_change_then_later_assistant_overrides_it():
    session = SessionBuilder()
    session.model_change("openai", "gpt-4o")
    session.user("u1")
    assert build_session_context(session.entries).model == {
        "provider": "openai",
        "modelId": "gpt-4o",
    }
    session.assistant("a1", provider="anthropic", model="claude")
    assert build_session_context(session.entries).model == {
        "provider": "anthropic",
        "modelId": "claude",
    }
    session.model_change("google", "gemini")
    assert build_session_context(session.entries).model == {
        "provider": "google",
        "modelId": "gemini",
    }


def test_compaction_summary_comes_before_kept_messages():
    session = simple_conversation()  # ids 1..4
    session.compaction("summary text", first_kept_entry_id="test-id-3", tokens_before=1234)
    session.user("u3")
    session.assistant("a3")
    context = build_session_context(session.entries)
    assert roles(context) == ["compactionSummary", "user", "assistant", "user", "assistant"]
    assert texts(context) == ["summary text", "u2", "a2", "u3", "a3"]
    summary = context.messages[0]
    assert list(summary) == ["role", "summary", "tokensBefore", "timestamp"]
    assert summary["tokensBefore"] == 1234
    assert summary["timestamp"] == 1_735_689_604_000


def test_compaction_keeping_from_first_message_keeps_everything():
    session = simple_conversation()
    session.compaction("s", first_kept_entry_id="test-id-1")
    assert texts(build_session_context(session.entries)) == ["s", "u1", "a1", "u2", "a2"]


def test_compaction_with_unknown_first_kept_id_keeps_nothing_before_it():
    session = simple_conversation()
    session.compaction("s", first_kept_entry_id="missing")
    session.user("after")
    assert texts(build_session_context(session.entries)) == ["s", "after"]


def test_multiple_compactions_only_latest_matters():
    session = simple_conversation()
    session.compaction("first", first_kept_entry_id="test-id-3")  # 5
    session.user("u3")  # 6
    session.assistant("a3")  # 7
    session.compaction("second", first_kept_entry_id="test-id-6")  # 8
    session.user("u4")
    context = build_session_context(session.entries)
    assert texts(context) == ["second", "u3", "a3", "u4"]


def test_older_compaction_inside_kept_range_gives_nothing():
    # pi 1.6: the newer summary already holds the older one (pi 0.84.2 repeated "first" here).
    session = simple_conversation()
    session.compaction("first", first_kept_entry_id="test-id-3")  # 5
    session.user("u3")  # 6
    session.compaction("second", first_kept_entry_id="test-id-4")  # 7
    assert texts(build_session_context(session.entries)) == ["second", "a2", "u3"]
    assert [entry["id"] for entry in build_context_entries(session.entries)] == [
        "test-id-7",
        "test-id-4",
        "test-id-5",
        "test-id-6",
    ]


def test_follows_path_to_given_leaf():
    session = SessionBuilder()
    session.user("u1")  # 1
    session.assistant("a1")  # 2
    session.user("left")  # 3
    session.branch_from("test-id-2")
    session.user("right")  # 4
    assert texts(build_session_context(session.entries, "test-id-3")) == ["u1", "a1", "left"]
    assert texts(build_session_context(session.entries)) == ["u1", "a1", "right"]


def test_unknown_leaf_id_falls_back_to_last_entry():
    session = simple_conversation()
    assert texts(build_session_context(session.entries, "nope")) == ["u1", "a1", "u2", "a2"]
    assert texts(build_session_context(session.entries, "")) == ["u1", "a1", "u2", "a2"]


def test_explicit_null_leaf_gives_empty_context():
    session = simple_conversation()
    session.model_change("openai", "gpt-4o")
    assert build_session_context(session.entries, None).to_json() == {
        "messages": [],
        "thinkingLevel": "off",
        "model": None,
    }
    assert build_session_context(session.entries, UNSET).model == {
        "provider": "openai",
        "modelId": "gpt-4o",
    }


def test_branch_summary_on_path_is_included_and_empty_one_is_not():
    session = SessionBuilder()
    session.user("u1")
    session.branch_summary("went elsewhere", from_id="test-id-9")
    session.branch_summary("")
    context = build_session_context(session.entries)
    assert roles(context) == ["user", "branchSummary"]
    assert context.messages[1] == {
        "role": "branchSummary",
        "summary": "went elsewhere",
        "fromId": "test-id-9",
        "timestamp": 1_735_689_601_000,
    }


def test_complex_tree_with_branches_and_compaction():
    session = SessionBuilder()
    session.user("u1")  # 1
    session.assistant("a1")  # 2
    session.user("u2")  # 3
    session.assistant("a2")  # 4
    session.compaction("sum", first_kept_entry_id="test-id-3")  # 5
    session.user("u3")  # 6
    session.branch_from("test-id-2")
    session.user("other")  # 7: a branch that never saw the compaction
    assert texts(build_session_context(session.entries, "test-id-6")) == ["sum", "u2", "a2", "u3"]
    assert texts(build_session_context(session.entries, "test-id-7")) == ["u1", "a1", "other"]


def test_orphaned_entries_are_handled():
    session = SessionBuilder()
    session.user("u1")
    session.user("orphan", parent="does-not-exist")
    session.assistant("a")
    assert texts(build_session_context(session.entries)) == ["orphan", "a"]


def test_settings_and_labels_and_custom_entries_add_no_messages():
    session = SessionBuilder()
    session.user("u1")
    session.label("test-id-1", "start")
    session.custom("state", {"x": 1})
    session.thinking_level("high")
    assert roles(build_session_context(session.entries)) == ["user"]


def test_custom_message_conversion_keeps_pi_key_order_and_drops_undefined_fields():
    session = SessionBuilder()
    with_details = session.custom_message("hi", details={"k": 1})
    without_details = session.custom_message([{"type": "text", "text": "x"}])
    del without_details["display"]
    null_content = session.custom_message(None)
    assert session_entry_to_context_messages(with_details) == [
        {
            "role": "custom",
            "customType": "ext",
            "content": "hi",
            "display": True,
            "details": {"k": 1},
            "timestamp": 1_735_689_600_000,
        }
    ]
    assert list(session_entry_to_context_messages(without_details)[0]) == [
        "role",
        "customType",
        "content",
        "timestamp",
    ]
    assert session_entry_to_context_messages(null_content)[0]["content"] == []


def test_null_or_missing_content_becomes_empty_list_for_provider_roles():
    session = SessionBuilder()
    null_user = session.message({"role": "user", "content": None, "timestamp": 1})
    missing = session.message({"role": "assistant", "stopReason": "stop"})
    bash = session.message({"role": "bashExecution", "command": "ls", "content": None})
    assert session_entry_to_context_messages(null_user) == [
        {"role": "user", "content": [], "timestamp": 1}
    ]
    assert list(session_entry_to_context_messages(missing)[0]) == ["role", "stopReason", "content"]
    assert session_entry_to_context_messages(bash)[0]["content"] is None
    assert null_user["message"]["content"] is None  # the entry itself is left untouched


def test_invalid_timestamp_becomes_null():
    entry = {
        "type": "compaction",
        "id": "c",
        "parentId": None,
        "timestamp": "garbage",
        "summary": "s",
        "firstKeptEntryId": "x",
        "tokensBefore": 1,
    }
    assert session_entry_to_context_messages(entry)[0]["timestamp"] is None


def test_build_context_entries_puts_compaction_first():
    session = simple_conversation()
    compaction = session.compaction("s", first_kept_entry_id="test-id-4")
    entries = build_context_entries(session.entries)
    assert [entry["id"] for entry in entries] == [compaction["id"], "test-id-4"]


def test_lazy_lookup_is_used_when_given():
    session = simple_conversation()
    calls = []

    class Lookup:
        def get(self, entry_id):
            calls.append(entry_id)
            return session.by_id().get(entry_id)

    path_only = [session.entries[-1]]  # the store may pass just the leaf
    assert [entry["id"] for entry in session_path(path_only, UNSET, Lookup())] == session.ids()
    assert calls == ["test-id-3", "test-id-2", "test-id-1"]


def test_parent_cycle_terminates():
    a = {
        "type": "message",
        "id": "a",
        "parentId": "b",
        "timestamp": "x",
        "message": {"role": "user", "content": "A"},
    }
    b = {
        "type": "message",
        "id": "b",
        "parentId": "a",
        "timestamp": "x",
        "message": {"role": "user", "content": "B"},
    }
    assert [entry["id"] for entry in session_path([a, b])] == ["a", "b"]
    self_loop = {**a, "parentId": "a"}
    assert session_path([self_loop]) == [self_loop]
    assert [m["content"] for m in build_session_context([a, b], "a").messages] == ["B", "A"]


def test_branch_path_is_empty_for_unknown_or_missing_ids():
    session = simple_conversation()
    assert branch_path(session.by_id(), "nope") == []
    assert branch_path(session.by_id(), None) == []
    assert [entry["id"] for entry in branch_path(session.by_id(), "test-id-2")] == [
        "test-id-1",
        "test-id-2",
    ]


def test_file_tool_calls_do_not_change_context():
    session = SessionBuilder()
    session.user("read it")
    session.assistant(tool_call("read", path="a.py"))
    assert roles(build_session_context(session.entries)) == ["user", "assistant"]


entry_ids = st.sampled_from([f"e{index}" for index in range(8)])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(entry_ids, st.one_of(st.none(), entry_ids, st.just(""), st.just("missing"))),
        min_size=0,
        max_size=12,
    ),
    st.one_of(st.just(UNSET), st.none(), entry_ids),
)
def test_session_path_terminates_on_any_parent_graph(links, leaf_id):
    entries = [
        {"type": "custom", "id": entry_id, "parentId": parent_id} for entry_id, parent_id in links
    ]
    path = session_path(entries, leaf_id)
    ids = [entry["id"] for entry in path]
    assert len(ids) == len(set(ids))  # no entry twice, so a cycle was cut
    for child, parent in zip(path[1:], path[:-1], strict=True):
        assert child["parentId"] == parent["id"]  # every step follows a real parent link
    if leaf_id is None or not entries:
        assert path == []
    else:
        assert path  # a leaf always yields at least itself
