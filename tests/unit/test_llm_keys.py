"""API keys in llm/: pi's value resolution (commands without a shell, with a timeout, cached),
where a provider's key comes from, redaction, auth.json writing, and the request's key and
headers."""

from __future__ import annotations

import json
import os
import stat
import sys
import time

import pytest

from pi_lsp.errors import InvalidParamsError
from pi_lsp.llm.auth_store import AuthFileError, remove_api_key, save_api_key
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.config_values import CommandOutputs, resolve_value, template_variables
from pi_lsp.llm.credentials import Credential, UnresolvedKeyError, request_auth, runs_commands
from pi_lsp.llm.failed_messages import auth_error_status, refused_key_message
from pi_lsp.llm.secrets import redact_secrets, remember_secrets

PYTHON = sys.executable


def test_a_command_runs_without_a_shell():
    commands = CommandOutputs()
    # A shell would run two commands and expand the variable; here they are plain arguments.
    value = f"!{PYTHON} -c \"import sys; print(' '.join(sys.argv[1:]))\" a ; echo $HOME"
    assert resolve_value(value, {}, {"HOME": "/h"}, commands) == "a ; echo $HOME"


def test_a_command_output_is_cached_for_the_servers_life_but_a_failure_is_not(tmp_path):
    counter = tmp_path / "count"
    script = (
        "import pathlib, sys; p = pathlib.Path(sys.argv[1]); "
        "n = int(p.read_text()) if p.exists() else 0; p.write_text(str(n + 1)); "
        "sys.exit(1) if n == 0 else print('key-' + str(n))"
    )
    commands = CommandOutputs()
    value = f'!{PYTHON} -c "{script}" {counter}'
    assert resolve_value(value, {}, {}, commands) is None  # first run fails: not cached
    assert resolve_value(value, {}, {}, commands) == "key-1"
    assert resolve_value(value, {}, {}, commands) == "key-1"
    assert commands.runs == 2 and counter.read_text() == "2"


def test_a_slow_command_times_out():
    commands = CommandOutputs(timeout=0.3)
    started = time.monotonic()
    value = f"!{PYTHON} -c \"import time; time.sleep(5); print('late')\""
    assert resolve_value(value, {}, {}, commands) is None
    assert time.monotonic() - started < 3


def test_missing_or_broken_commands_do_not_resolve():
    commands = CommandOutputs()
    assert resolve_value("!no-such-program-anywhere", {}, {}, commands) is None
    assert resolve_value("!printf ''", {}, {}, commands) is None
    assert resolve_value("!echo 'unclosed", {}, {}, commands) is None
    assert resolve_value("!", {}, {}, commands) is None


def test_template_variables_name_what_a_value_reads():
    assert template_variables("${A}_$B-$A $$C $!D") == ["A", "B"]
    assert template_variables("!cmd $X") == []


def test_credentials_describe_where_they_came_from_never_the_key():
    secret = "sk-describe-me-not"
    described = [
        Credential("editor", "secret storage", secret, verbatim=True).describe(),
        Credential("environment", "OPENAI_API_KEY", secret, verbatim=True).describe(),
        Credential("auth.json", "/a/auth.json", secret).describe(),
        Credential("models.json", "/a/models.json", "$MY_KEY").describe(),
        Credential("models.json", "/a/models.json", "!op read x").describe(),
    ]
    assert described == [
        "the editor's secret storage",
        "the environment variable OPENAI_API_KEY",
        "auth.json (/a/auth.json)",
        "models.json (/a/models.json, via $MY_KEY)",
        "models.json (/a/models.json, the command 'op read x')",
    ]
    assert secret not in repr(Credential("auth.json", "p", secret))


def test_resolved_secrets_are_redacted_from_any_text():
    remember_secrets(["sk-redact-0123456789", "ab"])  # too short to redact safely
    assert redact_secrets("refused sk-redact-0123456789 twice: sk-redact-0123456789") == (
        "refused *** twice: ***"
    )
    assert redact_secrets("ab stays") == "ab stays"


def model(**fields) -> ModelConfig:
    return ModelConfig(model="gw/m", provider="gw", model_id="m", **fields)


def test_the_request_gets_the_key_headers_and_bearer():
    credential = Credential("models.json", "p", "$GW_KEY")
    config = model(
        credential=credential, headers={"x-team": "${TEAM}", "x-lit": "$$a"}, auth_header=True
    )
    auth = request_auth(config, {"GW_KEY": "k-123", "TEAM": "blue"}, CommandOutputs())
    assert auth.api_key == "k-123"
    assert dict(auth.headers) == {"x-team": "blue", "x-lit": "$a", "Authorization": "Bearer k-123"}


def test_only_a_command_key_or_header_is_resolved_off_the_event_loop():
    assert runs_commands(model(credential=Credential("auth.json", "p", "!op read key")))
    assert runs_commands(model(headers={"X-Token": "!op read token"}))
    assert not runs_commands(model(credential=Credential("models.json", "p", "$GW_KEY")))
    assert not runs_commands(model(credential=Credential("editor", "s", "!k", verbatim=True)))
    assert not runs_commands(model(headers={"X-Team": "$TEAM"}))
    assert not runs_commands(model())


def test_an_unresolved_key_or_header_fails_the_request_with_why():
    with pytest.raises(UnresolvedKeyError, match=r"environment variable GW_KEY is not set"):
        request_auth(
            model(credential=Credential("auth.json", "p", "$GW_KEY")), {}, CommandOutputs()
        )
    with pytest.raises(UnresolvedKeyError, match=r"the command failed"):
        request_auth(model(credential=Credential("auth.json", "p", "!false")), {}, CommandOutputs())
    with pytest.raises(UnresolvedKeyError, match='header "x-a"'):
        request_auth(model(headers={"x-a": "$NOPE"}), {}, CommandOutputs())
    with pytest.raises(UnresolvedKeyError, match="authHeader"):
        request_auth(model(auth_header=True), {}, CommandOutputs())


@pytest.mark.parametrize(
    ("message", "status"),
    [
        ("401 AuthenticationError: OpenAIException - Incorrect API key provided", 401),
        ("403 PermissionDeniedError: no access", 403),
        ("litellm.AuthenticationError: missing key", 401),
        ("429 RateLimitError: slow down", None),
        ("500 InternalServerError: 401 in the text", None),
    ],
)
def test_auth_errors_are_told_apart(message, status):
    assert auth_error_status({"stopReason": "error", "errorMessage": message}) == status
    assert auth_error_status({"stopReason": "stop", "errorMessage": message}) is None


def test_a_refused_key_says_whose_and_where_from():
    config = model(credential=Credential("auth.json", "/x/auth.json", "k"))
    text = refused_key_message(config, 401, "401 AuthenticationError: bad key")
    assert (
        text
        == "gw refused the API key from auth.json (/x/auth.json) (401 AuthenticationError: bad key)"
    )
    assert "no API key is stored" in refused_key_message(model(), 401, "401 x")


def test_save_api_key_writes_pi_format_with_mode_0600_and_keeps_the_rest(tmp_path):
    path = tmp_path / "agent" / "auth.json"
    oauth = {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}
    path.parent.mkdir()
    path.write_text(json.dumps({"zeta": {"type": "api_key", "key": "z"}, "anthropic": oauth}))
    save_api_key(path, "openai", "sk-ü", replace_subscription=False)
    expected = {
        "zeta": {"type": "api_key", "key": "z"},
        "anthropic": oauth,
        "openai": {"type": "api_key", "key": "sk-ü"},
    }
    assert path.read_text(encoding="utf-8") == json.dumps(expected, indent=2, ensure_ascii=False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not (tmp_path / "agent" / "auth.json.lock").exists()
    assert [name.name for name in path.parent.iterdir()] == ["auth.json"]


def test_a_new_auth_json_and_its_directory_are_private(tmp_path):
    path = tmp_path / "new" / "agent" / "auth.json"
    save_api_key(path, "openai", "k", replace_subscription=False)
    assert json.loads(path.read_text()) == {"openai": {"type": "api_key", "key": "k"}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) & 0o077 == 0


def test_a_subscription_login_is_replaced_only_on_purpose(tmp_path):
    path = tmp_path / "auth.json"
    oauth = {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}
    path.write_text(json.dumps({"anthropic": oauth}))
    with pytest.raises(AuthFileError, match="subscription login for anthropic"):
        save_api_key(path, "anthropic", "k", replace_subscription=False)
    assert json.loads(path.read_text()) == {"anthropic": oauth}
    with pytest.raises(AuthFileError, match="subscription login"):
        remove_api_key(path, "anthropic")
    save_api_key(path, "anthropic", "k", replace_subscription=True)
    assert json.loads(path.read_text()) == {"anthropic": {"type": "api_key", "key": "k"}}
    assert remove_api_key(path, "anthropic") is True
    assert remove_api_key(path, "anthropic") is False
    assert json.loads(path.read_text()) == {}


def test_an_unreadable_auth_json_is_left_alone(tmp_path):
    path = tmp_path / "auth.json"
    path.write_text('{"openai": ')
    with pytest.raises(AuthFileError, match="not valid JSON"):
        save_api_key(path, "openai", "k", replace_subscription=False)
    assert path.read_text() == '{"openai": '
    with pytest.raises(InvalidParamsError):
        save_api_key(path, "openai", "two\nlines", replace_subscription=False)
    with pytest.raises(InvalidParamsError):
        save_api_key(path, " ", "k", replace_subscription=False)


def test_pis_lock_is_waited_for_and_a_stale_one_taken_over(tmp_path, monkeypatch):
    from pi_lsp.llm import auth_store

    path = tmp_path / "auth.json"
    lock = tmp_path / "auth.json.lock"
    lock.mkdir()
    monkeypatch.setattr(auth_store, "LOCK_WAIT_SECONDS", 0.2)
    with pytest.raises(AuthFileError, match="locked"):
        save_api_key(path, "openai", "k", replace_subscription=False)
    old = time.time() - 60
    os.utime(lock, (old, old))
    save_api_key(path, "openai", "k", replace_subscription=False)
    assert json.loads(path.read_text()) == {"openai": {"type": "api_key", "key": "k"}}
    assert not lock.exists()
