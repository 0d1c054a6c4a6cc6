"""pi 1.6's ``mcp-auth.json``: the OAuth state of each HTTP MCP server, shared with pi.

The file sits in the agent directory beside pi's own, mode 0600, and is read and written under
pi's lock on it (``proper-lockfile``'s ``mcp-auth.json.lock`` directory, as pi's
``FileAuthStorageBackend`` takes it). Its entries are pi's ``McpOAuthState`` keyed
``mcp__<server>|<url>`` (pi's ``storeKeys``; the older key, the URL alone, is taken over on first
use as pi does): ``serverUrl``, ``clientInformation``, ``tokens``, ``tokensExpireAt``
(milliseconds since the epoch) and ``discovery`` (the authorization server pi found), so a sign-in
made in pi works in pi-lsp and the other way round. :class:`ServerTokenStorage` is the SDK's
``TokenStorage`` on one server's entry.

A refresh runs under pi's refresh lock of the server (``mcp-auth-refresh-<hash>.lock`` beside the
file, pi's ``withRefreshLock``): servers that rotate refresh tokens accept each one once, so pi
and pi-lsp never refresh the same server at the same time.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pi_lsp.llm.auth_store import locked_like_pi, read_json_object, write_json_object
from pi_lsp.resources.mcp_config import namespace

MCP_AUTH_FILE = "mcp-auth.json"
REFRESH_LOCK_STALE_SECONDS = 20.0
"""pi takes over a refresh lock not renewed for this long (its ``REFRESH_LOCK_STALE_MS``)."""
REFRESH_LOCK_WAIT_SECONDS = 25.0
_DEFAULT_PORTS = {"http": 80, "https": 443}

State = dict[str, Any]


def canonical_url(url: str) -> str:
    """The URL as JavaScript's ``String(new URL(url))`` writes it (pi's keys use that form)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    if parts.username:
        credentials = parts.username + (f":{parts.password}" if parts.password else "")
        netloc = f"{credentials}@{netloc}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, parts.fragment))


class McpAuthFile:
    """``<agentDir>/mcp-auth.json``: every read and write under pi's lock on the file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, server: str, url: str) -> State | None:
        """The server's state (taking over the older URL-only key, as pi does)."""
        key, legacy = _keys(server, url)
        if not self.path.exists():
            return None
        with locked_like_pi(self.path):
            states = read_json_object(self.path)
            if key in states or legacy not in states:
                return _own(states.get(key), url)
            states[key] = states.pop(legacy)
            write_json_object(self.path, states, trailing_newline=True)
            return _own(states[key], url)

    def update(self, server: str, url: str, change: Callable[[State], State]) -> None:
        """Replace the server's state with ``change(state)`` (an empty state when it has none)."""
        key, _ = _keys(server, url)
        with locked_like_pi(self.path):
            states = read_json_object(self.path)
            current = _own(states.get(key), url) or {"serverUrl": canonical_url(url)}
            states[key] = change(dict(current))
            write_json_object(self.path, states, trailing_newline=True)

    @contextlib.contextmanager
    def refresh_lock(self, server: str, url: str) -> Iterator[None]:
        """pi's refresh lock of the server, held while its tokens are refreshed."""
        key, _ = _keys(server, url)
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        lock_file = self.path.with_name(f"mcp-auth-refresh-{digest}")
        with locked_like_pi(lock_file, REFRESH_LOCK_STALE_SECONDS, REFRESH_LOCK_WAIT_SECONDS):
            yield

    def remove(self, server: str, url: str) -> bool:
        """Forget the server's sign-in; whether there was one."""
        key, legacy = _keys(server, url)
        if not self.path.exists():
            return False
        with locked_like_pi(self.path):
            states = read_json_object(self.path)
            stored = key if key in states else legacy if legacy in states else None
            if stored is None:
                return False
            del states[stored]
            write_json_object(self.path, states, trailing_newline=True)
            return True


def _keys(server: str, url: str) -> tuple[str, str]:
    legacy = canonical_url(url)
    return f"{namespace(server)}|{legacy}", legacy


def _own(state: Any, url: str) -> State | None:
    """pi ignores a state written for another URL: credentials never cross servers."""
    if isinstance(state, dict) and state.get("serverUrl") == canonical_url(url):
        return state
    return None


class ServerTokenStorage:
    """The SDK's ``TokenStorage`` on one server's entry of ``mcp-auth.json``.

    ``client_id`` (with ``client_secret``) is a client configured in ``mcp.json``'s ``oauth``:
    used as it is and never stored, as pi does."""

    def __init__(
        self,
        file: McpAuthFile,
        server: str,
        url: str,
        client_id: str | None = None,
        client_secret: str | None = None,
        documents: bool = False,
    ) -> None:
        self.file = file
        self.server = server
        self.url = url
        self.client_id = client_id
        self.client_secret = client_secret
        self.documents = documents
        """Whether pi's Client ID Metadata Documents may identify the client (never stored)."""

    def state(self) -> State:
        return self.file.load(self.server, self.url) or {}

    async def state_off_loop(self) -> State:
        """:meth:`state`, read in a thread: pi may hold the file's lock for up to its wait time,
        and the server's event loop must not wait with it."""
        return await asyncio.to_thread(self.state)

    async def _update_off_loop(self, change: Callable[[State], State]) -> None:
        await asyncio.to_thread(self.file.update, self.server, self.url, change)

    @staticmethod
    def expires_at(state: State) -> float | None:
        """When the stored access token expires (seconds since the epoch), if it says."""
        value = state.get("tokensExpireAt")
        return value / 1000 if isinstance(value, int | float) else None

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken
        from pydantic import ValidationError

        tokens = (await self.state_off_loop()).get("tokens")
        try:
            return OAuthToken.model_validate(tokens) if isinstance(tokens, dict) else None
        except ValidationError:
            return None

    async def set_tokens(self, tokens: Any) -> None:
        saved = tokens.model_dump(mode="json", exclude_none=True)

        def store(state: State) -> State:
            state["tokens"] = saved
            if tokens.expires_in is None:
                state.pop("tokensExpireAt", None)
            else:
                state["tokensExpireAt"] = int((time.time() + tokens.expires_in) * 1000)
            return state

        await self._update_off_loop(store)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull
        from pydantic import ValidationError

        if self.client_id:
            configured = {"client_id": self.client_id, "redirect_uris": None}
            if self.client_secret:
                configured |= {
                    "client_secret": self.client_secret,
                    "token_endpoint_auth_method": "client_secret_post",
                }
            return OAuthClientInformationFull.model_validate(configured)
        state = await self.state_off_loop()
        information = state.get("clientInformation")
        if information is None and self.documents and state.get("tokens"):
            return self._document_client(state)
        try:
            return (
                OAuthClientInformationFull.model_validate(information)
                if isinstance(information, dict)
                else None
            )
        except ValidationError:
            return None

    def _document_client(self, state: State) -> Any:
        """Tokens stored without a client belong to pi's document (pi stores none for it)."""
        from mcp.shared.auth import OAuthClientInformationFull

        from pi_lsp.mcp.oauth_documents import document_for

        discovery = self.discovery(state) or {}
        chosen = document_for(
            self.url, "http://127.0.0.1/callback", discovery.get("authorizationServerMetadata")
        )
        if chosen is None:
            return None
        return OAuthClientInformationFull(
            client_id=chosen[0],
            redirect_uris=[chosen[1]],  # type: ignore[list-item]  # pydantic parses the URL
            token_endpoint_auth_method="none",
        )

    async def set_client_info(self, client_info: Any) -> None:
        from pi_lsp.mcp.oauth_documents import is_document

        if self.client_id or is_document(client_info.client_id):
            return
        saved = client_info.model_dump(mode="json", exclude_none=True)
        await self._update_off_loop(lambda state: {**state, "clientInformation": saved})

    @staticmethod
    def discovery(state: State) -> State | None:
        discovery = state.get("discovery")
        return discovery if isinstance(discovery, dict) else None

    async def save_discovery(self, discovery: State) -> None:
        await self._update_off_loop(lambda state: {**state, "discovery": discovery})
