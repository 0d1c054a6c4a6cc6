"""The VS Code extension's typed protocol table (editors/vscode/src/protocol.ts) matches
protocol.py.

Fails when a request method, a params field or an event type of the server is missing from the
TypeScript file, or when the file names a method or an event the server does not have.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from pi_lsp import protocol

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


@pytest.fixture(scope="module")
def requests_table(source: str) -> dict[str, str]:
    """Method name → the name of its params type, from ``interface Requests``."""
    body = _block(source, "export interface Requests")
    return dict(re.findall(r"'(pi/\w+)':\s*\{\s*params:\s*(\w+);", body))


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


def test_every_event_type_is_typed(source):
    body = _block(source, "export interface Events")
    typed = re.findall(r"^\s{2}(\w+):", body, re.MULTILINE)
    assert sorted(typed) == sorted(protocol.EVENT_TYPES)
    assert sorted(_array(source, "EVENT_TYPES")) == sorted(protocol.EVENT_TYPES)


def test_notification_names_match(source):
    assert f"EVENT_NOTIFICATION = '{protocol.EVENT}'" in source
    assert f"RESOURCES_CHANGED_NOTIFICATION = '{protocol.RESOURCES_CHANGED}'" in source


def test_thinking_levels_match(source):
    match = re.search(r"export const THINKING_LEVELS = \[(.*?)\] as const;", source)
    assert match and re.findall(r"'([^']+)'", match.group(1)) == list(protocol.THINKING_LEVELS)
