"""Signing in to OAuth-protected HTTP MCP servers, on the SDK's OAuth client.

As in pi 1.6, a connection never opens a browser by itself: it sends the stored access token,
refreshes it when it has expired or the server rejected it (:mod:`pi_lsp.mcp.oauth_provider`;
:class:`ServerTokenStorage` saves the new tokens to ``mcp-auth.json``) and, when that is not
enough, fails with the server in the ``needs-auth`` state. The user signs in on purpose
(``pi/mcpLogin``, ``/mcp login``): the SDK discovers the authorization server (or reads
``oauth.authServerMetadataUrl``), identifies with pi's Client ID Metadata Document on pi.dev
(``oauth_documents.py``), registers a client dynamically or uses the ``oauth.clientId`` of
``mcp.json``, and sends the user to the authorization page, which the editor opens
(``open_page``). The redirect comes back to a one-shot listener on a loopback port
(:class:`LoopbackCallback`, where ``oauth.callbackUrl``/``callbackPort`` say), or the user
pastes the redirected URL from the browser's address bar (:meth:`LoopbackCallback.paste`, pi's
fallback when the browser runs on another machine); either gives up after ``SIGN_IN_SECONDS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pi_lsp.mcp.oauth_store import ServerTokenStorage

logger = logging.getLogger(__name__)

SIGN_IN_SECONDS = 300.0
CLIENT_NAME = "pi"
"""pi registers as ``pi`` (``oauth.clientName`` changes it): servers that accept only known
clients accept pi-lsp as they accept pi."""
CALLBACK_HOST = "127.0.0.1"
CALLBACK_PATH = "/callback"
_REQUEST_HEAD_LIMIT = 16_384

OpenPage = Callable[[str], Awaitable[None]]


class SignInRequired(Exception):
    """The server wants a sign-in the user did not ask for (a background connection)."""


class SignInFailed(Exception):
    """A sign-in that did not end with tokens: the message says why, for the user."""


class LoopbackCallback:
    """A one-shot HTTP listener on a loopback address for the authorization server's redirect,
    which also takes the redirected URL pasted by hand."""

    def __init__(
        self, path: str = CALLBACK_PATH, host: str = CALLBACK_HOST, redirect_host: str = ""
    ) -> None:
        self.path = path
        self.host = host
        self.redirect_host = redirect_host or host
        self.port = 0
        self.expected_state: str | None = None
        self._result: asyncio.Future[dict[str, str]] | None = None
        self._server: asyncio.Server | None = None

    @classmethod
    def for_settings(cls, settings: Mapping[str, Any]) -> LoopbackCallback:
        """Where ``oauth.callbackUrl`` says, as pi listens: ``localhost`` is served on
        127.0.0.1, and the redirect URI keeps the host as written."""
        configured = urlsplit(str(settings.get("callbackUrl") or ""))
        written = (configured.hostname or CALLBACK_HOST).strip("[]")
        host = CALLBACK_HOST if written == "localhost" else written
        return cls(configured.path or CALLBACK_PATH, host, written)

    @property
    def redirect_url(self) -> str:
        host = f"[{self.redirect_host}]" if ":" in self.redirect_host else self.redirect_host
        return f"http://{host}:{self.port}{self.path}"

    async def listen(self, port: int = 0) -> None:
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._answer, self.host, port)
        self.port = self._server.sockets[0].getsockname()[1]

    def expect(self, authorization_url: str) -> None:
        """The sign-in's authorization request went out: the redirect must come to its redirect
        URI's path (a document's is specific to the server) with its state."""
        query = parse_qs(urlsplit(authorization_url).query)
        states = query.get("state")
        self.expected_state = states[0] if states else None
        redirect = (query.get("redirect_uri") or [""])[0]
        self.path = urlsplit(redirect).path or self.path

    async def wait(self, timeout: float) -> dict[str, str]:
        """The redirect's query parameters (``code``, ``state``, ``iss``…)."""
        assert self._result is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), timeout)
        except TimeoutError:
            raise SignInFailed(
                f"no answer from the authorization page within {timeout:g} s"
            ) from None

    def paste(self, redirected: str) -> None:
        """The URL the browser was redirected to, pasted by the user (pi's
        ``responseFromRedirectUrl``); :class:`SignInFailed` says what is wrong with it, and the
        sign-in goes on waiting."""
        if self._result is None or self._result.done() or self.expected_state is None:
            raise SignInFailed("no sign-in is waiting for its redirect")
        url = urlsplit(redirected.strip())
        if url.scheme not in ("http", "https") or not url.netloc:
            raise SignInFailed("expected the full redirect URL from the browser address bar")
        if (url.port, url.path) != (self.port, self.path) or (url.hostname or "").strip(
            "[]"
        ) != self.redirect_host:
            raise SignInFailed(
                f"the redirect URL does not match this sign-in's redirect URI {self.redirect_url}"
            )
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        if "error" in query:
            self._result.set_result(query)
            return
        if query.get("state") != self.expected_state:
            raise SignInFailed("the redirect URL belongs to a different sign-in")
        if not query.get("code"):
            raise SignInFailed("the redirect URL does not contain an authorization code")
        self._result.set_result(query)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            writer.close()
            return
        target = head[:_REQUEST_HEAD_LIMIT].split(b"\r\n", 1)[0].split(b" ")
        url = urlsplit(target[1].decode("latin-1") if len(target) > 1 else "")
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        if url.path != self.path or not ({"code", "error"} & query.keys()):
            await _respond(writer, 404, "Not the sign-in callback.")
            return
        if "error" in query:
            why = query.get("error_description") or query["error"]
            await _respond(writer, 400, f"The sign-in failed: {why}")
        else:
            await _respond(writer, 200, "Signed in to the MCP server. You may now close this page.")
        if self._result is not None and not self._result.done():
            self._result.set_result(query)


async def _respond(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    body = f"<!doctype html><title>pi</title><p>{html.escape(text)}</p>".encode()
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(OSError):
        await writer.drain()
    writer.close()


def oauth_provider(
    url: str,
    storage: ServerTokenStorage,
    settings: Mapping[str, Any],
    callback: LoopbackCallback | None = None,
    open_page: OpenPage | None = None,
) -> Any:
    """The SDK's OAuth client for the server at ``url``: interactive with a ``callback`` and an
    ``open_page``, else one that refreshes but raises :class:`SignInRequired` for a sign-in."""
    from mcp.shared.auth import AuthorizationCodeResult

    from pi_lsp.mcp.oauth_provider import ConfiguredScopeMetadata, PiOAuthProvider

    redirect = callback.redirect_url if callback else f"http://{CALLBACK_HOST}{CALLBACK_PATH}"
    metadata = ConfiguredScopeMetadata(
        client_name=str(settings.get("clientName") or CLIENT_NAME),
        redirect_uris=[redirect],  # type: ignore[list-item]  # pydantic parses the URL
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_post" if storage.client_secret else "none",
        scope=settings.get("scope") or None,
    )
    metadata._configured_scope = settings.get("scope") or None

    async def redirect_to(authorization_url: str) -> None:
        if open_page is None or callback is None:
            raise SignInRequired(authorization_url)
        callback.expect(authorization_url)
        await open_page(authorization_url)

    async def redirected() -> AuthorizationCodeResult:
        if callback is None:
            raise SignInRequired("no sign-in is under way")
        query = await callback.wait(SIGN_IN_SECONDS)
        if "error" in query:
            raise SignInFailed(query.get("error_description") or query["error"])
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    return PiOAuthProvider(url, metadata, storage, redirect_to, redirected, settings=settings)


async def sign_in(
    url: str,
    storage: ServerTokenStorage,
    settings: Mapping[str, Any],
    headers: Mapping[str, str],
    open_page: OpenPage,
    callback: LoopbackCallback | None = None,
) -> None:
    """Sign in to the server at ``url`` and store the tokens; :class:`SignInFailed` says why not.
    The redirect comes back to ``callback`` (:meth:`LoopbackCallback.for_settings` by default).

    One request to the server starts the SDK's flow (its 401 does); stored tokens the server
    still accepts need no page at all."""
    from mcp.shared._httpx_utils import create_mcp_http_client

    callback = callback or LoopbackCallback.for_settings(settings)
    port = await asyncio.to_thread(_callback_port, settings, storage)
    try:
        await callback.listen(port)
    except OSError as busy:
        raise SignInFailed(
            f"cannot listen on {callback.host}:{port} for the redirect: {busy}"
        ) from None
    try:
        await asyncio.to_thread(
            _forget_client_of_another_redirect, storage, callback.redirect_url, settings
        )
        auth = oauth_provider(url, storage, settings, callback, open_page)
        async with create_mcp_http_client(headers=dict(headers), auth=auth) as http:
            response = await http.post(
                url,
                json={"jsonrpc": "2.0", "id": "pi-sign-in", "method": "ping"},
                headers={"Accept": "application/json, text/event-stream"},
            )
    except SignInFailed:
        raise
    except Exception as error:  # noqa: BLE001 - every failure of the flow is the user's answer
        raise SignInFailed(_describe(error)) from None
    finally:
        await callback.close()
    if response.status_code in (401, 403):
        raise SignInFailed(f"the server still refused the sign-in (HTTP {response.status_code})")


def _callback_port(settings: Mapping[str, Any], storage: ServerTokenStorage) -> int:
    """``oauth.callbackPort`` (or ``callbackUrl``'s port), else the port of the stored client's
    redirect URI (its registration stays valid), else a random one."""
    try:
        configured = urlsplit(str(settings.get("callbackUrl") or "")).port or settings.get(
            "callbackPort"
        )
    except ValueError:
        configured = "?"
    if configured:
        if not isinstance(configured, int) or not 0 < configured < 65536:
            raise SignInFailed("oauth.callbackPort (or callbackUrl's port) must be a port number")
        return configured
    information = storage.state().get("clientInformation") or {}
    registered = (information.get("redirect_uris") or [None])[0]
    port = urlsplit(registered).port if isinstance(registered, str) else None
    if port and not storage.client_id and _is_free(port):
        return port
    return 0


def _is_free(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        try:
            probe.bind((CALLBACK_HOST, port))
        except OSError:
            return False
    return True


def _forget_client_of_another_redirect(
    storage: ServerTokenStorage, redirect_url: str, settings: Mapping[str, Any]
) -> None:
    """A client registered for another redirect URI cannot sign in here, and ``cimd`` replaces
    a registered client (pi's ``stateForSignIn``): register again or use the document."""
    information = storage.state().get("clientInformation")
    if isinstance(information, dict) and (
        redirect_url not in (information.get("redirect_uris") or [])
        or settings.get("clientRegistration") == "cimd"
    ):
        storage.file.update(
            storage.server,
            storage.url,
            lambda state: {k: v for k, v in state.items() if k != "clientInformation"},
        )


def _describe(error: BaseException) -> str:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return str(error) or type(error).__name__
