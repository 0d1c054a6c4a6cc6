"""The Neovim plugin's request wrappers (editors/neovim/lua/pi/api.lua) match protocol.py.

Fails when a request method of the server has no ``M.<name> = request("pi/…")`` wrapper in
api.lua, when api.lua wraps a method the server does not have, when a wrapper's name is not the
snake_case form of its method, or when a server notification is missing from ``M.notifications``;
and when the LuaCATS annotations of the result and event shapes differ from the server's: a
missing or extra field, a field that may be nil (sent as null, or left out) without ``?``, or the
other way round, a nested shape of another name, or a wrapper annotated with another result type.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from pi_lsp import protocol

from .wire_shapes import result_classes, wire_fields

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


@attrs.frozen
class LuaField:
    type: str
    may_be_nil: bool


def _lua_classes(source: str) -> dict[str, dict[str, LuaField]]:
    """``---@class pi.Name`` → its ``---@field name? type`` lines."""
    classes: dict[str, dict[str, LuaField]] = {}
    current: dict[str, LuaField] | None = None
    for line in source.splitlines():
        declared = re.match(r"---@class pi\.(\w+)", line)
        field = re.match(r"---@field (\w+)(\?)? (.+)", line)
        if declared:
            current = classes.setdefault(declared.group(1), {})
        elif field and current is not None:
            kind = field.group(3).strip()
            may_be_nil = bool(field.group(2)) or kind.endswith("?") or "|nil" in kind
            current[field.group(1)] = LuaField(kind, may_be_nil)
        elif not line.startswith("---"):
            current = None
    return classes


@pytest.fixture(scope="module")
def lua_classes(source: str) -> dict[str, dict[str, LuaField]]:
    return _lua_classes(source)


def _shape_problems(cls: type, typed: dict[str, LuaField]) -> list[str]:
    wanted = wire_fields(cls)
    expected_names = set(wanted) | ({"type"} if hasattr(cls, "TYPE") else set())
    problems = []
    if set(typed) != expected_names:
        problems.append(
            f"{cls.__name__}: fields {sorted(typed)} in api.lua, "
            f"{sorted(expected_names)} on the server"
        )
    for name in sorted(set(wanted) & set(typed)):
        field, lua = wanted[name], typed[name]
        server_may_omit = field.nullable or field.optional
        if server_may_omit != lua.may_be_nil:
            told = "may be nil" if server_may_omit else "is always set"
            problems.append(f"{cls.__name__}.{name} {told}; api.lua says `{name} {lua.type}`")
        for nested in field.nested:
            if not re.search(rf"\bpi\.{nested}\b", lua.type):
                problems.append(
                    f"{cls.__name__}.{name}: should be typed pi.{nested}, is `{lua.type}`"
                )
    return problems


@pytest.mark.parametrize("cls", result_classes(), ids=lambda cls: cls.__name__)
def test_every_result_shape_is_annotated(cls, lua_classes):
    assert cls.__name__ in lua_classes, f"api.lua has no ---@class pi.{cls.__name__}"
    problems = _shape_problems(cls, lua_classes[cls.__name__])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("cls", protocol.EVENT_CLASSES, ids=lambda cls: cls.TYPE)
def test_every_event_shape_is_annotated(cls, lua_classes):
    assert cls.__name__ in lua_classes, f"api.lua has no ---@class pi.{cls.__name__}"
    typed = lua_classes[cls.__name__]
    assert typed.get("type") == LuaField(f'"{cls.TYPE}"', False)
    problems = _shape_problems(cls, typed)
    assert not problems, "\n".join(problems)


def test_the_event_union_lists_every_event(source):
    match = re.search(r"^---@alias pi\.Event\n((?:---\| .+\n)+)", source, re.MULTILINE)
    assert match, "api.lua has no multi-line ---@alias pi.Event"
    members = re.findall(r"^---\| (\S+)$", match.group(1), re.MULTILINE)
    assert set(members) == {f"pi.{cls.__name__}" for cls in protocol.EVENT_CLASSES}


def test_every_wrapper_is_annotated_with_its_result(source):
    pattern = r'^---@type pi\.Request<pi\.(\w+)>\nM\.\w+\s*=\s*request\("(pi/\w+)"\)'
    annotated = {method: name for name, method in re.findall(pattern, source, re.MULTILINE)}
    assert annotated == {method: cls.__name__ for method, cls in protocol.RESULT_BY_METHOD.items()}


def test_a_nullable_field_without_a_question_mark_is_caught():
    typed = _lua_classes(
        "---@class pi.NewSessionResult\n---@field sessionId string\n---@field path string\n"
    )
    assert _shape_problems(protocol.NewSessionResult, typed["NewSessionResult"])


def test_the_context_edit_values_match(source):
    match = re.search(
        r"^M\.context_edit_effects\s*=\s*\{(.*?)^\}", source, re.MULTILINE | re.DOTALL
    )
    assert match, f"{API_LUA} has no `M.context_edit_effects = {{ … }}` table"
    values = dict(re.findall(r'(\w+)\s*=\s*"(\w+)"', match.group(1)))
    assert values == {effect: effect for effect in protocol.CONTEXT_EDIT_EFFECTS}
