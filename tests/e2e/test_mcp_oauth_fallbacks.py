"""MCP sign-in beyond the plain flow, end to end against the real OAuth-protected server
(``tests/mcp/oauth_server.py``) and the real pi-lsp, each as pi 1.6 does it: a configured
authorization server metadata document and scope, a token revoked before its expiry, a refresh
that fails on the network, a redirected URL pasted by hand, and pi's Client ID Metadata
Document instead of a registration."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from pi_lsp.client import PiRequestError
from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request
from tests.e2e.test_mcp import serving, tool_results, wait_for_state
from tests.e2e.test_mcp_oauth import (
    SHOW_DOCUMENT,
    approve_in_browser,
    auth_entries,
    call_token_origin,
    oauth_server,
)


@contextlib.asynccontextmanager
async def secure_server(
    workspace, tmp_path, *options: str, oauth: Callable[[str], dict] | None = None
) -> AsyncIterator[tuple[Any, Any, str]]:
    """The OAuth server (with ``options``) as the server ``secure`` of a running pi-lsp, its
    ``oauth`` made from the server's base URL; it needs sign-in. Yields the client, the
    scripted model and the server's URL."""
    with oauth_server(*options) as url:
        entry: dict[str, Any] = {"url": url, "exposure": "direct"}
        if oauth is not None:
            entry["oauth"] = oauth(url.removesuffix("/mcp"))
        async with serving(workspace, tmp_path, {"secure": entry}, capabilities=SHOW_DOCUMENT) as (
            client,
            llm,
        ):
            await wait_for_state(client, "secure", "needs-auth")
            yield client, llm, url


async def sign_in(client) -> None:
    login = asyncio.ensure_future(request(client, "pi/mcpLogin", {"name": "secure"}))
    browser = asyncio.ensure_future(approve_in_browser(client))
    await asyncio.wait([login, browser], return_when=asyncio.FIRST_COMPLETED)
    if login.done() and not browser.done():
        browser.cancel()
        raise AssertionError(f"the sign-in ended before a page was shown: {login.result()}")
    await browser
    assert (await login)["state"] == "connected"


async def reconnect_expired(
    client, agent, change: Callable[[dict], None] = lambda stored: None
) -> None:
    """The stored access token expired (as pi records it; ``change`` edits the entry more),
    and the server connects again."""
    entries = auth_entries(agent)
    [stored] = entries.values()
    stored["tokensExpireAt"] = int(time.time() * 1000) - 60_000
    change(stored)
    (agent / "mcp-auth.json").write_text(json.dumps(entries, indent=2))
    await request(client, "pi/mcpReconnect", {"name": "secure"})


async def refreshed_on_reconnect(client, llm, workspace, agent) -> str:
    """Which grant issued the token a call uses after the expired one was refreshed."""
    await reconnect_expired(client, agent)
    await wait_for_state(client, "secure", "connected")
    return await call_token_origin(client, llm, workspace, "after-refresh")


async def test_a_configured_metadata_document_and_scope_replace_discovery(workspace, tmp_path):
    agent = tmp_path / "agent"

    def oauth(base: str) -> dict:
        document = f"{base}/.well-known/oauth-authorization-server"
        return {"authServerMetadataUrl": document, "scope": "alpha beta"}

    async with secure_server(workspace, tmp_path, "--misdirect", oauth=oauth) as (
        client,
        llm,
        url,
    ):
        await sign_in(client)
        page = urlsplit(client.shown_documents[0].uri)
        assert f"{page.scheme}://{page.netloc}/mcp" == url  # not the misdirected server
        assert parse_qs(page.query)["scope"] == ["alpha beta"]
        [stored] = auth_entries(agent).values()
        assert stored["tokens"]["scope"] == "alpha beta"
        assert "discovery" not in stored  # pi never caches a configured document
        assert await call_token_origin(client, llm, workspace, "c1") == "authorization_code"
        # The refresh finds the token endpoint in the document too.
        assert await refreshed_on_reconnect(client, llm, workspace, agent) == "refresh_token"


async def test_a_revoked_token_is_refreshed_then_needs_sign_in(workspace, tmp_path):
    agent = tmp_path / "agent"
    async with secure_server(workspace, tmp_path) as (client, llm, url):
        await sign_in(client)
        signed_in = auth_entries(agent)[f"mcp__secure|{url}"]["tokens"]

        # The server revokes the token long before it expires: the refresh token gets a new
        # one, and the call goes through.
        llm.enqueue(
            replies.tool_calls([("r1", "mcp__secure__revoke_my_token", {})]),
            replies.text("revoked"),
        )
        await request(client, "pi/prompt", {"text": "revoke"})
        assert await call_token_origin(client, llm, workspace, "c1") == "refresh_token"
        refreshed = auth_entries(agent)[f"mcp__secure|{url}"]["tokens"]
        assert refreshed["access_token"] != signed_in["access_token"]
        assert not list(agent.glob("mcp-auth-refresh-*"))

        # Revoked again, and the refresh token refused too: the server needs a sign-in.
        entries = auth_entries(agent)
        entries[f"mcp__secure|{url}"]["tokens"]["refresh_token"] = "spent"
        (agent / "mcp-auth.json").write_text(json.dumps(entries, indent=2))
        llm.enqueue(
            replies.tool_calls([("r2", "mcp__secure__revoke_my_token", {})]),
            replies.text("revoked"),
            replies.tool_calls([("c2", "mcp__secure__token_origin", {})]),
            replies.text("ok"),
        )
        await request(client, "pi/prompt", {"text": "revoke"})
        await request(client, "pi/prompt", {"text": "which grant?"})
        assert tool_results(workspace)[-1]["isError"] is True
        await wait_for_state(client, "secure", "needs-auth")


async def test_a_refresh_failing_on_the_network_releases_pis_refresh_lock(workspace, tmp_path):
    agent = tmp_path / "agent"

    def authorization_server_gone(stored: dict) -> None:
        # Nothing listens on port 9 (discard).
        metadata = stored["discovery"]["authorizationServerMetadata"]
        metadata["token_endpoint"] = "http://127.0.0.1:9/token"

    async with secure_server(workspace, tmp_path) as (client, _, _):
        await sign_in(client)
        await reconnect_expired(client, agent, authorization_server_gone)
        failed = await wait_for_state(client, "secure", "failed", "needs-auth")
        assert failed["lastError"]
        assert not list(agent.glob("mcp-auth-refresh-*"))  # released at once, not stale


async def test_a_pasted_redirect_url_finishes_the_sign_in(workspace, tmp_path):
    async with secure_server(workspace, tmp_path) as (client, _, _):
        try:
            await request(
                client, "pi/mcpLogin", {"name": "secure", "redirectUrl": "http://x/callback"}
            )
        except PiRequestError as error:
            assert 'no sign-in to MCP server "secure" is waiting' in str(error)
        else:
            raise AssertionError("a paste without a sign-in was taken")

        login = asyncio.ensure_future(request(client, "pi/mcpLogin", {"name": "secure"}))
        while not client.shown_documents:
            await asyncio.sleep(0.05)
        # The browser runs elsewhere: it shows the redirect it could not follow.
        async with httpx.AsyncClient(follow_redirects=False) as browser:
            approved = await browser.get(client.shown_documents[0].uri)
        redirected = approved.headers["location"]

        for wrong, why in [
            ("not a url", "full redirect URL"),
            (redirected.replace("/callback", "/elsewhere"), "does not match"),
            (redirected.replace("state=", "state=x"), "different sign-in"),
        ]:
            try:
                await request(client, "pi/mcpLogin", {"name": "secure", "redirectUrl": wrong})
            except PiRequestError as error:
                assert why in str(error) and error.code == -32602
            else:
                raise AssertionError(f"{wrong} was taken")

        pasted = await request(
            client, "pi/mcpLogin", {"name": "secure", "redirectUrl": f"  {redirected}\n"}
        )
        assert pasted["state"] == "connected"
        assert (await login)["state"] == "connected"


async def test_pis_client_id_metadata_document_identifies_the_client(workspace, tmp_path):
    agent = tmp_path / "agent"
    async with secure_server(workspace, tmp_path, "--cimd") as (client, llm, _):
        await sign_in(client)
        # No iss in the server's authorization responses: the document and the redirect path
        # are specific to the MCP server, as pi makes them.
        query = parse_qs(urlsplit(client.shown_documents[0].uri).query)
        [document] = query["client_id"]
        server_id = document.removeprefix("https://pi.dev/oauth/").removesuffix("/client.json")
        assert len(server_id) == 12
        assert urlsplit(query["redirect_uri"][0]).path == f"/callback/{server_id}"
        [stored] = auth_entries(agent).values()
        assert "tokens" in stored and "clientInformation" not in stored  # pi stores none
        assert await call_token_origin(client, llm, workspace, "c1") == "authorization_code"
        assert await refreshed_on_reconnect(client, llm, workspace, agent) == "refresh_token"
