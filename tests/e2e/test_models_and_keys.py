"""Models and keys as pi configures them: pi's ``models.json`` and ``auth.json`` in the agent
directory, the editor's keys (``pi/setCredentials``), ``pi/login``/``pi/logout``, the scripted
server seeing the key as the bearer token, a refused key reported once, and a recognisable fake
key never showing up in a log, a session file, an event or an error text.

Each test runs its own server with its own agent directory and home, and no pi-lsp variable, no
provider key variable and no model option unless the test says so.
"""

from __future__ import annotations

import contextlib
import json
import stat
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from pi_lsp.client import isolated_environment
from pi_lsp.scripted_llm import ScriptedLLM, replies
from tests.e2e.conftest import SERVER, EventLog, make_client, request

FAKE_KEY = "sk-FAKE-LEAKCHECK-7f3a9c2e41"
"""A key no test ever expects to see anywhere but in the Authorization header."""


def environment_for(home: Path, **extra: str) -> dict[str, str]:
    return {**isolated_environment(home), **extra}


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def scripted_provider(llm: ScriptedLLM, api_key: str | None, **fields) -> dict:
    provider = {
        "baseUrl": llm.base_url,
        "api": "openai-completions",
        "models": [{"id": "scripted", "name": "Scripted", "contextWindow": 32000}],
        **fields,
    }
    if api_key is not None:
        provider["apiKey"] = api_key
    return provider


@contextlib.asynccontextmanager
async def server(workspace: Path, home: Path, options: dict | None = None, **environment: str):
    """A server on ``workspace`` whose home and agent directory are ``home``'s."""
    client = make_client()
    await client.start_io(*SERVER.server_command, env=environment_for(home, **environment))
    events = EventLog()
    client.feature("pi/event")(lambda params: events.add(params))
    client.pi_events = events
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=workspace.as_uri(),
                initialization_options={
                    "retry": {"enabled": False},
                    "autoName": False,
                    **(options or {}),
                },
            )
        )
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()


def bearer(llm: ScriptedLLM, index: int = -1) -> str:
    return llm.request_headers[index].get("Authorization", "")


async def test_a_models_json_provider_works_with_literal_variable_and_command_keys(
    tmp_path, workspace
):
    home = tmp_path / "home"
    async with ScriptedLLM() as llm:
        write_json(
            home / "agent" / "models.json",
            {
                "providers": {
                    "by-variable": scripted_provider(llm, "${SCRIPTED_KEY_PREFIX}-$SCRIPTED_KEY"),
                    "by-command": scripted_provider(
                        llm, f"!{sys.executable} -c \"print('from-a-command')\""
                    ),
                    "literal": scripted_provider(llm, "$$literal-key"),
                }
            },
        )
        write_json(
            home / "agent" / "settings.json",
            {"defaultProvider": "by-variable", "defaultModel": "scripted"},
        )
        variables = {"SCRIPTED_KEY_PREFIX": "key", "SCRIPTED_KEY": "from-the-environment"}
        async with server(workspace, home, **variables) as client:
            state = await request(client, "pi/state", {})
            assert state["model"] == {
                "model": "by-variable/scripted",
                "provider": "by-variable",
                "modelId": "scripted",
                "keyStatus": "key",
                "keySource": "models.json",
                "source": "models.json",
            }
            assert state["contextUsage"]["contextWindow"] == 32000
            llm.enqueue(replies.text("From models.json."))
            result = await request(client, "pi/prompt", {"text": "hello"})
            assert result["stopReason"] == "stop"
            assert bearer(llm) == "Bearer key-from-the-environment"
            assert llm.requests[-1]["model"] == "scripted"
            for model, key in (("by-command", "from-a-command"), ("literal", "$literal-key")):
                await request(client, "pi/setModel", {"model": f"{model}/scripted"})
                llm.enqueue(replies.text("Again."))
                await request(client, "pi/prompt", {"text": "again"})
                assert bearer(llm) == f"Bearer {key}"
            [path] = (workspace / ".pi" / "sessions").glob("*.jsonl")
            answers = [
                json.loads(line)["message"]
                for line in path.read_text().splitlines()
                if '"role":"assistant"' in line
            ]
            assert [answer["provider"] for answer in answers] == [
                "by-variable",
                "by-command",
                "literal",
            ]
            listed = await request(client, "pi/models", {})
            first = listed["models"][:3]
            assert {model["model"] for model in first} == {
                "by-variable/scripted",
                "by-command/scripted",
                "literal/scripted",
            }
            assert all(model["available"] and model["source"] == "models.json" for model in first)
            assert not any(model["available"] for model in listed["models"][3:])


async def test_auth_json_keys_reach_the_server_as_the_bearer_token_and_login_writes_them(
    tmp_path, workspace
):
    home = tmp_path / "home"
    path = home / "agent" / "auth.json"
    oauth = {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}
    write_json(path, {"anthropic": oauth, "openai": {"type": "api_key", "key": FAKE_KEY}})
    async with ScriptedLLM() as llm:
        options = {"model": "openai/scripted", "apiBase": llm.base_url, "autoName": False}
        async with server(workspace, home, options) as client:
            state = await request(client, "pi/state", {})
            assert (state["model"]["keyStatus"], state["model"]["keySource"]) == (
                "key",
                "auth.json",
            )
            llm.enqueue(replies.text("Authorized."))
            await request(client, "pi/prompt", {"text": "hello"})
            assert bearer(llm) == f"Bearer {FAKE_KEY}"

            # The editor's key comes first; an empty set of editor keys falls back to auth.json.
            client.protocol.notify("pi/setCredentials", {"credentials": {"openai": "sk-editor"}})
            llm.enqueue(replies.text("Editor key."))
            await request(client, "pi/prompt", {"text": "again"})
            assert bearer(llm) == "Bearer sk-editor"
            listed = await request(client, "pi/models", {"provider": "openai"})
            openai = next(p for p in listed["providers"] if p["provider"] == "openai")
            assert openai == {
                "provider": "openai",
                "keySource": "editor",
                "keyVariable": "OPENAI_API_KEY",
                "subscription": False,
                "local": False,
            }
            assert {model["provider"] for model in listed["models"]} == {"openai"}
            client.protocol.notify("pi/setCredentials", {"credentials": {}})

            # pi/login (Neovim's :PiLogin) writes auth.json as pi does; the next prompt uses it.
            result = await request(client, "pi/login", {"provider": "openai", "key": "sk-new"})
            assert Path(result["path"]) == path
            written = {"anthropic": oauth, "openai": {"type": "api_key", "key": "sk-new"}}
            assert path.read_text() == json.dumps(written, indent=2)
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            llm.enqueue(replies.text("Logged in."))
            await request(client, "pi/prompt", {"text": "once more"})
            assert bearer(llm) == "Bearer sk-new"
            with pytest.raises(JsonRpcException, match="subscription login for anthropic"):
                await request(client, "pi/login", {"provider": "anthropic", "key": "k"})
            assert json.loads(path.read_text())["anthropic"] == oauth
            with pytest.raises(JsonRpcException, match="subscription login"):
                await request(client, "pi/logout", {"provider": "anthropic"})
            result = await request(client, "pi/logout", {"provider": "openai"})
            assert result["removed"] is True
            assert json.loads(path.read_text()) == {"anthropic": oauth}
            assert (await request(client, "pi/logout", {"provider": "openai"}))["removed"] is False
            state = await request(client, "pi/state", {})
            assert state["model"]["keyStatus"] == "local"  # the placeholder of its own endpoint


async def test_a_subscription_login_gives_a_clear_message_before_any_request(tmp_path, workspace):
    home = tmp_path / "home"
    oauth = {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}
    write_json(home / "agent" / "auth.json", {"anthropic": oauth})
    write_json(
        home / "agent" / "settings.json",
        {"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"},
    )
    async with server(workspace, home) as client:
        diagnostics = (await request(client, "pi/resources", {}))["diagnostics"]
        [problem] = [item for item in diagnostics if item["path"].endswith("auth.json")]
        assert (
            "subscription login" in problem["message"]
            and ":PiLogin anthropic" in problem["message"]
        )
        state = await request(client, "pi/state", {})
        assert state["model"]["keyStatus"] == "missing"
        with pytest.raises(JsonRpcException) as raised:
            await request(client, "pi/prompt", {"text": "hello"})
        assert raised.value.code == -32022
        assert "subscription login (OAuth) for anthropic" in str(raised.value)
        assert not list((workspace / ".pi").rglob("*.jsonl")), "a refused prompt wrote a session"
        providers = (await request(client, "pi/models", {}))["providers"]
        anthropic = next(p for p in providers if p["provider"] == "anthropic")
        assert anthropic["subscription"] is True and anthropic["keySource"] is None


async def test_a_refused_key_is_reported_once_and_a_fake_key_never_leaks(tmp_path, workspace):
    home = tmp_path / "home"
    async with ScriptedLLM() as llm:
        write_json(
            home / "agent" / "models.json",
            {"providers": {"gateway": scripted_provider(llm, FAKE_KEY)}},
        )
        async with server(workspace, home, {"model": "gateway/scripted"}) as client:
            # Every kind of failure quotes the key, as some providers do.
            llm.enqueue(
                replies.error(401, f"Incorrect API key provided: {FAKE_KEY}"),
                replies.error(403, f"Key {FAKE_KEY} may not use this model"),
                replies.error(400, f"bad request for {FAKE_KEY}"),
                replies.error(500, f"upstream rejected {FAKE_KEY}"),
                replies.mid_stream_error(message=f"stream broke for {FAKE_KEY}"),
            )
            results = [
                await request(client, "pi/prompt", {"text": f"attempt {attempt}"})
                for attempt in range(5)
            ]
            assert [result["stopReason"] for result in results] == ["error"] * 5
            auth_errors = client.pi_events.events()
            auth_errors = [event for event in auth_errors if event["type"] == "auth_error"]
            assert [(event["status"], event["provider"]) for event in auth_errors] == [
                (401, "gateway"),
                (403, "gateway"),
            ]
            assert auth_errors[0]["keySource"] == "models.json"
            assert "models.json" in auth_errors[0]["message"]
            assert "Incorrect API key provided: ***" in auth_errors[0]["message"]
            client.protocol.notify("pi/setCredentials", {"credentials": {"other": FAKE_KEY}})
            with pytest.raises(JsonRpcException) as raised:
                await request(client, "pi/login", {"provider": "x", "key": f"{FAKE_KEY}\nmore"})
            logs = list((home / "state").rglob("*.log"))
            assert logs, "the server wrote no log file to check"
            texts = [
                json.dumps(client.pi_events.notifications),
                json.dumps(results),
                str(raised.value),
                *(path.read_text() for path in (workspace / ".pi").rglob("*.jsonl")),
                *(path.read_text() for path in logs),
                *(message.message for message in client.log_messages),
            ]
        assert all(
            llm_header == f"Bearer {FAKE_KEY}" for llm_header in map(bearer_of, llm.request_headers)
        )
    assert len(texts) >= 5 and any("***" in text for text in texts)
    leaks = [text[:200] for text in texts if FAKE_KEY in text]
    assert not leaks, f"the fake key leaked: {leaks}"


def bearer_of(headers: dict) -> str:
    return headers.get("Authorization", "")
