"""The queue in Neovim: prompts sent while a turn runs show under the prompt input (pi-queue
buffer), each editable and removable there; aborting takes the queue back into the input first,
so the model never sees what the user took back."""

from __future__ import annotations

GATE = "nvim-queue"
QUEUE = "vim.fn.bufnr('pi://queue')"
PROMPT_WINDOW = "require('pi.util').window_showing(require('pi.chat').prompt_buffer())"


def queue_lines(pi) -> list[str]:
    return pi.lua(f"return vim.api.nvim_buf_get_lines({QUEUE}, 0, -1, false)")


def queued_count(pi, count: int) -> None:
    pi.wait_until(f"#require('pi.queue').prompts() == {count}")


def focus_queue_line(pi, line: int) -> None:
    pi.lua(
        f"local window = require('pi.util').window_showing({QUEUE}); "
        "vim.api.nvim_set_current_win(window); vim.api.nvim_win_set_cursor(window, { ..., 0 })",
        line,
    )


def test_the_queue_shows_under_the_input_and_abort_gives_it_back(pi, scripted_model):
    scripted_model.enqueue(
        {"kind": "text", "text": "Holding this answer open.", "chunks": 4, "gate": GATE}
    )
    before = len(scripted_model.requests())
    pi.command("Pi Start a long answer")
    scripted_model.wait_for_gate(GATE)
    pi.command("Pi! Steer this way")
    queued_count(pi, 1)
    pi.command("Pi Then fix the tpyo")
    queued_count(pi, 2)
    pi.command("Pi Drop this one")
    queued_count(pi, 3)
    assert queue_lines(pi) == [
        "steer › Steer this way",
        "follow-up › Then fix the tpyo",
        "follow-up › Drop this one",
    ]
    below_prompt = pi.lua(
        "local util = require('pi.util'); "
        f"local queue = vim.fn.win_screenpos(util.window_showing({QUEUE}))[1]; "
        f"local prompt = vim.fn.win_screenpos({PROMPT_WINDOW})[1]; "
        "return queue > prompt"
    )
    assert below_prompt, "the queue is not under the prompt input"

    pi.lua(
        "_G.pi_test.ui_input = vim.ui.input; "
        "vim.ui.input = function(_, on_confirm) on_confirm('Then fix the typo') end"
    )
    focus_queue_line(pi, 2)
    pi.keys("<CR>")
    pi.lua("vim.ui.input = _G.pi_test.ui_input")
    pi.wait_until(
        f"vim.api.nvim_buf_get_lines({QUEUE}, 1, 2, false)[1] == 'follow-up › Then fix the typo'"
    )
    focus_queue_line(pi, 3)
    pi.keys("dd")
    queued_count(pi, 2)

    pi.lua("require('pi.chat').set_prompt_text('my draft')")
    pi.lua(f"vim.api.nvim_set_current_win({PROMPT_WINDOW})")
    pi.keys("<C-c>")
    pi.wait_for("agent_end")
    pi.wait_until(
        "require('pi.chat').prompt_text() == 'Steer this way\\n\\nThen fix the typo\\n\\nmy draft'"
    )
    pi.wait_until(f"require('pi.util').window_showing({QUEUE}) == nil")
    scripted_model.release(GATE)
    sent = str(scripted_model.requests()[before:])
    assert "Steer this way" not in sent and "typo" not in sent and "Drop this one" not in sent
    assert not any("failed" in note["message"] for note in pi.notes())
    pi.lua("require('pi.chat').set_prompt_text('')")
