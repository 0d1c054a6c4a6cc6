"""Permission questions in Neovim: the server's ``window/showMessageRequest`` reaches the user
through Neovim's own handler, which asks with ``vim.ui.select``; the plugin adds nothing."""

from __future__ import annotations

from tests.editors.neovim.conftest import SMALL_BUDGETS

# Records each vim.ui.select and answers with the next title of _G.pi_test_answers.
ANSWER_WITH_SELECT = """
_G.pi_test_questions = {}
_G.pi_test_answers = { ... }
vim.ui.select = function(items, opts, on_choice)
  local titles = vim.tbl_map(function(item) return item.title end, items)
  table.insert(_G.pi_test_questions, { prompt = opts.prompt, titles = titles })
  local wanted = table.remove(_G.pi_test_answers, 1)
  for _, item in ipairs(items) do
    if item.title == wanted then return on_choice(item) end
  end
  on_choice(nil)
end
"""


def test_a_question_is_answered_through_vim_ui_select(pi, scripted_model):
    # The prompt below waits for the server to have pulled the changed settings.
    pi.setup(scripted_model, **SMALL_BUDGETS, permissions={"bash": "ask"})
    original_select = pi.lua("_G.pi_test_select = vim.ui.select; return true")
    try:
        pi.lua(ANSWER_WITH_SELECT, "Deny", "Allow")
        scripted_model.enqueue(
            {"kind": "tool_calls", "calls": [["call_1", "bash", {"command": "touch denied.txt"}]]},
            {"kind": "tool_calls", "calls": [["call_2", "bash", {"command": "touch allowed.txt"}]]},
            {"kind": "text", "text": "One of two."},
        )
        pi.command("Pi Make two files")
        pi.wait_for("agent_end")
        questions = pi.lua("return _G.pi_test_questions")
        assert [question["titles"] for question in questions] == [
            ["Allow", "Allow for this session", "Deny"]
        ] * 2
        assert questions[0]["prompt"] == (
            "pi wants to run:\ntouch denied.txt\n(the permissions setting asks): "
        )
        assert not (pi.workspace / "denied.txt").exists()
        assert (pi.workspace / "allowed.txt").exists()
        results = [
            entry["message"]
            for entry in pi.session_entries()
            if entry.get("type") == "message" and entry["message"]["role"] == "toolResult"
        ]
        assert [result["isError"] for result in results] == [True, False]
        assert "the user denied it" in results[0]["content"][0]["text"]
        lines = pi.chat_lines(containing="One of two.")
        assert "⊘ bash touch denied.txt — denied: the user denied it" in lines, lines
        assert any(line.startswith("✓ bash touch allowed.txt — exit 0") for line in lines)
    finally:
        assert original_select
        pi.lua("vim.ui.select = _G.pi_test_select")
        pi.setup(scripted_model, **SMALL_BUDGETS)
