"""MCP in Neovim against the real server: `:checkhealth pi` lists the servers of the project's
`.pi/mcp.json` (a failed one with its stderr), `:PiMcp` acts on one (and signs in to an
OAuth-protected one), and an MCP tool call is a row of the chat like any other tool's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx

from tests.e2e.test_mcp_oauth import oauth_server

MISBEHAVING = Path(__file__).resolve().parents[2] / "mcp" / "misbehaving_server.py"


def write_servers(workspace: Path) -> None:
    servers = {
        "tools": {"command": sys.executable, "args": [str(MISBEHAVING)], "exposure": "direct"},
        "broken": {
            "command": sys.executable,
            "args": ["-c", "import sys; sys.stderr.write('no config here\\n'); sys.exit(2)"],
        },
    }
    (workspace / ".pi").mkdir(exist_ok=True)
    (workspace / ".pi" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def state_of(editor, name: str) -> str:
    servers = editor.request("pi/mcp")["servers"]
    return next(server["state"] for server in servers if server["name"] == name)


def wait_for_states(editor, **states: str) -> None:
    condition = " and ".join(
        "(function() local r = require('pi.client').get():request_sync('pi/mcp', "
        "vim.empty_dict(), 5000) for _, s in ipairs(r.result.servers) do "
        f"if s.name == '{name}' then return s.state == '{state}' end end end)()"
        for name, state in states.items()
    )
    editor.wait_until(condition, timeout_ms=30000)


def test_checkhealth_lists_the_servers_and_pimcp_acts_on_one(editor, scripted_model):
    write_servers(editor.workspace)
    editor.setup(scripted_model)
    editor.request("pi/state")  # the server runs
    wait_for_states(editor, tools="connected", broken="failed")
    editor.command("checkhealth pi")
    report = "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    source = editor.workspace / ".pi" / "mcp.json"
    assert f"OK tools: connected, 10 tools (10 direct) — {source}" in report, report
    assert f"ERROR broken: failed, 0 tools — {source}" in report, report
    assert "stderr: no config here" in report and ":PiMcp reconnect broken" in report

    editor.command("PiMcp disable tools")
    wait_for_states(editor, tools="disabled")
    editor.command("PiMcp enable tools")
    wait_for_states(editor, tools="connected")
    assert state_of(editor, "broken") == "failed"


def test_an_mcp_tool_call_is_a_row_of_the_chat(editor, scripted_model):
    write_servers(editor.workspace)
    editor.setup(scripted_model)
    editor.request("pi/state")
    scripted_model.enqueue(
        {"kind": "tool_calls", "calls": [["call_1", "mcp__tools__echo", {"text": "hi"}]]},
        {"kind": "text", "text": "The server echoed."},
    )
    editor.command("Pi Echo hi through MCP")
    lines = editor.chat_lines(containing="The server echoed.")
    header = lines.index("✓ tools · echo")
    assert lines[header + 1] == "    text: hi", lines
    assert any("echo: hi" in line for line in lines[header:]), lines


def authorization_page(editor, scripted_model, url: str) -> str:
    """``:PiMcp login secure`` for the OAuth server at ``url``: the page Neovim opened."""
    (editor.workspace / ".pi").mkdir(exist_ok=True)
    servers = {"secure": {"url": url, "exposure": "direct"}}
    (editor.workspace / ".pi" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    editor.setup(scripted_model)
    editor.request("pi/state")
    wait_for_states(editor, secure="needs-auth")
    # The browser: Neovim opens external pages with vim.ui.open; the test follows them.
    editor.lua(
        "_G.opened = {} vim.ui.open = function(page) table.insert(_G.opened, page) "
        "return { wait = function() return { code = 0 } end } end"
    )
    editor.command("PiMcp login secure")
    editor.wait_until("#_G.opened == 1", timeout_ms=30000)
    return editor.lua("return _G.opened[1]")


def test_pimcp_login_opens_the_authorization_page_and_signs_in(editor, scripted_model):
    with oauth_server() as url:
        page = authorization_page(editor, scripted_model, url)
        assert "Signed in" in httpx.get(page, follow_redirects=True).text
        wait_for_states(editor, secure="connected")
        editor.command("PiMcp logout secure")
        wait_for_states(editor, secure="needs-auth")


def test_pimcp_login_takes_the_redirected_url_pasted_by_hand(editor, scripted_model):
    with oauth_server() as url:
        page = authorization_page(editor, scripted_model, url)
        # The browser runs on another machine: it ends on the redirect it could not follow.
        redirected = httpx.get(page, follow_redirects=False).headers["location"]
        editor.command(f"PiMcp login secure {redirected}")
        wait_for_states(editor, secure="connected")
