"""`:checkhealth pi`: the server found and started, its version, the model, the session dir."""

from __future__ import annotations

import re

from pi_lsp import __version__
from tests.editors.neovim.conftest import server_command


def health_report(editor) -> str:
    editor.command("checkhealth pi")
    return "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))


def test_health_reports_a_working_setup(editor, scripted_model):
    editor.setup(scripted_model)
    report = health_report(editor)
    assert re.search(r"OK Neovim \d+\.\d+", report), report
    assert re.search(r"OK server command found: \S*pi-lsp", report), report
    assert f"OK version: pi-lsp {__version__}" in report
    assert f"OK server started: pi-lsp {__version__} (root {editor.workspace})" in report
    assert "OK model openai/scripted (local)" in report
    assert "OK session dir writable: " in report
    assert "WARNING" not in report and "ERROR" not in report


def test_health_warns_without_a_model(editor):
    # Nothing but the command: the default (empty)
    # settings must still reach the server as an object.
    assert editor.lua("return require('pi').setup({ cmd = ... })", server_command())
    report = health_report(editor)
    assert "OK server started" in report
    assert "WARNING no model configured" in report
    assert "PI_LSP_MODEL" in report and ":PiLogin" in report
    messages = editor.lua("return vim.api.nvim_exec2('messages', { output = true }).output")
    assert "initializationOptions" not in messages, messages


def test_health_reports_a_missing_server(editor):
    assert editor.lua("return require('pi').setup({ cmd = { 'pi-lsp-that-is-not-installed' } })")
    report = health_report(editor)
    assert 'ERROR server command "pi-lsp-that-is-not-installed" not found' in report
    assert "OK server started" not in report
    assert editor.lua("return #vim.lsp.get_clients({ name = 'pi' })") == 0


def test_a_prompt_without_a_model_says_how_to_configure_one_once(editor):
    assert editor.lua("return require('pi').setup({ cmd = ... })", server_command())
    editor.command("Pi Hello")
    line = editor.chat_lines(containing="» prompt failed")[-1]
    assert line.startswith("» prompt failed: No model is configured") and ":PiLogin" in line
    assert not editor.notes("WARN"), "the failure was also shown outside the chat"


def test_setup_again_hands_new_settings_to_the_running_server(editor, scripted_model):
    assert editor.lua("return require('pi').setup({ cmd = ... })", server_command())
    assert editor.request("pi/state")["model"] is None
    editor.setup(scripted_model)
    editor.wait_until(
        "(function() local r = require('pi.client').get():request_sync('pi/state', "
        "vim.empty_dict(), 5000) return r and type(r.result.model) == "
        "'table' and r.result.model.model == 'openai/scripted' end)()"
    )
    assert "OK model openai/scripted (local)" in health_report(editor)
