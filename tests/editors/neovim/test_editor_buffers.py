"""The project's file buffers are attached: the agent reads their unsaved text, and its edits
arrive as buffer changes the user can undo (the file on disk is the user's to save)."""

from __future__ import annotations


def test_the_agent_reads_unsaved_text_and_edits_the_buffer(pi, scripted_model):
    app = pi.workspace / "app.py"
    pi.command(f"edit {app}")
    try:
        pi.wait_until("#vim.lsp.get_clients({ bufnr = 0, name = 'pi' }) == 1")
        pi.lua("vim.api.nvim_buf_set_lines(0, 1, 2, false, { '    return a - b  # unsaved' })")
        scripted_model.enqueue(
            {"kind": "tool_calls", "calls": [["call_1", "read", {"path": "app.py"}]]},
            {
                "kind": "tool_calls",
                "calls": [
                    [
                        "call_2",
                        "edit",
                        {"path": "app.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]},
                    ]
                ],
            },
            {"kind": "text", "text": "Fixed."},
        )
        pi.command("Pi Fix add")
        pi.wait_for("agent_end")
        lines = pi.chat_lines(containing="Fixed.")
        assert any("return a - b  # unsaved" in line for line in lines), (
            "the read did not see the unsaved text"
        )
        buffer = pi.lua("return vim.fn.bufnr(...)", str(app))
        assert pi.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buffer) == [
            "def add(a, b):",
            "    return a + b  # unsaved",
        ]
        assert app.read_text() == "def add(a, b):\n    return a - b\n"
        pi.lua("vim.api.nvim_buf_call(..., function() vim.cmd('silent undo') end)", buffer)
        assert (
            pi.lua("return vim.api.nvim_buf_get_lines(..., 1, 2, false)[1]", buffer)
            == "    return a - b  # unsaved"
        )
    finally:
        pi.command(f"silent! bwipeout! {app}")
