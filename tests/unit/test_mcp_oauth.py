"""The pure parts of MCP sign-in: pi's keys for ``mcp-auth.json`` (JavaScript's URL form), the
state a server's entry keeps across writes, and the one-shot loopback listener the browser comes
back to. The whole flow runs against a real OAuth server in tests/e2e/test_mcp_oauth.py."""

from __future__ import annotations

import json
import stat

import httpx
import pytest

from pi_lsp.mcp.oauth import LoopbackCallback, SignInFailed, sign_in
from pi_lsp.mcp.oauth_store import McpAuthFile, ServerTokenStorage, canonical_url


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("https://Example.COM", "https://example.com/"),
        ("https://example.com:443/mcp", "https://example.com/mcp"),
        ("http://127.0.0.1:8080/mcp?x=1", "http://127.0.0.1:8080/mcp?x=1"),
        ("http://example.com:80", "http://example.com/"),
        ("http://[::1]:9000/mcp", "http://[::1]:9000/mcp"),
    ],
)
def test_urls_are_keyed_as_javascript_writes_them(url, canonical):
    assert canonical_url(url) == canonical


def test_an_entry_is_kept_per_server_name_and_url(tmp_path):
    file = McpAuthFile(tmp_path / "agent" / "mcp-auth.json")
    file.update("docs", "https://example.com/mcp", lambda state: {**state, "tokens": {"a": 1}})
    file.update("docs-2", "https://example.com/mcp", lambda state: {**state, "tokens": {"b": 2}})
    stored = json.loads(file.path.read_text())
    assert set(stored) == {
        "mcp__docs|https://example.com/mcp",
        "mcp__docs_2|https://example.com/mcp",
    }
    assert file.load("docs", "https://example.com/mcp") == {
        "serverUrl": "https://example.com/mcp",
        "tokens": {"a": 1},
    }
    assert stat.S_IMODE(file.path.stat().st_mode) == 0o600
    assert file.remove("docs", "https://example.com/mcp") is True
    assert file.remove("docs", "https://example.com/mcp") is False
    assert file.load("docs", "https://example.com/mcp") is None


def test_a_state_written_for_another_url_is_not_used(tmp_path):
    path = tmp_path / "mcp-auth.json"
    path.write_text(
        json.dumps({"mcp__docs|https://a.example/": {"serverUrl": "https://b.example/"}})
    )
    assert McpAuthFile(path).load("docs", "https://a.example") is None


async def test_the_loopback_listener_takes_one_redirect():
    callback = LoopbackCallback()
    await callback.listen()
    try:
        async with httpx.AsyncClient() as browser:
            elsewhere = await browser.get(f"http://127.0.0.1:{callback.port}/favicon.ico")
            assert elsewhere.status_code == 404
            page = await browser.get(callback.redirect_url, params={"code": "c0de", "state": "s"})
        assert page.status_code == 200 and "Signed in" in page.text
        assert await callback.wait(5) == {"code": "c0de", "state": "s"}
    finally:
        await callback.close()


async def test_a_refusal_or_no_answer_is_a_failed_sign_in():
    refused = LoopbackCallback()
    await refused.listen()
    try:
        async with httpx.AsyncClient() as browser:
            page = await browser.get(
                refused.redirect_url,
                params={"error": "access_denied", "error_description": "the user said no"},
            )
        assert page.status_code == 400 and "the user said no" in page.text
        assert (await refused.wait(5))["error"] == "access_denied"
    finally:
        await refused.close()
    unanswered = LoopbackCallback()
    await unanswered.listen()
    try:
        with pytest.raises(SignInFailed, match="no answer from the authorization page"):
            await unanswered.wait(0)
    finally:
        await unanswered.close()


async def test_a_bad_callback_port_is_a_clear_sign_in_failure(tmp_path):
    storage = ServerTokenStorage(McpAuthFile(tmp_path / "mcp-auth.json"), "x", "http://a.test/")

    async def never_opened(page: str) -> None:
        raise AssertionError(page)

    for settings in ({"callbackPort": "eighty"}, {"callbackPort": 70000}):
        with pytest.raises(SignInFailed, match="must be a port number"):
            await sign_in("http://a.test/mcp", storage, settings, {}, never_opened)


async def test_a_pasted_redirect_is_checked_against_the_sign_in_that_waits():
    callback = LoopbackCallback.for_settings({"callbackUrl": "http://localhost/back"})
    await callback.listen()
    try:
        assert callback.redirect_url == f"http://localhost:{callback.port}/back"  # as written
        with pytest.raises(SignInFailed, match="no sign-in is waiting"):
            callback.paste(f"{callback.redirect_url}?code=c&state=s")
        callback.expect("https://as.test/authorize?client_id=x&state=s")
        for wrong, why in [
            ("callback?code=c", "full redirect URL"),
            (f"http://localhost:{callback.port}/callback?code=c&state=s", "does not match"),
            (f"http://127.0.0.1:{callback.port}/back?code=c&state=s", "does not match"),
            (f"{callback.redirect_url}?code=c&state=other", "different sign-in"),
            (f"{callback.redirect_url}?state=s", "does not contain an authorization code"),
        ]:
            with pytest.raises(SignInFailed, match=why):
                callback.paste(wrong)
        callback.paste(f" {callback.redirect_url}?code=c0de&state=s&iss=https%3A%2F%2Fas.test\n")
        assert await callback.wait(5) == {"code": "c0de", "state": "s", "iss": "https://as.test"}
    finally:
        await callback.close()
