"""The plugin's `tcp` option: connecting to a running `pi-lsp --tcp` with its file's token."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import threading
from pathlib import Path

import pytest

from tests.editors.neovim.conftest import SCRIPTED_MODEL, server_command

LISTENING = re.compile(r"^pi-lsp: listening on (\S+)$")


@contextlib.contextmanager
def tcp_server(directory: Path, home: Path):
    """`pi-lsp --tcp 127.0.0.1:0`, its token file in ``directory``; yields (address, token file)."""
    token_file = directory / "pi-lsp.token"
    environment = {
        **os.environ,
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / "state"),
        "PI_CODING_AGENT_DIR": str(home / "agent"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    for name in ("PI_LSP_MODEL", "PI_LSP_API_BASE", "PI_CODING_AGENT_SESSION_DIR"):
        environment.pop(name, None)
    process = subprocess.Popen(
        [*server_command(), "--tcp", "127.0.0.1:0", "--token-file", str(token_file)],
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    try:
        address = None
        while address is None:
            line = process.stderr.readline()
            assert line, "pi-lsp --tcp exited before listening"
            if match := LISTENING.match(line.strip()):
                address = match[1]
        # Drained so a chatty server never blocks on a full pipe.
        threading.Thread(target=process.stderr.read, daemon=True).start()
        assert token_file.exists()  # written before the address was announced
        yield address, token_file
    finally:
        process.terminate()
        process.wait(timeout=15)


def setup_tcp(editor, address: str, token_file: Path, scripted_model=None) -> None:
    settings = {"retry": {"baseDelayMs": 20}, "autoName": False}
    if scripted_model is not None:
        settings.update(model=SCRIPTED_MODEL, apiBase=scripted_model.base_url)
    ok = editor.lua(
        "local address, token_file, settings = ...\n"
        "return require('pi').setup({ tcp = { address = address, token_file = token_file }, "
        "settings = settings })",
        address,
        str(token_file),
        settings,
    )
    assert ok, editor.notes("DEBUG")


def test_the_plugin_drives_a_tcp_server_with_the_token_from_its_file(
    editor, scripted_model, tmp_path
):
    with tcp_server(tmp_path, editor.home) as (address, token_file):
        setup_tcp(editor, address, token_file, scripted_model)
        scripted_model.enqueue({"kind": "text", "text": "Answered over TCP."})
        editor.command("Pi Hello over TCP")
        editor.wait_for("agent_end", timeout_ms=60000)
        assert any("Answered over TCP." in line for line in editor.chat_lines("Answered over TCP."))
        token = token_file.read_text().strip()
        answered = editor.lua("return vim.inspect(require('pi.client').get().config.settings)")
        # workspace/configuration answers never carry the token
        assert "pi" in answered and token not in answered
        editor.command("checkhealth pi")
        report = "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
        assert f"OK connecting over TCP to {address}" in report, report
        assert "OK server started" in report and "ERROR" not in report, report


def test_a_wrong_token_is_refused_and_the_server_still_serves_the_right_one(
    editor, scripted_model, tmp_path
):
    with tcp_server(tmp_path, editor.home) as (address, token_file):
        wrong = tmp_path / "wrong.token"
        wrong.write_text("not-the-token\n")
        setup_tcp(editor, address, wrong, scripted_model)
        editor.command("Pi Hello")
        editor.wait_until("require('pi.client').get() == nil")
        messages = editor.lua("return vim.api.nvim_exec2('messages', { output = true }).output")
        notes = " ".join(note["message"] for note in editor.notes("DEBUG"))
        assert "token is wrong" in messages + notes, (messages, notes)
        assert editor.lua("return #vim.lsp.get_clients({ name = 'pi' })") == 0

        editor.lua("vim.cmd('messages clear'); _G.pi_test.notes = {}")
        setup_tcp(editor, address, token_file, scripted_model)
        assert editor.request("pi/state")["sessionId"]


def test_a_missing_token_file_says_so_before_connecting(editor, tmp_path):
    setup_tcp(editor, "127.0.0.1:9", tmp_path / "absent.token")
    editor.lua("pcall(vim.cmd, 'Pi Hello')")  # an ERROR note raises inside :command
    note = editor.wait_for_note("ERROR")
    assert "cannot read the TCP token file (tcp.token_file)" in note["message"], note


@pytest.mark.parametrize(
    ("tcp", "message"),
    [
        ("'127.0.0.1:7777'", "tcp: expected table, got string"),
        ("{ address = '127.0.0.1', token_file = 't' }", "tcp.address: expected HOST:PORT"),
        ("{ address = '127.0.0.1:7777' }", "tcp.token_file: expected string, got nil"),
        ("{ address = '[::1]:7777', token_file = 't', host = 'x' }", "tcp.host: unknown option"),
    ],
)
def test_setup_rejects_a_bad_tcp_option(editor, tcp, message):
    assert editor.lua(f"return require('pi').setup({{ tcp = {tcp} }})") is False
    [note] = editor.notes("DEBUG")
    assert message in note["message"], note["message"]
