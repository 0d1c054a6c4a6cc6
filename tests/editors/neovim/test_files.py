"""Going back with the files from Neovim: `r` in the tree (and `:PiNavigate {id} files`) shows the
file changes as diffs, asks with vim.ui.select, and the server's workspace edit updates the
buffers (undoable) before they are saved; files changed since are kept unless overwritten."""

from __future__ import annotations

from tests.editors.neovim.test_tree import open_tree, press_on, row, wait_for_leaf

EDIT_A = {"path": "a.txt", "edits": [{"oldText": "two", "newText": "three"}]}


def two_turns(pi, scripted_model) -> None:
    """Turn one writes a.txt; turn two creates sub/new.txt and edits a.txt. The files and any
    buffer of them an earlier test left go first (the agent writes an open buffer, not the disk)."""
    for name in ("a.txt", "sub/new.txt"):
        pi.lua(
            "local b = vim.fn.bufnr(...); "
            "if b ~= -1 then vim.api.nvim_buf_delete(b, { force = true }) end",
            str(pi.workspace / name),
        )
        (pi.workspace / name).unlink(missing_ok=True)
    scripted_model.enqueue(
        {"kind": "tool_calls", "calls": [["c1", "write", {"path": "a.txt", "content": "two\n"}]]},
        {"kind": "text", "text": "Wrote a.txt"},
        {
            "kind": "tool_calls",
            "calls": [
                ["c2", "write", {"path": "sub/new.txt", "content": "new\n"}],
                ["c3", "edit", EDIT_A],
            ],
        },
        {"kind": "text", "text": "Changed both"},
    )
    pi.command("Pi Write a.txt")
    pi.wait_for("agent_end", 1, timeout_ms=60_000)  # the first turn of the run starts litellm
    pi.command("Pi Change both")
    pi.wait_for("agent_end", 2)


def stub_select(pi, *answers: int | None) -> None:
    """vim.ui.select answers with the given choices in turn (None: cancelled), recording each
    prompt and its items, and the preview buffer's lines when it was asked."""
    pi.lua(
        """
        _G.pi_test.select_answers = { ... }
        _G.pi_test.asked_selects = {}
        vim.ui.select = function(items, opts, on_choice)
          local buffer = require('pi.files').preview_buffer()
          table.insert(_G.pi_test.asked_selects, {
            prompt = opts.prompt, items = items,
            preview = buffer and vim.api.nvim_buf_get_lines(buffer, 0, -1, false) or {},
          })
          local choice = table.remove(_G.pi_test.select_answers, 1)
          if choice == 0 then choice = nil end
          vim.schedule(function() on_choice(choice and items[choice] or nil, choice) end)
        end
        """,
        *[0 if answer is None else answer for answer in answers],
    )


def asked(pi) -> list[dict]:
    return pi.lua("return _G.pi_test.asked_selects")


def files(pi) -> dict[str, str]:
    return {
        name: (pi.workspace / name).read_text()
        for name in ("a.txt", "sub/new.txt")
        if (pi.workspace / name).exists()
    }


def test_r_previews_asks_and_restores_the_files(pi, scripted_model):
    two_turns(pi, scripted_model)
    leaf = pi.request("pi/state")["leafId"]
    rows = open_tree(pi)
    stub_select(pi, 1)
    press_on(pi, row(rows, "user", "Change both"), "r")
    pi.wait_until("not (vim.uv or vim.loop).fs_stat('sub/new.txt')")
    pi.wait_until("vim.fn.readfile('a.txt')[1] == 'two'")
    [question] = asked(pi)
    assert question["items"] == ["Go back with the files", "Cancel"]
    assert "restore 2 file(s)" in question["prompt"]
    preview = question["preview"]
    assert "not tracked" in preview[1]
    assert "restored  a.txt" in preview and "deleted   sub/new.txt" in preview
    assert {"-three", "+two", "--- a/sub/new.txt", "+++ /dev/null", "-new"} <= set(preview)
    pi.wait_until("require('pi.chat').prompt_text() == 'Change both'")
    pi.chat_lines("files: 1 restored, 1 deleted")
    assert pi.lua("return require('pi.files').preview_buffer()") is None

    # Forward again from the command line, to the old leaf.
    stub_select(pi, 1)
    pi.command(f"PiNavigate {leaf} files")
    wait_for_leaf(pi, leaf)
    # The edit creates sub/new.txt empty and fills its buffer; the plugin saves the buffers when
    # the navigation is answered, and then says so: the files on disk are final from there.
    pi.chat_lines("files: 1 restored, 1 created")
    assert files(pi) == {"a.txt": "three\n", "sub/new.txt": "new\n"}


def test_open_buffers_are_restored_undoably_and_saved(pi, scripted_model):
    two_turns(pi, scripted_model)
    pi.command("edit a.txt")
    a_buffer = pi.lua("return vim.api.nvim_get_current_buf()")
    pi.command("wincmd p")  # back to where the tree opens
    rows = open_tree(pi)
    stub_select(pi, 1)
    press_on(pi, row(rows, "user", "Write a.txt"), "r")
    pi.wait_until("not (vim.uv or vim.loop).fs_stat('a.txt')")
    pi.wait_until(f"not vim.api.nvim_buf_is_valid({a_buffer})")  # the edit deleted its buffer
    assert not (pi.workspace / "sub" / "new.txt").exists()

    pi.command("edit sub/new.txt")  # forward: the file comes back, its buffer updated
    stub_select(pi, 1)
    press_on(pi, row(open_tree(pi), "assistant", "Changed both"), "r")
    pi.wait_until("(vim.uv or vim.loop).fs_stat('a.txt') ~= nil")
    pi.wait_until("vim.fn.readfile('sub/new.txt')[1] == 'new'")
    new_buffer = pi.lua("return vim.fn.bufnr('sub/new.txt')")
    assert pi.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", new_buffer) == ["new"]
    assert not pi.lua("return vim.bo[...].modified", new_buffer)  # saved
    pi.lua("vim.api.nvim_buf_call(..., function() vim.cmd('silent undo') end)", new_buffer)
    assert pi.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", new_buffer) == [""]


def test_a_change_of_yours_is_kept_unless_you_choose_to_overwrite_it(pi, scripted_model):
    two_turns(pi, scripted_model)
    pi.command("edit a.txt")
    pi.lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'three', 'mine' })")  # unsaved
    pi.command("wincmd p")
    rows = open_tree(pi)
    target = row(rows, "user", "Change both")
    stub_select(pi, 1, 1)  # go back; keep the conflicting file
    press_on(pi, target, "r")
    pi.wait_until("not (vim.uv or vim.loop).fs_stat('sub/new.txt')")
    first, second = asked(pi)
    assert "1 changed since (asked next)" in first["prompt"]
    assert second["items"] == ["Keep them as they are", "Overwrite them"]
    assert "changed since pi-lsp last wrote them: a.txt" in second["prompt"]
    assert "conflict  a.txt  (changed since pi-lsp last wrote it" in "\n".join(second["preview"])
    a_buffer = pi.lua("return vim.fn.bufnr('a.txt')")
    assert pi.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", a_buffer) == [
        "three",
        "mine",
    ]
    pi.wait_until("require('pi.chat').prompt_text() == 'Change both'")
    pi.chat_lines("files: 1 deleted, 1 conflict; left as they are: a.txt")

    # Back to the start: this time the user overwrites it (the edit can be undone in the buffer).
    stub_select(pi, 1, 2)
    press_on(pi, row(open_tree(pi), "user", "Write a.txt"), "r")
    pi.wait_until("not (vim.uv or vim.loop).fs_stat('a.txt')")


def test_cancelling_changes_nothing(pi, scripted_model):
    two_turns(pi, scripted_model)
    leaf = pi.request("pi/state")["leafId"]
    rows = open_tree(pi)
    stub_select(pi, 2)
    press_on(pi, row(rows, "user", "Change both"), "r")
    pi.wait_until("#_G.pi_test.asked_selects == 1")
    pi.wait_until("require('pi.files').preview_buffer() == nil")
    assert pi.request("pi/state")["leafId"] == leaf
    assert files(pi) == {"a.txt": "three\n", "sub/new.txt": "new\n"}
