"""pi 1.6 and pi-lsp share ``mcp-auth.json``: a sign-in pi 1.6 stored is used by pi-lsp and the
other way round. pi's side is its own ``McpOAuthCredentialStore`` under pi-mcp's
``McpOAuthProvider`` (``tests/reference/mcp_auth_reference.mjs``); pi-lsp's is the SDK
``TokenStorage`` its connections use (``pi_lsp/mcp/oauth_store.py``), and, at the end, the real
server connecting with a sign-in pi stored."""

from __future__ import annotations

import asyncio
import json
import stat
import time
from pathlib import Path

import httpx
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from pi_lsp.llm.auth_store import locked_like_pi
from pi_lsp.mcp.oauth import sign_in
from pi_lsp.mcp.oauth_store import McpAuthFile, ServerTokenStorage
from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request as request_
from tests.e2e.test_mcp import serving, tool_results, wait_for_state
from tests.e2e.test_mcp_oauth import oauth_server

from .harness import REFERENCE_DIR, run_node_script

SCRIPT = REFERENCE_DIR / "mcp_auth_reference.mjs"
SERVER, URL = "my-docs", "https://Docs.Example.com:443"
CLIENT = {"client_id": "client-7", "redirect_uris": ["http://127.0.0.1:5555/callback"]}
TOKENS = {
    "access_token": "at-1",
    "token_type": "Bearer",
    "expires_in": 3600,
    "refresh_token": "rt-1",
}
DISCOVERY = {
    "authorizationServerUrl": "https://auth.example.com/",
    "authorizationServerMetadata": {
        "issuer": "https://auth.example.com/",
        "authorization_endpoint": "https://auth.example.com/authorize",
        "token_endpoint": "https://auth.example.com/token",
        "response_types_supported": ["code"],
    },
}
PI_SIGN_IN = {"clientInformation": CLIENT, "tokens": TOKENS, "discovery": DISCOVERY}
PI_SIGN_IN = {"clientInformation": CLIENT, "tokens": TOKENS, "discovery": DISCOVERY}
"""What pi 1.6 stores when a sign-in ends."""


def pi16(reference_node: Path, file: Path, write: dict | None = None, **options) -> dict:
    request = {"file": str(file), "server": SERVER, "url": URL, "write": write, **options}
    return json.loads(
        run_node_script(reference_node, SCRIPT, [], stdin=json.dumps(request).encode())
    )


def test_pi_lsp_uses_the_sign_in_pi_16_stored(reference_node, tmp_path):
    file = tmp_path / "mcp-auth.json"
    pi16(reference_node, file, PI_SIGN_IN)
    storage = ServerTokenStorage(McpAuthFile(file), SERVER, URL)
    tokens = asyncio.run(storage.get_tokens())
    assert (tokens.access_token, tokens.refresh_token) == ("at-1", "rt-1")
    assert asyncio.run(storage.get_client_info()).client_id == "client-7"
    state = storage.state()
    assert time.time() + 3000 < storage.expires_at(state) <= time.time() + 3600
    assert storage.discovery(state) == DISCOVERY


def test_pi_16_uses_the_sign_in_pi_lsp_stored(reference_node, tmp_path):
    file = tmp_path / "mcp-auth.json"
    storage = ServerTokenStorage(McpAuthFile(file), SERVER, URL)
    asyncio.run(storage.set_client_info(OAuthClientInformationFull.model_validate(CLIENT)))
    asyncio.run(storage.save_discovery(DISCOVERY))
    asyncio.run(storage.set_tokens(OAuthToken.model_validate(TOKENS)))
    read = pi16(reference_node, file)
    assert (read["tokens"], read["discovery"]) == (TOKENS, DISCOVERY)
    assert read["clientInformation"].items() >= CLIENT.items()
    text = file.read_text()
    assert text == json.dumps(json.loads(text), indent=2) + "\n"  # JSON.stringify(_, null, 2)
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    [entry] = json.loads(text).values()
    assert time.time() * 1000 < entry["tokensExpireAt"] <= (time.time() + 3600) * 1000


def test_pi_16_waits_for_pi_lsps_lock_on_the_file(reference_node, tmp_path):
    file = tmp_path / "mcp-auth.json"
    pi16(reference_node, file, PI_SIGN_IN)
    with locked_like_pi(file):
        assert pi16(reference_node, file) == {"error": "ELOCKED"}
    assert pi16(reference_node, file)["tokens"] == TOKENS


def test_a_sign_in_pi_stored_under_the_url_alone_is_taken_over(reference_node, tmp_path):
    file = tmp_path / "mcp-auth.json"
    pi16(reference_node, file, PI_SIGN_IN)
    [(key, state)] = json.loads(file.read_text()).items()
    assert key == "mcp__my_docs|https://docs.example.com/"
    file.write_text(json.dumps({"https://docs.example.com/": state}))  # older pi's key
    storage = ServerTokenStorage(McpAuthFile(file), SERVER, URL)
    assert asyncio.run(storage.get_tokens()).access_token == "at-1"
    assert list(json.loads(file.read_text())) == [key]


def test_a_refresh_takes_pi_16s_refresh_lock_of_the_server(reference_node, tmp_path):
    file = tmp_path / "mcp-auth.json"
    [pis] = pi16(reference_node, file, PI_SIGN_IN, refreshLock=True)["refreshLocks"]
    with McpAuthFile(file).refresh_lock(SERVER, URL):
        ours = [path.name for path in tmp_path.glob("mcp-auth-refresh-*")]
    assert ours == [pis]
    assert not list(tmp_path.glob("mcp-auth-refresh-*"))  # released


async def test_the_server_connects_with_a_sign_in_pi_16_wrote(reference_node, tmp_path):
    """A real sign-in's state, stored by pi 1.6's own code, is all the real pi-lsp server needs
    to connect to the OAuth-protected server and call its tool."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    with oauth_server() as url:
        scratch = ServerTokenStorage(McpAuthFile(tmp_path / "scratch.json"), "secure", url)

        async def browser(page: str) -> None:
            async with httpx.AsyncClient(follow_redirects=True) as client:
                await client.get(page)

        await sign_in(url, scratch, {}, {}, browser)
        state = scratch.state()
        agent = tmp_path / "agent"
        agent.mkdir()
        written = {key: state[key] for key in ("clientInformation", "tokens", "discovery")}
        request = {"file": str(agent / "mcp-auth.json"), "server": "secure", "url": url}
        stdin = json.dumps({**request, "write": written}).encode()
        assert json.loads(run_node_script(reference_node, SCRIPT, [], stdin=stdin))["tokens"]

        servers = {"secure": {"url": url, "exposure": "direct"}}
        async with serving(workspace, tmp_path, servers) as (client, llm):
            await wait_for_state(client, "secure", "connected")
            llm.enqueue(
                replies.tool_calls([("c1", "mcp__secure__token_origin", {})]), replies.text("ok")
            )
            await request_(client, "pi/prompt", {"text": "which grant?"})
    [origin] = tool_results(workspace)
    assert origin["content"] == [{"type": "text", "text": "authorization_code"}]


def test_pis_client_id_metadata_documents_are_chosen_as_pi_16_chooses_them(reference_node):
    from pi_lsp.mcp.oauth_documents import offers_document, server_specific_path

    settings = [
        {},
        {"clientRegistration": "dcr"},
        {"clientRegistration": "cimd"},
        {"clientId": "c"},
        {"clientName": "Claude Code"},
        {"callbackUrl": "http://localhost:8765/callback"},
        {"callbackUrl": "http://127.0.0.1/elsewhere"},
        {"callbackUrl": "http://[::1]:8765/callback"},
    ]
    urls = ["https://Docs.Example.com:443/mcp", "http://127.0.0.1:8080/mcp?x=1#frag"]
    request = json.dumps({"settings": settings, "serverUrls": urls}).encode()
    pis = json.loads(
        run_node_script(
            reference_node, REFERENCE_DIR / "mcp_documents_reference.mjs", [], stdin=request
        )
    )
    assert [offers_document(each) for each in settings] == pis["offers"]
    assert [server_specific_path("/callback", url) for url in urls] == pis["paths"]
