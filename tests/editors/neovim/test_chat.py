"""The chat buffer against the real server and the scripted model: streamed answers with folded
thinking, tool calls, the prompt input, abort, compaction and the statusline component."""

from __future__ import annotations

import re

SUMMARY = (
    "## Goal\nFix add() in app.py\n\n## Progress\n### Done\n- [x] Read app.py\n\n"
    "## Next Steps\n1. Run the tests"
)


def chat_window_lua(code: str) -> str:
    """Lua that runs ``code`` (an expression) inside the chat window."""
    return (
        "local window = vim.fn.win_findbuf(require('pi.chat').chat_buffer())[1]\n"
        f"return vim.api.nvim_win_call(window, function() return {code} end)"
    )


def test_prompt_streams_the_answer_with_thinking_folded(pi, scripted_model):
    scripted_model.enqueue(
        {
            "kind": "text",
            "text": "Hello from the scripted model.",
            "chunks": 4,
            "reasoning": "The user greets me.",
        }
    )
    pi.command("Pi Say hello")
    pi.wait_for("agent_end")
    lines = pi.chat_lines(containing="Hello from the scripted model.")
    assert pi.lua("return vim.bo[require('pi.chat').chat_buffer()].filetype") == "pi-chat"
    assert lines[:2] == ["## You", "Say hello"]
    assert "## pi" in lines and "Hello from the scripted model." in lines
    thinking = lines.index("▸ thinking (19 chars)") + 1
    assert lines[thinking] == "> The user greets me."
    assert pi.lua(chat_window_lua(f"vim.fn.foldclosed({thinking + 1})")) == thinking, (
        "the thinking is not folded"
    )
    assert pi.lua(chat_window_lua(f"vim.fn.foldclosed({thinking + 3})")) == -1, (
        "the answer is folded"
    )


def test_a_tool_call_is_a_card_with_its_content_folded(pi, scripted_model):
    scripted_model.enqueue(
        {"kind": "tool_calls", "calls": [["call_1", "read", {"path": "app.py"}]]},
        {"kind": "text", "text": "add() subtracts."},
    )
    pi.command("Pi What does add do?")
    pi.wait_for("agent_end")
    lines = pi.chat_lines(containing="add() subtracts.")
    card = lines.index("✓ Read app.py · lines 1–3 of 3 · 32 B")
    assert lines[card + 1 : card + 4] == [
        "    ▸ content (2 lines)",
        "    def add(a, b):",
        "        return a - b",
    ]
    assert pi.lua(chat_window_lua(f"vim.fn.foldclosed({card + 3})")) == card + 2, (
        "the content is not folded"
    )
    assert lines.count("## pi") == 1, "a tool round repeated the assistant header"


def test_a_running_command_shows_its_output_live_then_its_result(pi, scripted_model):
    command = "echo building one; sleep 1.5; echo building two; sleep 1.5"
    scripted_model.enqueue(
        {"kind": "tool_calls", "calls": [["call_1", "bash", {"command": command}]]},
        {"kind": "text", "text": "Built."},
    )
    pi.command("Pi Build it")
    live = pi.chat_lines(containing="    │ building one")
    assert f"◌ bash {command}" in live
    assert "    │ building two" not in live, "the output came at the end, not while it ran"
    pi.wait_for("agent_end")
    lines = pi.chat_lines(containing="Built.")
    assert not any(line.startswith("◌") for line in lines), "the running card stayed"
    header = next(index for index, line in enumerate(lines) if line.startswith("✓ bash echo"))
    assert lines[header].startswith(f"✓ bash {command} — exit 0 · ")
    assert lines[header + 1 : header + 4] == [
        f"    $ {command}",
        "    │ building one",
        "    │ building two",
    ]
    assert lines.count("    │ building one") == 1, "the live output stayed after the result"


def test_the_prompt_input_sends_with_enter(pi, scripted_model):
    scripted_model.enqueue({"kind": "text", "text": "Sent from the input."})
    pi.command("PiChat")
    assert pi.lua("return vim.bo.filetype") == "pi-prompt"
    pi.lua("require('pi.chat').set_prompt_text('Typed in the prompt input')")
    pi.keys("<CR>")
    pi.wait_for("agent_end")
    lines = pi.chat_lines(containing="Sent from the input.")
    assert "Typed in the prompt input" in lines
    assert pi.lua("return require('pi.chat').prompt_text()") == ""


def start_a_slow_turn(pi, scripted_model) -> None:
    """A turn streaming ten words over 3 s, under way when this returns."""
    scripted_model.enqueue(
        {
            "kind": "slow_text",
            "text": "one two three four five six seven eight nine ten",
            "chunks": 10,
            "chunk_delay": 0.3,
        }
    )
    pi.command("Pi Count slowly")
    pi.wait_for("text_delta")


def test_abort_stops_the_turn(pi, scripted_model):
    start_a_slow_turn(pi, scripted_model)
    pi.command("PiAbort")
    pi.wait_for("agent_end")
    ends = [event for event in pi.lua("return _G.pi_test.events") if event["type"] == "agent_end"]
    assert ends[0]["stopReason"] == "aborted"
    assert "» aborted" in pi.chat_lines(containing="» aborted")
    answer = [entry["message"] for entry in pi.session_entries() if entry["type"] == "message"][-1]
    assert answer["role"] == "assistant" and answer["stopReason"] == "aborted"


def test_compact_from_the_command_writes_a_compaction_entry(pi, scripted_model):
    for index in range(3):
        scripted_model.enqueue(
            {"kind": "text", "text": f"Answer number {index}: " + "details " * 30}
        )
        pi.command(f"Pi Question number {index}: " + "context " * 30)
        pi.wait_for("agent_end", index + 1)
    scripted_model.enqueue({"kind": "text", "text": SUMMARY})
    pi.command("PiCompact Keep the file names")
    pi.wait_for("compaction_end")
    lines = pi.chat_lines(containing="» compacted")
    assert "» compacting the session (manual)…" in lines
    assert any(
        re.match(r"» compacted \(.* tokens summarized\), entry [0-9a-f]{8}$", line)
        for line in lines
    ), lines
    # The card: why, the tokens before → after, the model, then the summary folded.
    [facts] = [line for line in lines if line.startswith("    why: asked for, tokens ")]
    assert re.search(r"tokens [0-9.k]+ → [0-9.k]+, by openai/scripted", facts), facts
    goal = lines.index("    ## Goal")
    assert pi.lua(chat_window_lua(f"vim.fn.foldclosed({goal + 1})")) != -1, "the summary is open"
    compactions = [entry for entry in pi.session_entries() if entry["type"] == "compaction"]
    assert len(compactions) == 1 and compactions[0]["summary"].startswith("## Goal")
    assert "Keep the file names" in str(scripted_model.requests()[-1]["messages"])


def test_statusline_shows_the_context_usage_after_a_turn(pi, scripted_model):
    scripted_model.enqueue({"kind": "text", "text": "Short answer."})
    pi.command("Pi Hi")
    pi.wait_for("agent_end")
    pi.wait_until("require('pi').statusline():find('%(') ~= nil")
    status = pi.lua("return require('pi').statusline()")
    # The window is 100000 with 100 reserved (conftest): automatic compaction starts at 99.9 %.
    assert re.fullmatch(r"pi \d+(\.\d)?k?/100k \(\d+%%, compacts at 100%%\)", status), status
    window = pi.lua("return vim.fn.win_findbuf(require('pi.chat').chat_buffer())[1]")
    shown = pi.lua(
        "local w = ...; return "
        # as wide as a chat split of a 200-column editor; the test's 80 columns would cut it
        "vim.api.nvim_eval_statusline(vim.wo[w].statusline, { winid = w, maxwidth = 80 }).str",
        window,
    )
    assert "pi-chat" in shown and status.replace("%%", "%") in shown, shown


def test_a_transient_provider_error_shows_a_retry_notice(pi, scripted_model):
    scripted_model.enqueue(
        {"kind": "error", "status": 500, "message": "Upstream hiccup"},
        {"kind": "text", "text": "Answer after the retry."},
    )
    pi.command("Pi Try again")
    pi.wait_for("agent_end")
    lines = pi.chat_lines(containing="Answer after the retry.")
    retries = [line for line in lines if line.startswith("» retry 1/")]
    assert len(retries) == 1 and "Upstream hiccup" in retries[0], lines


def test_the_chat_keymaps_abort_and_compact(pi, scripted_model):
    start_a_slow_turn(pi, scripted_model)
    pi.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(require('pi.chat').chat_buffer())[1])")
    pi.keys("<C-c>")
    pi.wait_for("agent_end")
    assert [
        e["stopReason"] for e in pi.lua("return _G.pi_test.events") if e["type"] == "agent_end"
    ] == ["aborted"]
    pi.keys("gC")
    note = pi.wait_for_note("WARN")
    assert (
        note["level"] == pi.lua("return vim.log.levels.WARN")
        and "compact" in note["message"].lower()
    ), note


def test_a_failed_compaction_shows_why_and_leaves_the_session_unchanged(pi, scripted_model):
    for index in range(3):
        scripted_model.enqueue(
            {"kind": "text", "text": f"Answer number {index}: " + "details " * 30}
        )
        pi.command(f"Pi Question number {index}: " + "context " * 30)
        pi.wait_for("agent_end", index + 1)
    before = pi.session_entries()
    scripted_model.enqueue(
        {"kind": "error", "status": 400, "message": "Summaries are not allowed today"}
    )
    pi.command("PiCompact")
    pi.wait_for("compaction_end")
    lines = pi.chat_lines(containing="» compaction failed")
    assert any(
        line.startswith("» compaction failed, the session is unchanged: ")
        and "Summaries are not allowed today" in line
        for line in lines
    ), lines
    note = pi.wait_for_note("ERROR")
    assert note["message"].startswith("pi: pi/compact failed: "), note
    assert pi.session_entries() == before


def test_statusline_shows_the_session_cost_and_its_cached_share(pi, scripted_model):
    pi.request("pi/setModel", {"model": "openai/gpt-4o"})  # a priced model, same scripted server
    usage = {
        "prompt_tokens": 4000,
        "completion_tokens": 100,
        "prompt_tokens_details": {"cached_tokens": 3000},
    }
    scripted_model.enqueue({"kind": "text", "text": "A cached answer.", "usage": usage})
    pi.command("Pi Hi")
    pi.wait_for("agent_end")
    pi.wait_until("require('pi').statusline():find('cached') ~= nil")
    status = pi.lua("return require('pi').statusline()")
    # gpt-4o: 1000 input, 3000 cache-read and 100 output tokens cost $0.00725.
    assert re.fullmatch(
        r"pi \d+(\.\d)?k?/100k \(\d+%%, compacts at \d+%%\) \$0\.007 \(75%% cached\)", status
    ), status


def test_the_chat_shown_while_a_shorter_conversation_replaces_it_raises_no_highlighting_error(pi):
    """Opening another session with the chat open empties the chat and draws the other
    conversation. The chat stays highlighted as markdown, and no redraw meanwhile fails (Neovim's
    treesitter highlighter, while it parses a long buffer in the background, draws from its tree
    of the text before: "Invalid 'end_col': out of range" when the buffer got shorter)."""

    def conversation(last_lines: int) -> dict:
        entries = []
        for index in range(300):
            for role in ("user", "assistant"):
                lines = 5 if index < 299 or role == "user" else last_lines
                text = "\n".join([f"A *long* line number {index}, " + "word " * 12] * lines)
                content = [{"type": "text", "text": text}]
                entries.append({"type": "message", "message": {"role": role, "content": content}})
        return {"entries": entries, "total": len(entries)}

    pi.lua(
        """
        local before, after = ...
        local chat = require('pi.chat')
        chat.open()
        chat.history(before)
        -- Redrawn until the first conversation is highlighted (its parse done).
        for _ = 1, 20 do vim.cmd('redraw'); vim.wait(50, function() return false end) end
        chat.clear()
        chat.history(after)
        vim.cmd('redraw')
        """,
        conversation(5),
        conversation(4),
    )
    # An error in a redraw is shown once Neovim is back in its main loop, after that call.
    messages = pi.lua("return vim.api.nvim_exec2('messages', { output = true }).output")
    assert "out of range" not in messages and "stack traceback" not in messages, messages
    header_highlights = pi.lua(
        "local buffer = require('pi.chat').chat_buffer()\n"
        "local lnum = vim.api.nvim_buf_call(buffer, function() "
        "return vim.fn.search('^## pi', 'nw') end)\n"
        "local shown = vim.inspect_pos(buffer, lnum - 1, 0)\n"
        "local names = vim.tbl_map(function(item) return item.hl_group end, shown.syntax)\n"
        "for _, item in ipairs(shown.treesitter) do table.insert(names, item.capture) end\n"
        "return names"
    )
    assert any(
        name == "markdownH2" or name.startswith("markup.heading") for name in header_highlights
    ), f"the chat's headers are not highlighted as markdown: {header_highlights}"
