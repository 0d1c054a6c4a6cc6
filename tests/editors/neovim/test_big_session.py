"""A session of 100k entries in Neovim: the tree buffer shows a window around the leaf and grows as
the cursor moves, a turn is patched in from its tree_changed event and a missed event fetches the
window again, the tree search jumps to a labelled entry, and the chat loads earlier pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.big_session import (
    BRANCH_IDS,
    LABEL,
    LABELLED,
    entry_id,
    message_text,
    write_big_session,
)

ENTRIES = 100_000
TREE_LINES = "vim.api.nvim_buf_get_lines(vim.fn.bufnr('pi://tree'), 0, -1, false)"


@pytest.fixture(scope="module")
def big_session(shared_editor) -> tuple[Path, str]:
    """The session file, in the session directory of the shared Neovim's server, and its leaf."""
    directory = Path(shared_editor.request("pi/state")["path"]).parent
    path = directory / "2026-01-01T00-00-00-000Z_big-100000.jsonl"
    return path, write_big_session(path, shared_editor.workspace, ENTRIES)


def open_big(pi, big_session) -> str:
    path, leaf = big_session
    pi.request("pi/openSession", {"path": str(path)})
    return leaf


def tree_lines(pi) -> list[str]:
    return pi.lua(f"return {TREE_LINES}")


def earlier_count(line: str) -> int:
    match = re.search(r"⋯ ([\d,]+) earlier entries", line)
    assert match, line
    return int(match.group(1).replace(",", ""))


def run_earlier_line(pi) -> tuple[int, int]:
    """The line number and count of the "⋯ N earlier entries" line of the leaf's run."""
    lines = tree_lines(pi)
    [(lnum, line)] = [
        (index, line)
        for index, line in enumerate(lines, start=1)
        if "earlier entries" in line and line.startswith("  ")
    ]
    return lnum, earlier_count(line)


def test_the_tree_buffer_moves_through_a_100k_entry_session(pi, big_session, scripted_model):
    leaf = open_big(pi, big_session)
    # The counter is the Neovim's, which earlier tests share (a navigation there fetches again).
    resyncs_before = pi.lua("return require('pi.tree').resyncs")
    pi.command("PiTree")
    pi.wait_until(f"table.concat({TREE_LINES}, '\\n'):find('◉ {leaf}', 1, true) ~= nil")
    lines = tree_lines(pi)
    # The path from the top, the earlier entries of each level a count; the other branch of the
    # branch point on the path is shown, collapsed; the leaf's run is a window ending at the leaf.
    assert lines[2:4] == ["⋯ 17 earlier entries", f"● {entry_id(16)} user: {message_text(16)}"]
    assert f"  ○ {BRANCH_IDS[0]} assistant: the other approach" in lines, lines[:40]
    lnum, hidden = run_earlier_line(pi)
    assert hidden > 99_000
    assert pi.lua("return require('pi.tree').loaded_rows()") < 300
    assert pi.lua("return vim.api.nvim_win_get_cursor(0)[1]") == len(lines), "not on the leaf"

    # Moving onto the "⋯" line fetches the page before, and the cursor stays beside it.
    first_shown = pi.lua(f"return require('pi.tree').id_at({lnum + 1})")
    # From the top first: Neovim sends CursorMoved only for a position other than the one it last
    # reported, and the shared Neovim's earlier tests may have left that on this line number.
    pi.keys("gg")
    pi.wait_until("vim.api.nvim_win_get_cursor(0)[1] == 1")
    pi.keys(f"{lnum}G")
    pi.wait_until(f"require('pi.tree').id_at({lnum + 101}) == '{first_shown}'")
    assert run_earlier_line(pi)[1] == hidden - 100
    assert pi.lua("return vim.api.nvim_win_get_cursor(0)[1]") == lnum + 100

    # `o` expands the collapsed branch (fetching it) and folds it again.
    branch = pi.lua(
        f"for l, t in ipairs({TREE_LINES}) do "
        f"if t:find('{BRANCH_IDS[0]}', 1, true) then return l end end"
    )
    assert tree_lines(pi)[branch] == "    ▸ the rest of this branch"
    pi.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", branch)
    pi.keys("o")
    pi.wait_until(f"{TREE_LINES}[{branch + 1}]:find('{BRANCH_IDS[1]}', 1, true) ~= nil")
    pi.keys("o")
    assert tree_lines(pi)[branch] == "    ▸ the rest of this branch"

    # A turn is patched in from its event, without fetching the window again.
    scripted_model.enqueue({"kind": "text", "text": "Answer after 100k"})
    pi.command("Pi A question after 100k entries")
    pi.wait_for("agent_end", timeout_ms=60_000)  # the first model call of the suite may be slow
    new_leaf = pi.request("pi/state")["leafId"]
    pi.wait_until(f"table.concat({TREE_LINES}, '\\n'):find('◉ {new_leaf}', 1, true) ~= nil")
    assert pi.lua("return require('pi.tree').resyncs") == resyncs_before
    assert "assistant: Answer after 100k" in tree_lines(pi)[-1]

    # A lost tree_changed (the label's) shows as a version gap at the next one: a resync.
    pi.lua(
        "local tree = require('pi.tree'); local original = tree.on_tree_changed; "
        "tree.on_tree_changed = function(event, session) tree.on_tree_changed = original end"
    )
    pi.request("pi/label", {"entryId": new_leaf, "label": "after the gap"})
    scripted_model.enqueue({"kind": "text", "text": "Second answer"})
    pi.command("Pi One more")
    pi.wait_for("agent_end", 2)
    pi.wait_until(f"require('pi.tree').resyncs == {resyncs_before + 1}")
    pi.wait_until(f"table.concat({TREE_LINES}, '\\n'):find('[after the gap]', 1, true) ~= nil")
    assert "assistant: Second answer" in tree_lines(pi)[-1]


def test_the_tree_search_jumps_to_a_labelled_entry_of_a_big_session(pi, big_session):
    open_big(pi, big_session)
    pi.lua(
        "local wanted = ...; vim.ui.select = function(items, opts, on_choice) "
        "_G.pi_test.asked = opts.prompt; "
        "for _, item in ipairs(items) do "
        "if item.id == wanted then return on_choice(item) end end end",
        LABELLED,
    )
    pi.command(f"PiTreeSearch {LABEL.lower()}")
    pi.wait_until(f"vim.api.nvim_get_current_line():find('{LABELLED}', 1, true) ~= nil")
    line = pi.lua("return vim.api.nvim_get_current_line()")
    assert line.endswith(f"[{LABEL}]") and message_text(32) in line
    assert pi.lua("return _G.pi_test.asked") == f'2 matches for "{LABEL.lower()}"'
    assert pi.lua("return vim.bo.filetype") == "pi-tree"


def test_the_chat_loads_earlier_pages_of_a_big_session(pi, big_session):
    # As :PiSessions opens a session (without listing every session file first).
    open_big(pi, big_session)
    pi.lua(
        "local chat = require('pi.chat'); chat.clear(); "
        "require('pi.api').messages({ limit = chat.HISTORY_LIMIT }, function(_, result) "
        "chat.history(result) end)"
    )
    last = message_text(ENTRIES - 1)  # earlier tests may have added turns after it
    pi.chat_lines(containing=last)
    assert message_text(ENTRIES - 101) not in pi.chat_lines()
    notice = [line for line in pi.chat_lines() if "earlier entries" in line]
    # Every message and the compaction are entries of the conversation; the tail is the last 100.
    total = pi.request("pi/messages", {"limit": 1})["total"]
    assert total >= ENTRIES + 1
    assert notice == [f"» {total - 100} earlier entries (move up here or press [h to load them)"]

    pi.command("PiEarlier")
    pi.chat_lines(containing=message_text(ENTRIES - 101))
    lines = pi.chat_lines()
    assert lines.index(message_text(ENTRIES - 101)) < lines.index(last)
    assert sum("earlier entries" in line for line in lines) == 1

    # Moving up to the top of the chat loads the next page.
    pi.command("PiChat")
    pi.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid('pi://chat'))")
    pi.keys("gg")
    pi.chat_lines(containing=message_text(ENTRIES - 201))
