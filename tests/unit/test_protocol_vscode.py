"""The VS Code extension's typed protocol table (editors/vscode/src/protocol.ts) matches
protocol.py.

Fails when a request method, a params field or an event type of the server is missing from the
TypeScript file, or when the file names a method or an event the server does not have; when a
params field the server requires is ``x?:`` or one it may do without is not; and when a
result or event shape differs: a missing or extra field, a field the server may leave out that is
not ``x?:``, a field the server may send as null without ``| null`` (or the other way round), or a
nested shape of another name.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from pi_lsp import protocol

from .wire_shapes import WireField, result_classes, wire_fields

PROTOCOL_TS = Path(__file__).resolve().parents[2] / "editors" / "vscode" / "src" / "protocol.ts"


def _block(source: str, header: str) -> str:
    """The body of the first ``{ … }`` block after ``header`` (braces balanced)."""
    start = source.index(header)
    opening = source.index("{", start)
    depth = 0
    for position in range(opening, len(source)):
        depth += {"{": 1, "}": -1}.get(source[position], 0)
        if depth == 0:
            return source[opening + 1 : position]
    raise AssertionError(f"unbalanced braces after {header!r} in {PROTOCOL_TS}")


def _array(source: str, name: str) -> list[str]:
    match = re.search(rf"export const {name}\b[^=]*=\s*\[(.*?)\];", source, re.DOTALL)
    assert match, f"{PROTOCOL_TS} has no `export const {name} = [...]`"
    return re.findall(r"'([^']+)'", match.group(1))


@pytest.fixture(scope="module")
def source() -> str:
    return PROTOCOL_TS.read_text(encoding="utf-8")


@attrs.frozen
class TsField:
    optional: bool
    type: str

    @property
    def nullable(self) -> bool:
        return bool(re.search(r"\|\s*null\b", self.type))


def _ts_fields(body: str) -> dict[str, TsField]:
    """``name?: type;`` declarations at the top level of an interface or object type body."""
    body = re.sub(r"/\*.*?\*/|//[^\n]*", "", body, flags=re.DOTALL)
    fields, depth, start = {}, 0, 0
    body += ";"  # the last declaration of `{ a: string }` has no semicolon of its own
    for position, char in enumerate(body):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == ";" and depth == 0:
            match = re.match(r"\s*(\w+)(\?)?:\s*(.*)", body[start:position], re.DOTALL)
            if match:
                optional, declared = bool(match.group(2)), " ".join(match.group(3).split())
                fields[match.group(1)] = TsField(optional, declared)
            start = position + 1
    return fields


def _interface(source: str, name: str) -> dict[str, TsField]:
    header = f"export interface {name} {{"
    assert header in source, f"protocol.ts has no interface {name}"
    return _ts_fields(_block(source, header))


def _events(source: str) -> dict[str, dict[str, TsField]]:
    """Event type → its fields, from ``interface Events``."""
    return {
        name: {} if declared.startswith("Record<never") else _ts_fields(declared.strip()[1:-1])
        for name, declared in (
            (name, field.type)
            for name, field in _ts_fields(_block(source, "export interface Events")).items()
        )
    }


def _shape_problems(
    where: str, wanted: dict[str, WireField], typed: dict[str, TsField]
) -> list[str]:
    problems = []
    if set(wanted) != set(typed):
        problems.append(
            f"{where}: fields {sorted(typed)} in protocol.ts, {sorted(wanted)} on the server"
        )
    for name in sorted(set(wanted) & set(typed)):
        field, ts = wanted[name], typed[name]
        if field.optional != ts.optional:
            problems.append(
                f"{where}.{name}: the server "
                f"{'may leave it out' if field.optional else 'always sends it'}, "
                f"protocol.ts says `{name}{'?' if ts.optional else ''}:`"
            )
        if field.nullable != ts.nullable:
            problems.append(
                f"{where}.{name}: the server "
                f"{'may send null' if field.nullable else 'never sends null'}, "
                f"protocol.ts types it `{ts.type}`"
            )
        for nested in field.nested:
            if not re.search(rf"\b{nested}\b", ts.type):
                problems.append(f"{where}.{name}: should be typed with {nested}, is `{ts.type}`")
    return problems


@pytest.fixture(scope="module")
def requests_table(source: str) -> dict[str, str]:
    """Method name → the name of its params type, from ``interface Requests``."""
    body = _block(source, "export interface Requests")
    return dict(re.findall(r"'(pi/\w+)':\s*\{\s*params:\s*(\w+);", body))


@pytest.fixture(scope="module")
def results_table(source: str) -> dict[str, str]:
    """Method name → the name of its result type, from ``interface Requests``."""
    body = _block(source, "export interface Requests")
    return dict(re.findall(r"'(pi/\w+)':\s*\{\s*params:\s*\w+;\s*result:\s*(\w+)", body))


def test_every_server_method_is_in_the_table(requests_table):
    missing = sorted(set(protocol.PARAMS_BY_METHOD) - set(requests_table))
    assert not missing, f"protocol.ts lacks these methods: {missing}"


def test_the_table_names_no_unknown_method(requests_table, source):
    unknown = sorted(set(requests_table) - set(protocol.PARAMS_BY_METHOD))
    assert not unknown, f"protocol.ts names methods the server does not have: {unknown}"
    listed = _array(source, "METHODS")
    assert sorted(listed) == sorted(protocol.PARAMS_BY_METHOD), (
        "METHODS differs from the server's methods"
    )


@pytest.mark.parametrize("method", sorted(protocol.PARAMS_BY_METHOD))
def test_every_params_field_is_typed(method, requests_table, source):
    params_type = requests_table.get(method)
    assert params_type, f"{method} is missing from protocol.ts"
    wanted = {
        protocol.camel_case(field.name) for field in attrs.fields(protocol.PARAMS_BY_METHOD[method])
    }
    if params_type == "NoParams":
        assert not wanted, f"{method} takes {sorted(wanted)} but protocol.ts says NoParams"
        return
    body = _block(source, f"export interface {params_type} ")
    typed = set(re.findall(r"^\s*(\w+)\??:", body, re.MULTILINE))
    missing = sorted(wanted - typed)
    assert not missing, f"{params_type} ({method}) lacks fields {missing}"
    extra = sorted(typed - wanted)
    assert not extra, f"{params_type} ({method}) has fields the server does not accept: {extra}"
    declared = _ts_fields(body)
    wrong = [
        f"{name}: the server {'may do without it' if has_default else 'requires it'}, "
        f"protocol.ts says `{name}{'?' if declared[name].optional else ''}:`"
        for name, has_default in (
            (protocol.camel_case(field.name), field.default is not attrs.NOTHING)
            for field in attrs.fields(protocol.PARAMS_BY_METHOD[method])
        )
        if declared[name].optional != has_default
    ]
    assert not wrong, f"{params_type} ({method}): " + "; ".join(wrong)


def test_every_event_type_is_typed(source):
    body = _block(source, "export interface Events")
    typed = re.findall(r"^\s{2}(\w+):", body, re.MULTILINE)
    assert sorted(typed) == sorted(protocol.EVENT_TYPES)
    assert sorted(_array(source, "EVENT_TYPES")) == sorted(protocol.EVENT_TYPES)


def test_notification_names_match(source):
    assert f"EVENT_NOTIFICATION = '{protocol.EVENT}'" in source
    assert f"RESOURCES_CHANGED_NOTIFICATION = '{protocol.RESOURCES_CHANGED}'" in source
    assert f"SET_CREDENTIALS_NOTIFICATION = '{protocol.SET_CREDENTIALS}'" in source


@pytest.mark.parametrize(
    "params", protocol.NOTIFICATION_PARAMS.values(), ids=lambda cls: cls.__name__
)
def test_every_client_notification_params_shape_matches(params, source):
    problems = _shape_problems(
        params.__name__, wire_fields(params), _interface(source, params.__name__)
    )
    assert not problems, "\n".join(problems)


def test_thinking_levels_match(source):
    match = re.search(r"export const THINKING_LEVELS = \[(.*?)\] as const;", source)
    assert match and re.findall(r"'([^']+)'", match.group(1)) == list(protocol.THINKING_LEVELS)


def test_every_method_names_the_servers_result_type(results_table):
    wanted = {method: cls.__name__ for method, cls in protocol.RESULT_BY_METHOD.items()}
    assert results_table == wanted


@pytest.mark.parametrize("cls", result_classes(), ids=lambda cls: cls.__name__)
def test_every_result_shape_matches(cls, source):
    problems = _shape_problems(cls.__name__, wire_fields(cls), _interface(source, cls.__name__))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("cls", protocol.EVENT_CLASSES, ids=lambda cls: cls.TYPE)
def test_every_event_shape_matches(cls, source):
    events = _events(source)
    assert cls.TYPE in events, f"protocol.ts has no event {cls.TYPE}"
    problems = _shape_problems(cls.TYPE, wire_fields(cls), events[cls.TYPE])
    assert not problems, "\n".join(problems)


def test_the_event_notification_matches(source):
    typed = _interface(source, "EventNotification")
    assert set(typed) == set(wire_fields(protocol.EventNotification))
    assert typed["event"].type == "PiEvent"


def test_the_field_parser_sees_optional_and_nullable_fields():
    parsed = _ts_fields(
        " a?: string; /** doc; with a semicolon */ b: { c: number; d: string } | null; "
    )
    assert parsed == {
        "a": TsField(True, "string"),
        "b": TsField(False, "{ c: number; d: string } | null"),
    }


def test_the_context_edit_values_match(source):
    assert _array(source, "CONTEXT_EDIT_EFFECTS") == list(protocol.CONTEXT_EDIT_EFFECTS)
    for interface in ("TreeEntry", "TranscriptEntry"):
        assert _interface(source, interface)["contextEdit"].type == "ContextEditEffect"
