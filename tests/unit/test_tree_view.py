"""Tree previews: what a line in an editor's session tree says about an entry."""

from pi_lsp.session.tree_view import preview
from tests.builders import user_text


def message_entry(value: str) -> dict:
    """The entry around a user message: all a preview reads."""
    return {"type": "message", "message": user_text(value)}


def test_an_expanded_skill_prompt_previews_as_the_command_the_user_typed():
    expanded = (
        '<skill name="review" location="/home/me/.pi/skills/review/SKILL.md">\nReferences '
        "are relative to /x.\n\nList bugs.\n</skill>"
    )
    assert (
        preview(message_entry(expanded + "\n\napp.py and tests"))
        == "/skill:review app.py and tests"
    )
    assert preview(message_entry(expanded)) == "/skill:review"
    assert preview(message_entry("Fix the <skill> parser")) == "Fix the <skill> parser"


def test_summaries_preview_their_goal_not_their_preamble():
    branch = (
        "Before coming back to this point, the user followed another branch of the conversation.\n"
        "What happened on that branch:\n\n## Goal\nTry a faster parser\n\n## Progress\n- done"
    )
    assert preview({"type": "branch_summary", "summary": branch}) == "Try a faster parser"
    assert (
        preview(
            {"type": "compaction", "summary": "## Goal\n\nShip the release\n## Next Steps\n1. tag"}
        )
        == "Ship the release"
    )
    assert (
        preview({"type": "compaction", "summary": "Free-form summary\nmore"}) == "Free-form summary"
    )


def test_pi16_entries_preview_as_what_they_do(tmp_path):
    from pi_lsp.session.session import Session
    from pi_lsp.session.tree_view import render_tree_text, tree_view

    session = Session.create(tmp_path, str(tmp_path))
    session.append_raw(
        {
            "type": "message",
            "message": {
                "role": "system",
                "content": "You are pi.",
                "sections": {"rules": "<rules/>"},
                "toolsAdded": [{"name": "read"}],
                "timestamp": 0,
            },
        }
    )
    secret = session.append_message({"role": "user", "content": "my key is sk-1", "timestamp": 1})
    question = session.append_message({"role": "user", "content": "long question", "timestamp": 2})
    session.append_raw({"type": "context_edit", "targetId": secret, "replacement": None})
    session.append_raw(
        {"type": "context_edit", "targetId": question, "replacement": {"content": "short"}}
    )
    session.append_raw(
        {
            "type": "usage",
            "kind": "cache_warm",
            "provider": "anthropic",
            "model": "claude",
            "usage": {},
            "note": "warm-up",
        }
    )
    rows = tree_view(session).entries
    by_type = {}
    for row in rows:
        by_type.setdefault(row.role or row.type, []).append(row)
    assert by_type["system"][0].preview == "system prompt: You are pi.; sections rules; +read"
    assert [row.preview for row in by_type["context_edit"]] == [
        "removed from context: my key is sk-1",
        "replaced in context: long question → short",
    ]
    assert by_type["usage"][0].preview == "usage cache_warm anthropic/claude (warm-up)"
    marks = {row.id: row.context_edit for row in rows}
    assert marks[secret] == "removed" and marks[question] == "replaced"
    assert list(marks.values()).count(None) == len(marks) - 2
    text = render_tree_text(session)
    assert f"{secret} user (removed from context): my key is sk-1" in text
    assert f"{question} user (replaced in context): long question" in text
    # The marks follow the active path: from the question, the edits are not on it.
    session.move_leaf(question)
    assert all(row.context_edit is None for row in tree_view(session).entries)


def test_a_context_edit_of_an_unknown_entry_previews_its_id():
    edit = {"type": "context_edit", "targetId": "gone1234", "replacement": None}
    assert preview(edit, lambda entry_id: None) == "removed from context: entry gone1234"


def open_built(tmp_path, builder):
    """A read-only session holding the entries of ``builder``."""
    from pi_lsp.session.session import Session
    from tests.builders import write_session_file

    return Session.open(write_session_file(tmp_path / "s.jsonl", builder.entries), writable=False)


def indentation_levels(text: str) -> dict[str, int]:
    """Entry id → indentation level of each row of a text tree (after its header line)."""
    levels = {}
    for line in text.splitlines()[1:]:
        body = line[2:]
        stripped = body.lstrip(" ")
        levels[stripped.split(" ")[0]] = (len(body) - len(stripped)) // 2
    return levels


def test_the_text_tree_indents_like_pis_tree_selector(tmp_path):
    from pi_lsp.session.tree_view import render_tree_text
    from tests.builders import SessionBuilder

    builder = SessionBuilder(id_prefix="e")
    builder.user("start")
    builder.assistant("hello")
    branch_point = builder.user("try it")
    builder.assistant("first way")
    builder.user("go on")
    builder.assistant("went on")
    builder.branch_from(branch_point["id"])
    builder.assistant("second way")
    builder.user("and on")
    levels = indentation_levels(render_tree_text(open_built(tmp_path, builder)))
    # A run of only children stays in its column; a branch point's children step right, and the
    # first entry after the step once more (pi's flattenTree).
    assert levels == {"e1": 0, "e2": 0, "e3": 0, "e4": 1, "e5": 2, "e6": 2, "e7": 1, "e8": 2}


def test_the_text_tree_of_several_roots_draws_them_as_branches(tmp_path):
    from pi_lsp.session.tree_view import render_tree_text
    from tests.builders import SessionBuilder

    builder = SessionBuilder(id_prefix="e")
    builder.user("first root")
    builder.assistant("answer")
    builder.assistant("more")
    builder.branch_from(None)
    builder.user("second root")
    levels = indentation_levels(render_tree_text(open_built(tmp_path, builder)))
    assert levels == {"e1": 0, "e2": 1, "e3": 1, "e4": 0}


def test_the_text_tree_grows_with_the_entries_not_with_their_depth(tmp_path):
    from pi_lsp.session.tree_view import render_tree_text
    from tests.builders import SessionBuilder

    chain = SessionBuilder(id_prefix="c")
    for index in range(2_000):
        chain.user(f"step {index}")
    staircase = SessionBuilder(id_prefix="s")  # every step is a branch point: the worst case
    step = staircase.user("start")
    for index in range(500):
        staircase.assistant("dead end")
        staircase.branch_from(step["id"])
        step = staircase.user(f"step {index}")
    for name, builder in (("chain", chain), ("staircase", staircase)):
        session = open_built(tmp_path / name, builder)
        lines = render_tree_text(session).splitlines()
        assert len(lines) == len(builder.entries) + 1
        assert max(len(line) for line in lines) <= 160, name
        if name == "chain":  # previews decode an entry for its line only, and keep nothing
            assert not any(entry.is_decoded for entry in session.entries)
    from pi_lsp.session.tree_view import MAX_INDENT_LEVELS

    deepest = lines[-1]
    indentation = "  " * MAX_INDENT_LEVELS
    assert deepest.startswith(f"@ {indentation}+") and f"{step['id']} user: step 499" in deepest
