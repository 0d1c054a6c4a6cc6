"""Tree previews: what a line in an editor's session tree says about an entry."""

from pi_lsp.session.tree_view import preview


def user(text: str) -> dict:
    return {
        "type": "message",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
    }


def test_an_expanded_skill_prompt_previews_as_the_command_the_user_typed():
    expanded = (
        '<skill name="review" location="/home/me/.pi/skills/review/SKILL.md">\nReferences '
        "are relative to /x.\n\nList bugs.\n</skill>"
    )
    assert preview(user(expanded + "\n\napp.py and tests")) == "/skill:review app.py and tests"
    assert preview(user(expanded)) == "/skill:review"
    assert preview(user("Fix the <skill> parser")) == "Fix the <skill> parser"


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
