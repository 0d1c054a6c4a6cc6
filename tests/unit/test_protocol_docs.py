"""docs/protocol.md must describe every method, params field, result field and event of
``pi_lsp/protocol.py``.
"""

import re
from pathlib import Path

import attrs
import pytest

from pi_lsp import protocol

DOCS = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()


def section(method: str) -> str:
    match = re.search(
        rf"^### `{re.escape(method)}`\n(.*?)(?=^### |^## |\Z)", DOCS, re.MULTILINE | re.DOTALL
    )
    assert match, f"docs/protocol.md has no section for {method}"
    return match.group(1)


@pytest.mark.parametrize("method", sorted(protocol.PARAMS_BY_METHOD))
def test_every_request_is_documented_with_its_params(method):
    text = section(method)
    for field in attrs.fields(protocol.PARAMS_BY_METHOD[method]):
        assert f"`{protocol.camel_case(field.name)}" in text, (
            f"{method}: param {field.name} is not documented"
        )


@pytest.mark.parametrize("method", sorted(protocol.RESULT_BY_METHOD))
def test_every_result_field_is_documented(method):
    text = section(method)
    for field in attrs.fields(protocol.RESULT_BY_METHOD[method]):
        name = protocol.camel_case(field.name)
        assert re.search(rf"\b{name}\b", text), f"{method}: result field {name} is not documented"


@pytest.mark.parametrize("cls", protocol.EVENT_CLASSES, ids=lambda cls: cls.TYPE)
def test_every_event_is_documented_with_its_fields(cls):
    rows = {
        match.group(1): match.group(2)
        for match in re.finditer(r"^\| `(\w+)` \|([^|]*)\|", section(protocol.EVENT), re.MULTILINE)
    }
    assert cls.TYPE in rows, f"the pi/event table has no row for {cls.TYPE}"
    documented = set(re.findall(r"`(\w+)\??`", rows[cls.TYPE]))
    wanted = {protocol.camel_case(field.name) for field in attrs.fields(cls)}
    assert documented == wanted, (
        f"{cls.TYPE}: documented {sorted(documented)}, sent {sorted(wanted)}"
    )


def test_every_documented_method_exists():
    documented = set(re.findall(r"^### `(pi/\w+)`", DOCS, re.MULTILINE))
    assert documented == set(protocol.PARAMS_BY_METHOD) | set(protocol.NOTIFICATION_PARAMS) | {
        protocol.EVENT,
        protocol.RESOURCES_CHANGED,
    }


@pytest.mark.parametrize("method", sorted(protocol.NOTIFICATION_PARAMS))
def test_every_client_notification_is_documented_with_its_params(method):
    text = section(method)
    for field in attrs.fields(protocol.NOTIFICATION_PARAMS[method]):
        assert f"`{protocol.camel_case(field.name)}" in text or f"{{{field.name}}}" in text, (
            f"{method}: param {field.name} is not documented"
        )


def test_every_method_is_registered_as_a_request_and_a_command():
    from pi_lsp.server import build_server

    server = build_server()
    assert set(protocol.PARAMS_BY_METHOD) <= set(server.protocol.fm.features)
    assert {protocol.command_name(method) for method in protocol.PARAMS_BY_METHOD} <= set(
        server.protocol.fm.commands
    )


@pytest.mark.parametrize("method", [protocol.TREE, protocol.MESSAGES])
def test_the_context_edit_values_are_documented(method):
    text = section(method)
    for effect in protocol.CONTEXT_EDIT_EFFECTS:
        assert f'`"{effect}"`' in text, f"{method}: contextEdit value {effect} is not documented"
