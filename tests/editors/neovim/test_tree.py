"""The tree buffer: the session tree with the active path and the leaf marked, and its keys —
navigate, navigate with a summary (and instructions), fork, label."""

from __future__ import annotations

import re
from pathlib import Path

from pi_lsp.session.session import Session

BRANCH_SUMMARY = "## Goal\nTry the second approach\n\n## Progress\n### Done\n- [x] Asked twice"
ENTRY_LINE = re.compile(
    r"^\s*([◉●○]) ([0-9a-f]{8}) (\S+)(?: \((removed from context|replaced in context)\))?: (.*?)"
    r"(?:  \[(.*)\])?$"
)


def two_turns(pi, scripted_model) -> None:
    for index, question in enumerate(["First question", "Second question"]):
        scripted_model.enqueue({"kind": "text", "text": f"Answer {index + 1}"})
        pi.command(f"Pi {question}")
        pi.wait_for("agent_end", index + 1)


def open_tree(pi) -> list[dict]:
    """Opens the tree and returns its entry lines parsed (mark, id, kind, preview, label) once the
    tree it fetches is drawn: a tree buffer shown before already holds rows, maybe the same."""
    leaf = pi.request("pi/state")["leafId"]
    drawn = pi.lua(
        "local buffer = vim.fn.bufnr('pi://tree') "
        "return buffer == -1 and -1 or vim.b[buffer].changedtick"
    )
    pi.command("PiTree")
    pi.wait_until(
        f"vim.b.changedtick > {drawn} and table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, "
        f"false), '\\n'):find('◉ {leaf}', 1, true) ~= nil"
    )
    return tree_rows(pi)


def tree_rows(pi) -> list[dict]:
    rows = []
    for lnum, line in enumerate(
        pi.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), start=1
    ):
        match = ENTRY_LINE.match(line)
        if match:
            mark, entry_id, kind, edited, preview, label = match.groups()
            rows.append(
                {
                    "lnum": lnum,
                    "mark": mark,
                    "id": entry_id,
                    "kind": kind,
                    "edited": edited,
                    "preview": preview,
                    "label": label,
                }
            )
    return rows


def row(rows: list[dict], kind: str, preview: str) -> dict:
    [found] = [r for r in rows if r["kind"] == kind and r["preview"] == preview]
    return found


def press_on(pi, entry: dict, keys: str) -> None:
    pi.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", entry["lnum"])
    pi.keys(keys)


def wait_for_leaf(pi, leaf_id: str) -> None:
    pi.wait_until(
        f"(function() local r = vim.lsp.get_clients({{ name = 'pi' }})[1]:request_sync('pi/state', "
        f"vim.empty_dict(), 5000) return r and r.result.leafId == '{leaf_id}' end)()"
    )


def test_the_tree_marks_the_active_path_and_the_leaf(pi, scripted_model):
    two_turns(pi, scripted_model)
    rows = open_tree(pi)
    assert pi.lua("return vim.bo.filetype") == "pi-tree"
    messages = [(r["kind"], r["preview"]) for r in rows if r["kind"] in ("user", "assistant")]
    assert messages == [
        ("user", "First question"),
        ("assistant", "Answer 1"),
        ("user", "Second question"),
        ("assistant", "Answer 2"),
    ]
    leaf = pi.request("pi/state")["leafId"]
    assert [r["id"] for r in rows if r["mark"] == "◉"] == [leaf]
    assert row(rows, "assistant", "Answer 2")["id"] == leaf
    assert all(r["mark"] == "●" for r in rows if r["id"] != leaf)


def stub_input(pi, answer: str) -> None:
    """vim.ui.input answers ``answer`` (and records its prompt), as a user typing it would."""
    pi.lua(
        "_G.pi_test.answer = ...; vim.ui.input = function(opts, on_confirm) "
        "_G.pi_test.asked = opts.prompt; on_confirm(_G.pi_test.answer) end",
        answer,
    )


def test_enter_navigates_to_the_entry(pi, scripted_model):
    two_turns(pi, scripted_model)
    rows = open_tree(pi)
    target = row(rows, "assistant", "Answer 1")
    press_on(pi, target, "<CR>")
    wait_for_leaf(pi, target["id"])
    pi.wait_until(f"vim.api.nvim_get_current_line():find('◉ {target['id']}', 1, true) ~= nil")
    rows = tree_rows(pi)
    assert row(rows, "assistant", "Answer 1")["mark"] == "◉"
    assert {
        row(rows, "user", "Second question")["mark"],
        row(rows, "assistant", "Answer 2")["mark"],
    } == {"○"}


def test_s_navigates_with_a_summary_and_puts_the_user_message_into_the_prompt(pi, scripted_model):
    two_turns(pi, scripted_model)
    rows = open_tree(pi)
    answer_1, question_2 = row(rows, "assistant", "Answer 1"), row(rows, "user", "Second question")
    scripted_model.enqueue({"kind": "text", "text": BRANCH_SUMMARY})
    press_on(pi, question_2, "s")
    pi.wait_until("require('pi.chat').prompt_text() == 'Second question'")
    assert pi.lua("return #vim.fn.win_findbuf(require('pi.chat').prompt_buffer())") == 1, (
        "the prompt input is not shown"
    )
    assert pi.lua("return vim.bo.filetype") == "pi-tree", "the tree lost the focus"
    pi.wait_until(
        "#vim.tbl_filter(function(l) return l:find('branch_summary', 1, "
        "true) end, vim.api.nvim_buf_get_lines(0, 0, -1, false)) == 1"
    )
    rows = tree_rows(pi)
    [summary] = [r for r in rows if r["kind"] == "branch_summary"]
    assert summary["mark"] == "◉" and pi.request("pi/state")["leafId"] == summary["id"]
    assert row(rows, "assistant", "Answer 1")["mark"] == "●"
    pi.wait_until("_G.pi_test.count('branch_summary_end') == 1")
    pi.chat_lines("summarizing the branch being left")
    pi.chat_lines("summarized the branch left behind, entry " + summary["id"])
    assert {
        row(rows, "user", "Second question")["mark"],
        row(rows, "assistant", "Answer 2")["mark"],
    } == {"○"}
    entries = {entry["id"]: entry for entry in pi.session_entries()}
    assert (
        entries[summary["id"]]["parentId"] == answer_1["id"]
        and "## Goal\nTry the second approach" in entries[summary["id"]]["summary"]
    )


def test_capital_s_asks_for_instructions_for_the_summary(pi, scripted_model):
    two_turns(pi, scripted_model)
    rows = open_tree(pi)
    stub_input(pi, "Focus on the second approach")
    scripted_model.enqueue({"kind": "text", "text": BRANCH_SUMMARY})
    press_on(pi, row(rows, "assistant", "Answer 1"), "S")
    pi.wait_until(
        "#vim.tbl_filter(function(l) return l:find('branch_summary', 1, "
        "true) end, vim.api.nvim_buf_get_lines(0, 0, -1, false)) == 1"
    )
    assert pi.lua("return _G.pi_test.asked") == "Summary instructions: "
    assert "Focus on the second approach" in str(scripted_model.requests()[-1]["messages"])


def test_f_forks_a_new_session_file_at_the_entry(pi, scripted_model):
    two_turns(pi, scripted_model)
    before_files, before_session = pi.session_files(), pi.request("pi/state")["sessionId"]
    rows = open_tree(pi)
    press_on(pi, row(rows, "assistant", "Answer 1"), "f")
    pi.wait_until(
        f"(function() local r = vim.lsp.get_clients({{ name = 'pi' }})[1]:request_sync('pi/state', "
        f"vim.empty_dict(), 5000) return r and r.result.sessionId ~= '{before_session}' end)()"
    )
    [new_file] = set(pi.session_files()) - set(before_files)
    forked = [line for line in new_file.read_text().splitlines() if '"type":"message"' in line]
    assert len(forked) == 2 and "Answer 1" in forked[-1]
    assert any(
        line.startswith("» forked into ") for line in pi.chat_lines(containing="» forked into")
    )
    pi.wait_until(
        "#vim.tbl_filter(function(l) return l:find('Second question', 1, "
        "true) end, vim.api.nvim_buf_get_lines(0, 0, -1, false)) == 0"
    )


def test_l_labels_the_entry(pi, scripted_model):
    two_turns(pi, scripted_model)
    rows = open_tree(pi)
    stub_input(pi, "checkpoint")
    press_on(pi, row(rows, "user", "First question"), "l")
    pi.wait_until(
        "#vim.tbl_filter(function(l) return l:find('[checkpoint]', 1, "
        "true) end, vim.api.nvim_buf_get_lines(0, 0, -1, false)) == 1"
    )
    assert row(tree_rows(pi), "user", "First question")["label"] == "checkpoint"
    assert pi.lua("return _G.pi_test.asked") == "Label (empty clears): "


def test_a_session_with_context_edits_shows_what_they_did_in_the_tree_and_the_chat(pi):
    """A session pi 1.6 edited: the secret the user left out is marked in the tree and the chat."""
    session_dir = Path(pi.request("pi/state")["path"]).parent
    with Session.create(session_dir, str(pi.workspace)) as written:
        secret = written.append_message(
            {"role": "user", "content": "My key is sk-live-1", "timestamp": 1}
        )
        written.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "Noted"}],
                "provider": "openai",
                "model": "scripted",
                "stopReason": "stop",
                "timestamp": 2,
            }
        )
        written.append_raw({"type": "context_edit", "targetId": secret, "replacement": None})
        written.append_message({"role": "user", "content": "Carry on", "timestamp": 3})
        wanted = written.id
    pi.lua(
        "local wanted = ...; vim.ui.select = function(items, opts, on_choice)"
        " for _, item in ipairs(items) do if item.id == wanted then return on_choice(item) end end"
        " end",
        wanted,
    )
    pi.command("PiSessions")
    lines = pi.chat_lines(containing="Carry on")
    note = (
        "» removed from the context: the model no longer sees the message above"
        " (it stays in the session file)"
    )
    assert lines[lines.index("My key is sk-live-1") + 2] == note, lines
    rows = open_tree(pi)
    assert row(rows, "user", "My key is sk-live-1")["edited"] == "removed from context"
    assert row(rows, "context_edit", "removed from context: My key is sk-live-1")["edited"] is None
    assert [r["edited"] for r in rows if r["preview"] in ("Noted", "Carry on")] == [None, None]


def test_a_reopened_tree_starts_at_the_leaf_and_its_fetch_leaves_the_cursor_where_the_user_put_it(
    pi, scripted_model
):
    """The tree window shows the rows it had at once (the cursor on the leaf) while it fetches the
    tree again; that fetch arriving does not move a cursor the user has moved meanwhile."""
    two_turns(pi, scripted_model)
    rows = open_tree(pi)
    pi.command("close")
    leaf, target = row(rows, "assistant", "Answer 2"), row(rows, "user", "First question")
    start, after_fetch = pi.lua(
        """
        local target = ...
        local buffer = vim.fn.bufnr('pi://tree')
        local drawn = vim.b[buffer].changedtick
        vim.cmd('PiTree')
        local start = vim.api.nvim_win_get_cursor(0)[1]
        vim.api.nvim_win_set_cursor(0, { target, 0 })
        local fetched = vim.wait(15000, function() return vim.b[buffer].changedtick > drawn end, 10)
        return { start, fetched and vim.api.nvim_win_get_cursor(0)[1] }
        """,
        target["lnum"],
    )
    assert start == leaf["lnum"]
    assert after_fetch == target["lnum"]
