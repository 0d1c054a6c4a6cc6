"""The :PiContext buffer against the real server and the scripted model: what the next request
carries, drawn as a text bar and the parts largest first; forgetting a tool result from it
updates the view, the chat (with the note that the message stays in the file) and the request."""

from __future__ import annotations

import json

CONTEXT = {
    "sessionId": "s1",
    "total": 500,
    "basis": "estimate",
    "contextWindow": 1000,
    "compactAt": 800,
    "freeToWindow": 500,
    "freeToCompaction": 300,
    "parts": [
        {"kind": "base", "label": "Base prompt", "tokens": 100},
        {"kind": "contextFile", "label": "AGENTS.md", "tokens": 50, "path": "/p/AGENTS.md"},
        {"kind": "tools", "label": "Tool declarations (7)", "tokens": 150},
        {
            "kind": "message",
            "label": "user",
            "tokens": 200,
            "entryId": "a",
            "role": "user",
            "preview": "Read the log",
        },
        {
            "kind": "message",
            "label": "toolResult",
            "tokens": 0,
            "entryId": "b",
            "role": "toolResult",
            "preview": "BIG",
            "contextEdit": "removed",
        },
    ],
}


def test_the_layout_draws_a_bar_a_legend_and_the_parts_largest_first(editor):
    lines, parts = editor.lua(
        "local lines, parts = require('pi.context_lines').layout(...) "
        "local ids = {} for lnum, part in pairs(parts) do ids[tostring(lnum)] = part.label end "
        "return { lines, ids }",
        CONTEXT,
    )
    assert lines[0].startswith("Context of the next request: 500 / 1k tokens (50%)")
    assert "compacts at 800: 300 free" in lines[0]
    bar = lines[1]
    assert len(bar) == 62 and bar.startswith("[SSSSSSFFFTTTTTTTTTMMMMMMMMMMMM")
    assert bar[48] == "|" and bar.endswith(".]")  # compaction starts at 80 % of the window
    assert lines[2] == "S system prompt 100  F context files 50  T tools 150  M messages 200"
    listed = [line.split()[:2] for line in lines[5:10]]
    assert listed == [
        ["200", "user"],
        ["150", "Tool"],
        ["100", "Base"],
        ["50", "AGENTS.md"],
        ["0", "toolResult"],
    ]
    assert lines[9].endswith("BIG [removed]")
    assert parts == {
        "6": "user",
        "7": "Tool declarations (7)",
        "8": "Base prompt",
        "9": "AGENTS.md",
        "10": "toolResult",
    }


def test_forgetting_a_tool_result_from_the_context_buffer(pi, scripted_model):
    scripted_model.enqueue(
        {"kind": "tool_calls", "calls": [["call_1", "read", {"path": "app.py"}]]},
        {"kind": "text", "text": "add() subtracts."},
    )
    pi.command("Pi What does add do?")
    pi.wait_for("agent_end")
    pi.command("PiContext")
    pi.wait_until("vim.fn.search('toolResult', 'nw') > 0")
    assert pi.lua("return vim.bo.filetype") == "pi-context"
    before = pi.lua("return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]")
    pi.lua("vim.fn.search('toolResult', 'w')")
    pi.keys("x")
    pi.wait_until("vim.fn.search('\\\\[removed\\\\]', 'nw') > 0")
    after = pi.lua("return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]")
    assert after != before  # the total went down
    state = pi.request("pi/state")
    context = pi.request("pi/context")
    assert context["total"] == state["contextUsage"]["tokens"]
    lines = pi.chat_lines(containing="it stays in the session file")
    assert any("return a - b" in line for line in lines)  # still shown in the chat
    note = pi.wait_for_note("INFO")
    assert "stays in the session file" in note["message"]
    scripted_model.enqueue({"kind": "text", "text": "Done."})
    pi.command("Pi go on")
    pi.wait_for("agent_end", count=2)
    assert "return a - b" not in json.dumps(scripted_model.requests()[-1]["messages"])
