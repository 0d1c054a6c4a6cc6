"""Permission questions in Neovim: the server's ``window/showMessageRequest`` shows under the
running call's card in the chat, where the chat's keys answer it (``d`` deny, ``a`` allow); a
question whose chat window closes or whose chat is cleared (another session shown), or that
comes while no window shows the chat, is asked with ``vim.ui.select`` (as Neovim's own handler
does); an abort takes it out of the chat."""

from __future__ import annotations

import pytest

from tests.editors.neovim.conftest import SMALL_BUDGETS

# Records each vim.ui.select and answers with the next title of _G.pi_test_answers.
ANSWER_WITH_SELECT = """
_G.pi_test_questions = {}
_G.pi_test_answers = {}
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
CHAT_WINDOW = "vim.fn.bufwinid(require('pi.chat').chat_buffer())"
# Counts the client's answers to workspace/configuration (the server asks after a setup()).
COUNT_CONFIGURATION_ANSWERS = """
local client = require('pi.client').get()
local method = 'workspace/configuration'
local answer = client.handlers[method] or vim.lsp.handlers[method]
_G.pi_test_configuration = { answers = 0, restore = client.handlers[method] }
client.handlers[method] = function(...)
  local result, err = answer(...)
  _G.pi_test_configuration.answers = _G.pi_test_configuration.answers + 1
  return result, err
end
return true
"""


def setup_and_wait(pi, scripted_model, **settings) -> None:
    """setup() with ``settings``, once the server has pulled them: a prompt waits for them only
    so long, which a loaded machine's first start can exceed."""
    assert pi.lua(COUNT_CONFIGURATION_ANSWERS)
    try:
        pi.setup(scripted_model, **SMALL_BUDGETS, **settings)
        pi.wait_until("_G.pi_test_configuration.answers > 0")
    finally:
        pi.lua(
            "require('pi.client').get().handlers['workspace/configuration'] = "
            "_G.pi_test_configuration.restore"
        )


@pytest.fixture
def asking(pi, scripted_model):
    """bash asks; vim.ui.select records its questions and answers from ``_G.pi_test_answers``."""
    setup_and_wait(pi, scripted_model, permissions={"bash": "ask"})
    assert pi.lua("_G.pi_test_select = vim.ui.select; return true")
    pi.lua(ANSWER_WITH_SELECT)
    yield pi
    pi.lua("vim.ui.select = _G.pi_test_select")
    pi.setup(scripted_model, **SMALL_BUDGETS)


def _answer_with_select(pi, *answers: str) -> None:
    pi.lua("_G.pi_test_answers = { ... }", *answers)


def _tool_results(pi) -> list[dict]:
    return [
        entry["message"]
        for entry in pi.session_entries()
        if entry.get("type") == "message" and entry["message"]["role"] == "toolResult"
    ]


def _asked_with_select(command: str) -> list[dict]:
    return [
        {
            "prompt": f"pi wants to run:\n{command}\n(the permissions setting asks): ",
            "titles": ["Allow", "Allow for this session", "Deny"],
        }
    ]


def test_a_question_is_answered_in_the_chat_or_else_through_vim_ui_select(asking, scripted_model):
    pi = asking
    _answer_with_select(pi, "Allow")
    scripted_model.enqueue(
        {"kind": "tool_calls", "calls": [["call_1", "bash", {"command": "touch denied.txt"}]]},
        {"kind": "tool_calls", "calls": [["call_2", "bash", {"command": "touch allowed.txt"}]]},
        {"kind": "text", "text": "One of two."},
    )
    pi.command("Pi Make two files")
    lines = pi.chat_lines(containing="? touch denied.txt")
    at = lines.index("    ? pi wants to run:")
    assert lines[at - 2 : at] == ["◌ bash touch denied.txt", "    $ touch denied.txt"], lines
    assert lines[at + 1 : at + 4] == [
        "    ? touch denied.txt",
        "    ? (the permissions setting asks)",
        "    ? answer: a allow · A allow for this session · d deny",
    ], lines
    pi.lua(f"vim.api.nvim_set_current_win({CHAT_WINDOW})")
    pi.keys("d")
    # The second question, in the chat too; its window closes: vim.ui.select asks instead.
    pi.chat_lines(containing="? touch allowed.txt")
    pi.lua("vim.api.nvim_win_close(" + CHAT_WINDOW + ", false)")
    pi.wait_for("agent_end")
    assert pi.lua("return _G.pi_test_questions") == _asked_with_select("touch allowed.txt")
    assert not (pi.workspace / "denied.txt").exists()
    assert (pi.workspace / "allowed.txt").exists()
    results = _tool_results(pi)
    assert [result["isError"] for result in results] == [True, False]
    assert "the user denied it" in results[0]["content"][0]["text"]
    lines = pi.chat_lines(containing="One of two.")
    assert "⊘ bash touch denied.txt — denied: the user denied it" in lines, lines
    assert any(line.startswith("✓ bash touch allowed.txt — exit 0") for line in lines)
    assert not [line for line in lines if line.startswith("    ? ")], lines


def test_a_question_in_a_cleared_chat_is_asked_through_vim_ui_select(asking, scripted_model):
    pi = asking
    _answer_with_select(pi, "Deny")
    scripted_model.enqueue(
        {"kind": "tool_calls", "calls": [["call_1", "bash", {"command": "touch cleared.txt"}]]},
        {"kind": "text", "text": "Not made."},
    )
    pi.command("Pi Make a file")
    pi.chat_lines(containing="? touch cleared.txt")
    pi.lua("require('pi.chat').clear()")
    pi.wait_for("agent_end")
    assert pi.lua("return _G.pi_test_questions") == _asked_with_select("touch cleared.txt")
    assert "the user denied it" in _tool_results(pi)[0]["content"][0]["text"]
    assert not (pi.workspace / "cleared.txt").exists()


def test_an_abort_takes_the_question_out_of_the_chat(asking, scripted_model):
    pi = asking
    scripted_model.enqueue(
        {"kind": "tool_calls", "calls": [["call_1", "bash", {"command": "touch never.txt"}]]}
    )
    pi.command("Pi Make a file")
    pi.chat_lines(containing="? touch never.txt")
    pi.command("PiAbort")
    pi.wait_for("agent_end")
    lines = pi.chat_lines()
    assert not [line for line in lines if line.startswith("    ? ")], lines
    pi.lua(f"vim.api.nvim_set_current_win({CHAT_WINDOW})")
    pi.keys("a")
    assert pi.notes("INFO")[-1]["message"] == "pi: no permission question is waiting"
    assert pi.lua("return _G.pi_test_questions") == []
    assert not (pi.workspace / "never.txt").exists()


def test_a_key_with_no_question_waiting_says_so(pi):
    pi.command("PiChat")
    pi.lua(f"vim.api.nvim_set_current_win({CHAT_WINDOW})")
    pi.keys("a")
    assert pi.notes("INFO")[-1]["message"] == "pi: no permission question is waiting"
