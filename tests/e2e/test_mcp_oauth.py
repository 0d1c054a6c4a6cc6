"""Signing in to an OAuth-protected MCP server over LSP, end to end: a real streamable-HTTP server
built with the SDK's server-side auth (``tests/mcp/oauth_server.py``: its own authorization
server, dynamic client registration, PKCE, refresh tokens) on 127.0.0.1, the real pi-lsp, and
a "browser" that follows the page ``window/showDocument`` sent with an HTTP client, so the
authorization server redirects it to pi-lsp's loopback listener."""

from __future__ import annotations

import asyncio
import contextlib
import json
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from lsprotocol import types

from pi_lsp.client import PiRequestError
from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request
from tests.e2e.test_mcp import (
    MCP_DIR,
    free_port,
    python_server,
    serving,
    tool_results,
    wait_for_state,
)

SHOW_DOCUMENT = types.ClientCapabilities(
    window=types.WindowClientCapabilities(
        show_document=types.ShowDocumentClientCapabilities(support=True)
    )
)


@contextlib.contextmanager
def oauth_server(*options: str) -> Iterator[str]:
    """``tests/mcp/oauth_server.py`` on a free port; yields its MCP URL."""
    with python_server(str(MCP_DIR / "oauth_server.py"), "{port}", *options) as port:
        yield f"http://127.0.0.1:{port}/mcp"


async def approve_in_browser(client) -> httpx.Response:
    """The user's browser: opens the page pi-lsp showed and follows the redirects."""
    while not client.shown_documents:
        await asyncio.sleep(0.05)
    [shown] = client.shown_documents
    assert shown.external is True
    async with httpx.AsyncClient(follow_redirects=True) as browser:
        return await browser.get(shown.uri)


async def call_token_origin(client, llm, workspace: Path, call_id: str) -> str:
    llm.enqueue(
        replies.tool_calls([(call_id, "mcp__secure__token_origin", {})]), replies.text("ok")
    )
    await request(client, "pi/prompt", {"text": "which grant?"})
    return tool_results(workspace)[-1]["content"][0]["text"]


def auth_entries(agent: Path) -> dict:
    return json.loads((agent / "mcp-auth.json").read_text())


async def test_sign_in_call_refresh_and_sign_out(workspace, tmp_path):
    agent = tmp_path / "agent"
    with oauth_server() as url:
        servers = {"secure": {"url": url, "exposure": "direct"}}
        async with serving(workspace, tmp_path, servers, capabilities=SHOW_DOCUMENT) as (
            client,
            llm,
        ):
            locked = await wait_for_state(client, "secure", "needs-auth")
            assert "/mcp login secure" in locked["lastError"]

            login = asyncio.ensure_future(request(client, "pi/mcpLogin", {"name": "secure"}))
            page = await approve_in_browser(client)
            assert page.status_code == 200 and "Signed in" in page.text
            assert page.url.host == "127.0.0.1" and page.url.path == "/callback"
            status = await login
            assert (status["state"], status["toolCount"]) == ("connected", 2)

            key = f"mcp__secure|{url}"
            stored = auth_entries(agent)[key]
            assert stat.S_IMODE((agent / "mcp-auth.json").stat().st_mode) == 0o600
            assert stored["serverUrl"] == url
            assert stored["tokens"]["token_type"].lower() == "bearer"
            assert stored["tokensExpireAt"] > time.time() * 1000
            assert stored["clientInformation"]["client_id"]
            assert stored["discovery"]["authorizationServerMetadata"]["token_endpoint"]
            assert await call_token_origin(client, llm, workspace, "c1") == "authorization_code"

            # The access token expired (as pi records it): the next connection refreshes it
            # and saves the new tokens.
            entries = auth_entries(agent)
            entries[key]["tokensExpireAt"] = int(time.time() * 1000) - 60_000
            (agent / "mcp-auth.json").write_text(json.dumps(entries, indent=2))
            await request(client, "pi/mcpReconnect", {"name": "secure"})
            await wait_for_state(client, "secure", "connected")
            assert await call_token_origin(client, llm, workspace, "c2") == "refresh_token"
            refreshed = auth_entries(agent)[key]
            assert refreshed["tokens"]["access_token"] != stored["tokens"]["access_token"]
            assert refreshed["tokensExpireAt"] > time.time() * 1000
            assert not list(agent.glob("mcp-auth-refresh-*"))  # pi's refresh lock, released

            logout = await request(client, "pi/mcpLogout", {"name": "secure"})
            assert logout["removed"] is True
            assert key not in auth_entries(agent)
            await wait_for_state(client, "secure", "needs-auth")
            again = await request(client, "pi/mcpLogout", {"name": "secure"})
            assert again["removed"] is False


async def test_sign_in_errors_are_clear(workspace, tmp_path):
    servers = {
        "local": {"command": sys.executable, "args": ["-c", "pass"]},
        "keyed": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
    }
    async with serving(workspace, tmp_path, servers) as (client, _):
        for name, why in [
            ("local", 'MCP server "local" is not an HTTP server'),
            ("keyed", 'sends an "Authorization" header'),
            ("nope", "no MCP server named 'nope'"),
        ]:
            try:
                await request(client, "pi/mcpLogin", {"name": name})
            except PiRequestError as error:
                assert why in str(error)
            else:
                raise AssertionError(f"pi/mcpLogin {name} succeeded")


async def test_a_client_that_cannot_open_pages_gets_the_link_in_a_message(workspace, tmp_path):
    with oauth_server() as url:
        servers = {"secure": {"url": url, "exposure": "direct"}}
        async with serving(workspace, tmp_path, servers) as (client, _):
            await wait_for_state(client, "secure", "needs-auth")
            login = asyncio.ensure_future(request(client, "pi/mcpLogin", {"name": "secure"}))
            said = 'Open this page to sign in to MCP server "secure": '
            while not any(said in params.message for params in client.messages):
                await asyncio.sleep(0.05)
            [message] = [params.message for params in client.messages if said in params.message]
            async with httpx.AsyncClient(follow_redirects=True) as browser:
                await browser.get(message.removeprefix(said))
            assert (await login)["state"] == "connected"
            assert not client.shown_documents


async def test_a_client_registered_beforehand_in_mcp_json_signs_in(workspace, tmp_path):
    callback_port = free_port()
    with oauth_server("--client", f"pi-lsp-test:s3cret:{callback_port}") as url:
        oauth = {"clientId": "pi-lsp-test", "clientSecret": "s3cret", "callbackPort": callback_port}
        servers = {"secure": {"url": url, "exposure": "direct", "oauth": oauth}}
        async with serving(workspace, tmp_path, servers, capabilities=SHOW_DOCUMENT) as (
            client,
            _,
        ):
            await wait_for_state(client, "secure", "needs-auth")
            login = asyncio.ensure_future(request(client, "pi/mcpLogin", {"name": "secure"}))
            page = await approve_in_browser(client)
            assert page.url.port == callback_port
            assert "client_id=pi-lsp-test" in client.shown_documents[0].uri
            assert (await login)["state"] == "connected"
    [stored] = auth_entries(tmp_path / "agent").values()
    assert "tokens" in stored and "clientInformation" not in stored  # pi keeps it in mcp.json
