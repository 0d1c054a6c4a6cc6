"""Tool cards in the Neovim chat, against the real server: a turn with read, grep, edit and bash
shows the facts (file names, +1 −1 and the diff, the command, its output and exit code), the same
after the session is opened again, no JSON outside the raw folds, and <CR> on a path (a card's,
a search result's, or `path:line` in the answer) opens the file at the line. Code blocks are
highlighted per block: treesitter for a language Neovim has a parser for, else its syntax file."""

from __future__ import annotations

import pytest

from tests.scripted_llm_fixtures import WORK_TURN_ANSWER, WORK_TURN_COMMAND, WORK_TURN_SCRIPT

CARD_LINES = [
    "✓ Read app.py · lines 1–3 of 3 · 32 B",
    "✓ grep return in app.py — 1 result",
    "    app.py:2:     return a - b",
    "✓ Edited app.py +1 −1",
    "    @@ -1,2 +1,2 @@",
    "     def add(a, b):",
    "    -    return a - b",
    "    +    return a + b",
    f"    $ {WORK_TURN_COMMAND}",
    "    │ 1 test failed",
]


def in_chat_window(code: str) -> str:
    return (
        "local window = vim.fn.win_findbuf(require('pi.chat').chat_buffer())[1]\n"
        f"return vim.api.nvim_win_call(window, function() {code} end)"
    )


def json_outside_raw_folds(pi) -> list[str]:
    """The chat's lines that look like JSON (a key, a lone brace) and are not inside a closed
    ``raw arguments`` fold."""
    return pi.lua(
        in_chat_window(
            """
            local outside = {}
            for lnum, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
              if line:find('"%w+": ') or line:match('^%s*[{}]%s*$') then
                local fold = vim.fn.foldclosed(lnum)
                if fold == -1 or vim.fn.getline(fold) ~= '    ▸ raw arguments' then
                  table.insert(outside, line)
                end
              end
            end
            return outside
            """
        )
    )


def press_enter_on(pi, text: str) -> tuple[str, int]:
    """Puts the cursor on the chat's first line holding ``text``, presses <CR> there and returns
    the file and line the window then shows; goes back to the chat."""
    pi.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(require('pi.chat').chat_buffer())[1])")
    pi.lua(
        "local text = ...; for lnum, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false))"
        " do if line:find(text, 1, true) then vim.api.nvim_win_set_cursor(0, { lnum, 0 })"
        " return end end error('not in the chat: ' .. text)",
        text,
    )
    pi.keys("<CR>")
    opened = pi.lua("return { vim.api.nvim_buf_get_name(0), vim.api.nvim_win_get_cursor(0)[1] }")
    pi.command("PiChat")
    return opened[0], opened[1]


ORIGINAL_APP = "def add(a, b):\n    return a - b\n"


@pytest.fixture
def work(pi, scripted_model):
    """The turn run on the shared editor's app.py as the turn expects it, and app.py put back
    afterwards (closed, restored) for the tests that read it."""
    app = pi.workspace / "app.py"
    app.write_text(ORIGINAL_APP)
    scripted_model.enqueue(*WORK_TURN_SCRIPT)
    pi.command("Pi Fix add() and run the tests")
    pi.wait_for("agent_end")
    yield pi
    # <CR> opened app.py: its buffer (which the server reads instead of the disk) goes too
    pi.lua(
        "local path = ...; for _, buffer in ipairs(vim.api.nvim_list_bufs()) do"
        " if vim.api.nvim_buf_get_name(buffer) == path then"
        " vim.api.nvim_buf_delete(buffer, { force = true }) end end",
        str(app),
    )
    app.write_text(ORIGINAL_APP)


def test_a_turn_of_work_shows_as_cards_live_and_replayed(work):
    pi = work
    lines = pi.chat_lines(containing=WORK_TURN_ANSWER)
    for expected in CARD_LINES:
        assert expected in lines, (expected, lines)
    bash = next(line for line in lines if line.startswith("✗ bash "))
    assert bash.startswith(f"✗ bash {WORK_TURN_COMMAND} — exit 1")
    assert lines.index(CARD_LINES[0]) < lines.index(CARD_LINES[3]) < lines.index(bash)
    assert json_outside_raw_folds(pi) == []
    assert lines.count("    ▸ raw arguments") == 4

    session = pi.request("pi/state")["sessionId"]
    pi.command("PiNew")
    pi.wait_until(
        "not table.concat(_G.pi_test.chat_lines(), '\\n'):find('one test still fails', 1, true)"
    )
    pi.lua("require('pi.actions').open_session({ sessionId = ... })", session)
    pi.chat_lines(containing=f"» opened: session {session}")
    replayed = pi.chat_lines(containing=WORK_TURN_ANSWER)
    for expected in CARD_LINES:
        assert expected in replayed, (expected, replayed)
    assert json_outside_raw_folds(pi) == []


def test_enter_on_a_path_opens_the_file_at_the_line(work):
    pi = work
    pi.chat_lines(containing=WORK_TURN_ANSWER)
    app = str(pi.workspace / "app.py")
    assert press_enter_on(pi, "    app.py:2:") == (app, 2), "a search result"
    assert press_enter_on(pi, "✓ Edited app.py") == (app, 2), "an edit's card"
    assert press_enter_on(pi, "✓ Read app.py") == (app, 1), "a read's card"
    assert press_enter_on(pi, WORK_TURN_ANSWER) == (app, 2), "path:line in the answer"
    pi.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(require('pi.chat').chat_buffer())[1])")
    raw = pi.lua("return vim.fn.search('▸ raw arguments', 'w')")
    assert pi.lua(f"return vim.fn.foldclosed({raw})") == raw
    pi.keys("<CR>")
    assert pi.lua(f"return vim.fn.foldclosed({raw})") == -1, "<CR> on a closed fold opens it"


def test_code_blocks_use_treesitter_or_the_syntax_file_per_block(pi, scripted_model):
    answer = (
        "Lua:\n\n```lua\nlocal x = 1\n```\n\nPython:\n\n```python\ndef f():\n    return 1\n```\n"
    )
    scripted_model.enqueue({"kind": "text", "text": answer})
    pi.command("Pi Show code")
    pi.wait_for("agent_end")
    lines = pi.chat_lines(containing="    return 1")
    lua_line = lines.index("local x = 1") + 1
    python_line = lines.index("def f():") + 1
    marks = pi.lua(
        "local buffer, row = require('pi.chat').chat_buffer(), ... - 1\n"
        "local ns = vim.api.nvim_create_namespace('pi-chat-code')\n"
        "local groups = {}\n"
        "for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buffer, ns, { row, 0 }, { row, -1 },"
        " { details = true })) do table.insert(groups, mark[4].hl_group) end\n"
        "return groups",
        lua_line,
    )
    assert "@keyword.lua" in marks, marks
    python_group = pi.lua(
        in_chat_window("return vim.fn.synIDattr(vim.fn.synID(..., 1, 1), 'name')").replace(
            "...", str(python_line)
        )
    )
    assert python_group.startswith("python"), python_group


def test_a_cards_image_and_a_long_diff_fold(pi):
    card = {
        "kind": "read",
        "title": "Read pic.png",
        "status": "done",
        "path": "pic.png",
        "arguments": [{"name": "path", "value": "pic.png"}],
        "rawArguments": '{\n  "path": "pic.png"\n}',
        "images": [{"mimeType": "image/png", "sizeBytes": 2048}],
    }
    edit = {
        "kind": "edit",
        "title": "Edited big.py",
        "status": "done",
        "added": 12,
        "removed": 0,
        "diff": ["@@ -0,0 +1,12 @@", *(f"+line {n}" for n in range(1, 13))],
        "arguments": [],
        "rawArguments": "{}",
    }
    lines = pi.lua("return require('pi.cards').render(...).lines", card)
    assert "    [image: image/png, 2.0 KB]" in lines
    built = pi.lua(
        "local built = require('pi.cards').render(...)"
        " return { lines = built.lines, folds = built.folds }",
        edit,
    )
    assert built["lines"][1:9] == ["    @@ -0,0 +1,12 @@", *(f"    +line {n}" for n in range(1, 8))]
    assert built["lines"][9] == "    ▸ 5 more diff lines"
    assert built["folds"] == [{"start": 10, "stop": 15}]
