"""The plugin as a plugin: lazy loading, the commands, setup() validation and idempotence, the
window layouts, and the help file (`:helptags` and `:help`)."""

from __future__ import annotations

import shutil

import pytest

from tests.editors.neovim.conftest import PLUGIN_DIR

COMMANDS = [
    "Pi",
    "PiInstall",
    "PiChat",
    "PiAbort",
    "PiCompact",
    "PiTree",
    "PiTreeSearch",
    "PiEarlier",
    "PiNavigate",
    "PiSessions",
    "PiSearch",
    "PiNew",
    "PiFork",
    "PiModel",
    "PiMcp",
]


def notifications(editor) -> list[dict]:
    return editor.notes("DEBUG")


def test_loading_the_plugin_defines_the_commands_and_starts_nothing(editor):
    assert all(editor.lua("return vim.fn.exists(':' .. ...)", name) == 2 for name in COMMANDS)
    loaded = editor.lua(
        "return vim.tbl_filter(function(name) return "
        "name:match('^pi') ~= nil end, vim.tbl_keys(package.loaded))"
    )
    assert loaded == [], f"modules loaded before any command ran: {loaded}"
    assert editor.lua("return #vim.lsp.get_clients()") == 0
    editor.command("PiChat")
    assert editor.lua("return #vim.lsp.get_clients()") == 0, "opening the chat started the server"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("{ cmd = 'pi-lsp' }", "cmd: expected table, got string"),
        ("{ cmd = {} }", "cmd: expected a non-empty list"),
        ("{ cmd = { 'pi-lsp', 3 } }", "cmd[2]: expected string, got number"),
        (
            "{ window = { layout = 'diagonal' } }",
            'window.layout: expected vsplit, split, tab or current, got "diagonal"',
        ),
        ("{ window = { size = 'wide' } }", "window.size: expected number, got string"),
        (
            "{ keymaps = { tree = { navigate = 1 } } }",
            "keymaps.tree.navigate: expected a key string or false",
        ),
        ("{ keymaps = { tree = { jump = 'j' } } }", "keymaps.tree.jump: unknown action"),
        ("{ settings = { model = 3 } }", "settings.model: expected string, got number"),
        ("{ settings = { modle = 'openai/gpt-4o' } }", "settings.modle: unknown setting"),
        ("{ colour = 'blue' }", "colour: unknown option"),
        ("'pi-lsp'", "opts: expected table, got string"),
    ],
)
def test_setup_rejects_bad_options_with_a_clear_error(editor, options, message):
    assert editor.lua(f"return require('pi').setup({options})") is False
    [note] = notifications(editor)
    assert note["level"] == editor.lua("return vim.log.levels.ERROR")
    assert note["message"].startswith("pi: setup(): ") and message in note["message"], note[
        "message"
    ]
    assert editor.lua("return require('pi.config').options.cmd") is None, "bad options were applied"


def test_setup_is_idempotent(editor):
    assert editor.lua(
        "return require('pi').setup({ window = { size = "
        "50 }, keymaps = { tree = { fork = false } } })"
    )
    assert editor.lua("return require('pi.config').options.window.size") == 50
    assert editor.lua("return require('pi').setup({ cmd = { 'my-pi-lsp', '--verbose' } })")
    options = editor.lua("return require('pi.config').options")
    assert options["cmd"] == ["my-pi-lsp", "--verbose"]
    assert options["window"]["size"] == 0.4 and options["keymaps"]["tree"]["fork"] == "f"
    assert notifications(editor) == []


@pytest.mark.parametrize(
    ("layout", "windows", "tabs"),
    [("vsplit", 3, 1), ("split", 3, 1), ("tab", 2, 2), ("current", 2, 1)],
)
def test_the_chat_opens_in_the_configured_layout(editor, layout, windows, tabs):
    assert editor.lua(
        f"return require('pi').setup({{ window = {{ layout = '{layout}', prompt_height = 5 }} }})"
    )
    editor.command("PiChat")
    assert editor.lua("return vim.bo.filetype") == "pi-prompt"
    assert editor.lua("return vim.api.nvim_win_get_height(0)") == 5
    assert editor.lua("return #vim.api.nvim_tabpage_list_wins(0)") == windows
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == tabs
    editor.command("PiChat")
    assert editor.lua("return #vim.api.nvim_tabpage_list_wins(0)") == windows, (
        "a second :PiChat opened more windows"
    )


def test_the_help_file_has_tags_for_every_command(editor, tmp_path):
    # A copy: :helptags writes a tags file next to the
    # help file, which must not land in the repository.
    shutil.copytree(PLUGIN_DIR / "doc", tmp_path / "doc")
    editor.lua("vim.opt.runtimepath:prepend(...)", str(tmp_path))
    editor.command(f"helptags {tmp_path / 'doc'}")
    for tag in [
        "pi",
        "pi-setup",
        "pi-tree",
        "pi-chat",
        "pi-keymaps",
        "pi-chat-history",
        "pi-statusline",
        "pi-health",
        "pi-install",
        "PiEvent",
        *(":" + c for c in COMMANDS),
    ]:
        editor.command(f"help {tag}")
        assert editor.lua("return vim.fn.expand('%:t')") == "pi.txt", tag
        assert f"*{tag}*" in editor.lua("return vim.api.nvim_get_current_line()"), tag
        editor.command("helpclose")
