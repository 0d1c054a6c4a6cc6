"""The TCP guard's pure parts: addresses, the loopback rule, the token file, the connection gate."""

from __future__ import annotations

import json
import stat

import pytest

from pi_lsp.errors import InvalidParamsError
from pi_lsp.transport.tcp import (
    ConnectionGate,
    Refused,
    TcpAddress,
    parse_address,
    remove_token_file,
    require_loopback,
    write_token_file,
)


def test_addresses_are_host_colon_port_with_brackets_for_ipv6():
    assert parse_address("127.0.0.1:7777") == TcpAddress("127.0.0.1", 7777)
    assert parse_address("[::1]:0") == TcpAddress("::1", 0)
    assert str(TcpAddress("::1", 80)) == "[::1]:80"
    for bad in ("7777", ":7777", "localhost:", "localhost:http", "127.0.0.1:70000"):
        with pytest.raises(InvalidParamsError, match="HOST:PORT"):
            parse_address(bad)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.3.4.5", "::1", "localhost"])
def test_loopback_hosts_are_served_without_a_warning(host):
    assert require_loopback(TcpAddress(host, 0), allow_remote=False) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10"])
def test_other_hosts_are_refused_unless_allowed_and_then_warned_about(host):
    with pytest.raises(InvalidParamsError, match=r"not a loopback address.*--allow-remote"):
        require_loopback(TcpAddress(host, 7777), allow_remote=False)
    warning = require_loopback(TcpAddress(host, 7777), allow_remote=True)
    assert warning is not None and "--allow-remote" in warning and "token" in warning


def test_the_token_file_is_private_and_replaces_a_planted_symlink(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    path = tmp_path / "run" / "pi-lsp.token"
    path.parent.mkdir()
    path.symlink_to(victim)
    write_token_file(path, "s3cret")
    assert not path.is_symlink() and path.read_text().strip() == "s3cret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert victim.read_text() == "keep me"
    assert [child.name for child in path.parent.iterdir()] == ["pi-lsp.token"]
    remove_token_file(path, "another server's token")
    assert path.exists()  # a newer server's file is left alone
    remove_token_file(path, "s3cret")
    assert not path.exists()


def test_a_new_token_directory_is_private(tmp_path):
    path = tmp_path / "fresh" / "tcp-1.token"
    write_token_file(path, "t")
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def initialize(options, method="initialize", request_id=1) -> bytes:
    message = {"jsonrpc": "2.0", "method": method, "params": {"initializationOptions": options}}
    if request_id is not None:
        message["id"] = request_id
    return json.dumps(message).encode()


def test_the_gate_admits_the_token_once_and_strips_it():
    gate = ConnectionGate("right")
    message = gate.admit(initialize({"token": "right", "model": "openai/x"}))
    assert message["params"]["initializationOptions"] == {"model": "openai/x"}
    with pytest.raises(Refused) as refused:
        gate.admit(initialize({"token": "right"}, request_id=2))
    assert refused.value.answer["error"]["code"] == -32031
    assert refused.value.answer["id"] == 2


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (initialize({"model": "openai/x"}), "missing"),
        (initialize(None), "missing"),
        (initialize({"token": 42}), "missing"),
        (initialize({"token": "wrong"}), "wrong"),
        (initialize({"token": "righ"}), "wrong"),
        (initialize({"token": "right"}, method="pi/prompt"), "must be initialize"),
    ],
)
def test_the_gate_refuses_a_missing_or_wrong_token_and_any_other_first_message(body, reason):
    gate = ConnectionGate("right")
    with pytest.raises(Refused, match=reason) as refused:
        gate.admit(body)
    error = refused.value.answer["error"]
    assert error["code"] == -32030 and error["data"] == {"retry": False}
    assert "right" not in json.dumps(refused.value.answer)
    assert not gate.serving


def test_the_gate_answers_garbage_with_a_parse_error_and_notifications_with_nothing():
    gate = ConnectionGate("right")
    with pytest.raises(Refused) as refused:
        gate.admit(b"{not json")
    assert refused.value.answer["error"]["code"] == -32700
    with pytest.raises(Refused) as refused:
        gate.admit(initialize({"token": "wrong"}, request_id=None))
    assert refused.value.answer is None
