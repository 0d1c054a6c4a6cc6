"""The Neovim plugin's request wrappers (editors/neovim/lua/pi/api.lua) match protocol.py.

Fails when a request method of the server has no ``M.<name> = request("pi/…")`` wrapper in
api.lua, when api.lua wraps a method the server does not have, when a wrapper's name is not the
snake_case form of its method, or when a server notification is missing from ``M.notifications``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pi_lsp import protocol

API_LUA = Path(__file__).resolve().parents[2] / "editors" / "neovim" / "lua" / "pi" / "api.lua"
NOTIFICATIONS = (protocol.EVENT, protocol.RESOURCES_CHANGED)


def _snake_case(method: str) -> str:
    return re.sub(
        r"([A-Z])", lambda match: "_" + match.group(1).lower(), method.removeprefix("pi/")
    )


@pytest.fixture(scope="module")
def source() -> str:
    return API_LUA.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def wrappers(source: str) -> dict[str, str]:
    """Method name → the name of its wrapper function."""
    pairs = re.findall(r'^M\.(\w+)\s*=\s*request\("(pi/\w+)"\)', source, re.MULTILINE)
    assert pairs, f'{API_LUA} defines no `M.name = request("pi/…")` wrappers'
    methods = [method for _, method in pairs]
    assert len(methods) == len(set(methods)), f"a method is wrapped twice in {API_LUA}"
    return {method: name for name, method in pairs}


@pytest.fixture(scope="module")
def notifications(source: str) -> dict[str, str]:
    match = re.search(r"^M\.notifications\s*=\s*\{(.*?)^\}", source, re.MULTILINE | re.DOTALL)
    assert match, f"{API_LUA} has no `M.notifications = {{ … }}` table"
    return dict(re.findall(r'(\w+)\s*=\s*"(pi/\w+)"', match.group(1)))


def test_every_server_method_has_a_wrapper(wrappers):
    missing = sorted(set(protocol.PARAMS_BY_METHOD) - set(wrappers))
    assert not missing, f"api.lua lacks wrappers for: {missing}"


def test_no_wrapper_names_an_unknown_method(wrappers, source):
    unknown = sorted(set(wrappers) - set(protocol.PARAMS_BY_METHOD))
    assert not unknown, f"api.lua wraps methods the server does not have: {unknown}"
    mentioned = set(re.findall(r'"(pi/\w+)"', source))
    strays = sorted(mentioned - set(protocol.PARAMS_BY_METHOD) - set(NOTIFICATIONS))
    assert not strays, f"api.lua mentions methods the server does not have: {strays}"


def test_wrapper_names_follow_the_methods(wrappers):
    wrong = {method: name for method, name in wrappers.items() if name != _snake_case(method)}
    assert not wrong, f"wrapper names differ from the snake_case method names: {wrong}"


def test_every_server_notification_is_listed(notifications):
    assert notifications == {_snake_case(method): method for method in NOTIFICATIONS}
