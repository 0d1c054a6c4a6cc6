"""docs/protocol.md must describe every method, params field and event of ``pi_lsp/protocol.py``."""

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


def test_every_event_type_is_documented():
    text = section(protocol.EVENT)
    for event_type in protocol.EVENT_TYPES:
        assert f"| `{event_type}` |" in text


def test_every_documented_method_exists():
    documented = set(re.findall(r"^### `(pi/\w+)`", DOCS, re.MULTILINE))
    assert documented == set(protocol.PARAMS_BY_METHOD) | {
        protocol.EVENT,
        protocol.RESOURCES_CHANGED,
    }


def test_every_method_is_registered_as_a_request_and_a_command():
    from pi_lsp.server import build_server

    server = build_server()
    assert set(protocol.PARAMS_BY_METHOD) <= set(server.protocol.fm.features)
    assert {protocol.command_name(method) for method in protocol.PARAMS_BY_METHOD} <= set(
        server.protocol.fm.commands
    )
