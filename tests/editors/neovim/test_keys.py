"""API keys from Neovim: :PiLogin stores the key in pi's auth.json (pi's format, mode 0600) and
the next :Pi sends it; a refused key is shown once in the chat with the fix; :PiLogout removes
the key."""

from __future__ import annotations

import json
import stat

FAKE_KEY = "sk-nvim-FAKE-LEAKCHECK-91e2"


def test_pilogin_then_pi_sends_the_key_and_pilogout_removes_it(editor, scripted_model):
    editor.setup(scripted_model)
    auth = editor.home / "agent" / "auth.json"
    # inputsecret() reads the key typed after the command, without echoing it.
    editor.keys(f":PiLogin openai<CR>{FAKE_KEY}<CR>")
    editor.wait_until(f"vim.fn.filereadable('{auth}') == 1")
    assert auth.read_text() == json.dumps(
        {"openai": {"type": "api_key", "key": FAKE_KEY}}, indent=2
    )
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600
    note = editor.wait_for_note("INFO")
    assert "openai API key is stored in" in note["message"] and FAKE_KEY not in note["message"]

    scripted_model.enqueue({"kind": "text", "text": "Answered with the stored key."})
    editor.command("Pi Which key?")
    # A server of its own: its first prompt waits for litellm's import (long on a busy machine).
    editor.wait_for("agent_end", timeout_ms=60_000)
    editor.chat_lines(containing="Answered with the stored key.")
    assert scripted_model.headers()[-1]["Authorization"] == f"Bearer {FAKE_KEY}"

    scripted_model.enqueue(
        {"kind": "error", "status": 401, "message": f"Incorrect API key provided: {FAKE_KEY}"}
    )
    editor.command("Pi Again?")
    editor.wait_for("agent_end", count=2)
    lines = editor.chat_lines(containing="Store another key with :PiLogin openai")
    refusals = [line for line in lines if "Incorrect API key provided" in line]
    assert len(refusals) == 1, lines
    assert refusals[0].startswith("» openai refused the API key from auth.json (")
    assert "Incorrect API key provided: ***" in refusals[0]
    assert not any(line.startswith("» error:") for line in lines)
    assert not editor.notes("ERROR"), "the refused key was also shown outside the chat"
    assert all(FAKE_KEY not in line for line in editor.chat_lines())

    editor.command("PiLogout openai")
    editor.wait_until(f"vim.fn.readfile('{auth}')[1] == '{{}}'")
    assert json.loads(auth.read_text()) == {}
    messages = editor.lua("return vim.api.nvim_exec2('messages', { output = true }).output")
    assert FAKE_KEY not in messages
