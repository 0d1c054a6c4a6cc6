"""The session commands: :PiNew, :PiFork, :PiSessions, :PiModel, :PiNavigate and :Pi alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.editors.neovim.test_tree import BRANCH_SUMMARY, two_turns


def state(pi) -> dict:
    return pi.request("pi/state")


def wait_for_state(pi, key: str, condition: str) -> None:
    """Waits until pi/state's ``key`` satisfies the Lua ``condition`` on ``value``."""
    pi.wait_until(
        "(function() local r = vim.lsp.get_clients({ name = 'pi' })[1]:request_sync('pi/state', "
        f"vim.empty_dict(), 5000) local value = r and r.result.{key} return {condition} end)()"
    )


def test_pi_without_text_opens_the_prompt_input_in_insert_mode(pi):
    pi.command("Pi")
    assert pi.lua("return vim.bo.filetype") == "pi-prompt"
    assert pi.lua("return vim.api.nvim_get_mode().mode") == "i"
    pi.leave_insert()


def test_pi_new_starts_an_empty_named_session_and_clears_the_chat(pi, scripted_model):
    scripted_model.enqueue({"kind": "text", "text": "Old answer"})
    pi.command("Pi Old question")
    pi.wait_for("agent_end")
    before = state(pi)["sessionId"]
    pi.command("PiNew refactoring")
    wait_for_state(pi, "sessionId", f"value ~= '{before}'")
    assert state(pi)["messageCount"] == 0
    lines = pi.chat_lines(containing="» new session")
    assert "Old question" not in lines and lines[-1].startswith("» new session: session ")


def test_pi_fork_without_an_id_forks_at_the_leaf(pi, scripted_model):
    two_turns(pi, scripted_model)
    before, files = state(pi), pi.session_files()
    pi.command("PiFork")
    wait_for_state(pi, "sessionId", f"value ~= '{before['sessionId']}'")
    after = state(pi)
    assert after["messageCount"] == before["messageCount"] == 4
    assert len(pi.session_files()) == len(files) + 1


def test_pi_right_after_pi_fork_prompts_the_fork(pi, scripted_model):
    two_turns(pi, scripted_model)
    before = state(pi)
    scripted_model.enqueue({"kind": "text", "text": "Going on in the fork"})
    # Back to back, as a mapping `:PiFork<CR>:Pi go on<CR>` or a script issues them.
    pi.nvim.api.exec2("PiFork\nPi go on after the fork", {})
    pi.wait_for("agent_end", 3)
    pi.chat_lines(containing="» forked into ")
    after = state(pi)
    assert after["sessionId"] != before["sessionId"] and after["messageCount"] == 6
    prompts = [
        entry["message"]["content"][0]["text"]
        for entry in pi.session_entries()
        if entry["type"] == "message" and entry["message"]["role"] == "user"
    ]
    assert prompts == ["First question", "Second question", "go on after the fork"]
    assert "go on after the fork" not in Path(before["path"]).read_text()


def test_pi_fork_of_an_empty_session_says_so(pi):
    before, files = state(pi), pi.session_files()
    pi.command("PiFork")
    note = pi.wait_for_note("WARN")
    assert note["message"].startswith("pi: pi/fork failed: ") and "empty" in note["message"]
    assert state(pi)["sessionId"] == before["sessionId"] and pi.session_files() == files


def test_pi_navigate_with_bang_summarizes_the_branch(pi, scripted_model):
    two_turns(pi, scripted_model)
    tree = pi.request("pi/tree")
    first_answer = next(
        e for e in tree["entries"] if e["type"] == "message" and e["preview"] == "Answer 1"
    )
    scripted_model.enqueue({"kind": "text", "text": BRANCH_SUMMARY})
    pi.command(f"PiNavigate! {first_answer['id']}")
    # Shown once the leaf moved onto the summary (the line it waited for before is no line of the
    # plugin's: the test went on after the wait's 15 s).
    pi.chat_lines(containing="» summarized the branch left behind, entry ")
    leaf = state(pi)["leafId"]
    entries = {e["id"]: e for e in pi.request("pi/tree")["entries"]}
    assert (
        entries[leaf]["type"] == "branch_summary"
        and entries[leaf]["parentId"] == first_answer["id"]
    )


def test_pi_navigate_to_an_unknown_entry_reports_the_error(pi):
    pi.command("PiNavigate 00000000")
    note = pi.wait_for_note("WARN")
    assert note["message"].startswith("pi: pi/navigate failed: ") and note["level"] == pi.lua(
        "return vim.log.levels.ERROR"
    )


def test_pi_sessions_opens_the_picked_session_with_its_conversation(pi, scripted_model):
    scripted_model.enqueue(
        {"kind": "tool_calls", "calls": [["call_1", "bash", {"command": "echo kept output"}]]},
        {"kind": "text", "text": "Kept answer"},
    )
    pi.command("Pi Remember this session")
    pi.wait_for("agent_end")
    wanted = state(pi)["sessionId"]
    pi.command("PiNew")
    wait_for_state(pi, "sessionId", f"value ~= '{wanted}'")
    pi.lua(
        "local wanted = ...; vim.ui.select = function(items, opts, on_choice)"
        " for _, item in ipairs(items) do if item.id == wanted then _G.pi_test.shown = "
        "opts.format_item(item) return on_choice(item) end end end",
        wanted,
    )
    pi.command("PiSessions")
    wait_for_state(pi, "sessionId", f"value == '{wanted}'")
    assert "Remember this session" in pi.lua("return _G.pi_test.shown")
    lines = pi.chat_lines(containing="Kept answer")
    opened = lines.index(f"» opened: session {wanted}")
    history = lines[opened + 1 :]
    assert history[history.index("## You") + 1] == "Remember this session", history
    assert any(line.startswith("✓ bash echo kept output — exit 0") for line in history), history
    assert "    │ kept output" in history
    assert history.index("## pi") < history.index("Kept answer")


def test_pi_model_sets_the_model(pi, scripted_model):
    pi.command("PiModel openai/scripted-2")
    wait_for_state(pi, "model", "value and value.model == 'openai/scripted-2'")
    pi.command("PiModel openai/scripted")
    wait_for_state(pi, "model", "value and value.model == 'openai/scripted'")


def test_pi_navigate_completes_the_ids_of_the_tree(pi, scripted_model):
    two_turns(pi, scripted_model)
    pi.command("PiTree")
    ids = [e["id"] for e in pi.request("pi/tree")["entries"]]
    pi.wait_until(f"#require('pi.tree').entry_ids() == {len(ids)}")
    assert sorted(pi.lua("return vim.fn.getcompletion('PiNavigate ', 'cmdline')")) == sorted(ids)
    first = ids[1]
    assert first in pi.lua("return vim.fn.getcompletion(..., 'cmdline')", f"PiFork {first[:3]}")


def test_pi_bang_steers_the_running_turn(pi, scripted_model):
    scripted_model.enqueue(
        {"kind": "tool_calls", "calls": [["call_1", "bash", {"command": "sleep 2; echo done"}]]},
        {"kind": "text", "text": "Steered answer."},
    )
    pi.command("Pi Run the slow command")
    pi.wait_for("tool_execution_start")
    pi.command("Pi! Also mention the steering")
    pi.wait_for("agent_end")
    lines = pi.chat_lines(containing="Steered answer.")
    assert "Also mention the steering" in lines
    assert pi.lua("return _G.pi_test.count('agent_end')") == 1, (
        "the steering prompt ran a turn of its own"
    )
    assert "Also mention the steering" in str(scripted_model.requests()[-1]["messages"])


def test_pi_search_finds_another_session_and_enter_opens_it_at_the_entry(pi, scripted_model):
    scripted_model.enqueue({"kind": "text", "text": "Noted the canary phrase"})
    pi.command("Pi The zebra crossing protocol is final")
    pi.wait_for("agent_end")
    wanted = state(pi)["sessionId"]
    entry = next(
        e["id"] for e in pi.request("pi/tree")["entries"] if "zebra crossing" in e["preview"]
    )
    pi.command("PiNew")
    wait_for_state(pi, "sessionId", f"value ~= '{wanted}'")
    pi.wait_until(
        "(function() local r = vim.lsp.get_clients({ name = 'pi' })[1]:request_sync("
        "'pi/searchSessions', { query = 'zebra crossing' }, 5000)"
        " return r and r.result and r.result.total >= 1 end)()"
    )
    pi.command('PiSearch "zebra crossing"')
    pi.wait_until("vim.bo.buftype == 'quickfix'")
    items = pi.lua("return vim.fn.getloclist(0)")
    assert len(items) == 1 and "zebra crossing" in items[0]["text"], items
    pi.keys("<CR>")
    wait_for_state(pi, "sessionId", f"value == '{wanted}'")
    pi.wait_until("vim.bo.filetype == 'pi-tree'")
    pi.wait_until(f"require('pi.tree').entry_under_cursor() == '{entry}'")
    pi.assert_no_lua_errors()


def test_pi_sessions_renames_exports_and_deletes_the_picked_session(pi, scripted_model):
    scripted_model.enqueue({"kind": "text", "text": "Answer to keep"})
    pi.command("Pi A session to export then delete")
    pi.wait_for("agent_end")
    wanted = state(pi)
    pi.command("PiNew")
    wait_for_state(pi, "sessionId", f"value ~= '{wanted['sessionId']}'")
    pi.lua(
        "local wanted = ...; vim.ui.select = function(items, opts, on_choice)"
        " for _, item in ipairs(items) do if item == 'markdown' or (type(item) == 'table'"
        " and item.id == wanted) then return on_choice(item) end end end;"
        " vim.fn.confirm = function() return 1 end;"
        " vim.ui.input = function(opts, on_confirm) on_confirm('  Renamed in Neovim ') end",
        wanted["sessionId"],
    )
    pi.command("PiSessions rename")
    pi.wait_until(
        "(function() local r = vim.lsp.get_clients({ name = 'pi' })[1]:request_sync("
        "'pi/sessions', vim.empty_dict(), 5000)"
        " for _, s in ipairs(r and r.result and r.result.sessions or {}) do"
        " if s.name == 'Renamed in Neovim' then return true end end return false end)()"
    )
    names = {info["id"]: info["name"] for info in pi.request("pi/sessions")["sessions"]}
    assert names[wanted["sessionId"]] == "Renamed in Neovim"  # the picked one, trimmed
    pi.command("PiSessions export")
    exported = pi.workspace / f"pi-session-{wanted['sessionId']}.md"
    pi.wait_until(f"vim.uv.fs_stat({str(exported)!r}) ~= nil")
    assert "A session to export then delete" in exported.read_text()
    pi.command("PiSessions delete")
    pi.wait_until(f"vim.uv.fs_stat({wanted['path']!r}) == nil")
    assert all(info["id"] != wanted["sessionId"] for info in pi.request("pi/sessions")["sessions"])


# Stand-ins with the API :PiSearch calls: telescope.nvim (with plenary.nvim) and fzf-lua are
# published on GitHub and luarocks only, which the project's machines and CI cannot reach; Debian
# packages the fzf binary but neither plugin, and npm and PyPI carry neither.
FZF_STUB = """
_G.pi_test.fzf = nil
package.loaded['fzf-lua'] = { fzf_exec = function(lines, opts)
  _G.pi_test.fzf = { lines = lines, prompt = opts.prompt }
  opts.actions.default({ lines[1] })
end }
"""

TELESCOPE_STUB = """
local chosen, results
package.loaded['telescope'] = {}
package.loaded['telescope.actions.state'] = {
  get_selected_entry = function() return results[1] end,
}
package.loaded['telescope.finders'] = { new_table = function(spec)
  return { results = vim.tbl_map(spec.entry_maker, spec.results) }
end }
package.loaded['telescope.config'] = { values = { generic_sorter = function() return {} end } }
package.loaded['telescope.actions'] = {
  close = function() end,
  select_default = { replace = function(_, fn) chosen = fn end },
}
package.loaded['telescope.pickers'] = { new = function(_, spec)
  return { find = function()
    results = spec.finder.results
    _G.pi_test.telescope = { title = spec.prompt_title, shown = results[1].display }
    spec.attach_mappings(0)
    chosen()
  end }
end }
"""

UNSTUB = """
for _, name in ipairs({ 'fzf-lua', 'telescope', 'telescope.finders', 'telescope.config',
  'telescope.actions', 'telescope.pickers', 'telescope.actions.state' }) do
  package.loaded[name] = nil
end
"""


@pytest.mark.parametrize(("stub", "shown"), [(FZF_STUB, "fzf"), (TELESCOPE_STUB, "telescope")])
def test_pi_search_uses_fzf_lua_or_telescope_when_installed(pi, scripted_model, stub, shown):
    scripted_model.enqueue({"kind": "text", "text": "Noted the walrus"})
    pi.command(f"Pi The walrus {shown} protocol")
    pi.wait_for("agent_end")
    wanted = state(pi)["sessionId"]
    pi.command("PiNew")
    wait_for_state(pi, "sessionId", f"value ~= '{wanted}'")
    pi.wait_until(
        "(function() local r = vim.lsp.get_clients({ name = 'pi' })[1]:request_sync("
        f"'pi/searchSessions', {{ query = 'walrus {shown}' }}, 5000)"
        " return r and r.result and r.result.total >= 1 end)()"
    )
    pi.lua(stub)
    try:
        pi.command(f"PiSearch walrus {shown}")
        wait_for_state(pi, "sessionId", f"value == '{wanted}'")
        assert f"walrus {shown}" in json.dumps(pi.lua(f"return _G.pi_test.{shown}"))
    finally:
        pi.lua(UNSTUB)
    pi.assert_no_lua_errors()
