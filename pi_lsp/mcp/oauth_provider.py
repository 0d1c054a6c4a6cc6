"""The SDK's ``OAuthClientProvider`` taught what pi 1.6's OAuth client does beyond it.

- It reads back from ``mcp-auth.json`` when the stored token expires (so it refreshes in time)
  and where the authorization server is (so a refresh after a restart goes to its token
  endpoint), and saves that discovery after a sign-in, as pi does.
- ``oauth.authServerMetadataUrl``: the configured metadata document replaces discovery of the
  authorization server, is trusted as configured (its issuer is the expected one) and is never
  cached, so changing the URL applies at once (pi's ``runFlow``).
- ``oauth.scope``: the scope asked for is the configured one plus what the server's challenge
  names, instead of the SDK's own choice (pi's ``mergeScopes``).
- A token the server rejects before it expires (revoked) is refreshed once before the server
  needs sign-in, as pi's ``onUnauthorized`` does; tokens another process stored meanwhile are
  used without a refresh.
- pi's Client ID Metadata Documents (``oauth_documents.py``) identify the client when the
  authorization server supports them and ``oauth.clientRegistration`` allows it.
- A refresh runs under pi's refresh lock, released as soon as the refresh ends, also when its
  request failed on the network (the SDK's flow is then closed without seeing a response).

This module imports the SDK at its top: import it only where MCP sign-in is needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.exceptions import OAuthFlowError
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    extract_field_from_www_auth,
    extract_scope_from_www_auth,
    union_scopes,
)
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientMetadata, OAuthMetadata, ProtectedResourceMetadata
from pydantic import AnyUrl, PrivateAttr, ValidationError

from pi_lsp.mcp.oauth_documents import document_for, is_document, offers_document
from pi_lsp.mcp.oauth_store import ServerTokenStorage


class ConfiguredScopeMetadata(OAuthClientMetadata):
    """Client metadata whose ``scope`` keeps ``oauth.scope``: the SDK assigns the scope it
    selected, and this turns that into the configured scope plus the challenged one."""

    _configured_scope: str | None = PrivateAttr(default=None)
    _challenged_scope: str | None = PrivateAttr(default=None)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "scope" and self._configured_scope:
            value = union_scopes(self._configured_scope, self._challenged_scope)
        super().__setattr__(name, value)


class PiOAuthProvider(OAuthClientProvider):
    """The SDK's provider with pi's refresh, discovery and scope rules (see the module)."""

    def __init__(self, *args: Any, settings: Mapping[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._metadata_url: str | None = settings.get("authServerMetadataUrl") or None
        self._documents = offers_document(settings)
        self._documents_required = settings.get("clientRegistration") == "cimd"
        self._configured_metadata: OAuthMetadata | None = None
        self._refresh_held: contextlib.ExitStack | None = None
        """pi's refresh lock, from the refresh request until its response is handled."""

    @property
    def _storage(self) -> ServerTokenStorage:
        storage = self.context.storage
        assert isinstance(storage, ServerTokenStorage)
        return storage

    async def _initialize(self) -> None:
        await super()._initialize()
        state = await self._storage.state_off_loop()
        self.context.token_expiry_time = self._storage.expires_at(state)
        discovery = self._storage.discovery(state)
        if self._metadata_url or discovery is None or self.context.oauth_metadata is not None:
            return
        with contextlib.suppress(ValidationError, TypeError):
            self.context.oauth_metadata = OAuthMetadata.model_validate(
                discovery["authorizationServerMetadata"]
            )
            self.context.auth_server_url = str(discovery["authorizationServerUrl"])
            resource = discovery.get("resourceMetadata")
            if isinstance(resource, dict):
                self.context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(
                    resource
                )

    # ------------------------------------------------------------- the flow

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow, with the configured metadata answering its discovery of the
        authorization server, and one refresh when the server rejects a token."""
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                discovery = self._is_authorization_server_discovery(outgoing)
                if discovery and self._metadata_url:
                    response = await self._configured_metadata_response(outgoing)
                else:
                    response = yield outgoing
                if discovery and response.status_code == 200:
                    await self._choose_client_document(response)
                if outgoing is request and response.status_code in (401, 403):
                    await self._before_discovery(response)
                if outgoing is request and await self._may_refresh_rejected(request, response):
                    if await self._stored_tokens_replaced(request):
                        response = yield request
                    else:
                        refresh_response = yield await self._refresh_token()
                        if await self._handle_refresh_response(refresh_response):
                            self._add_auth_header(request)
                            response = yield request
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            self._release_refresh_lock()
            await flow.aclose()

    async def _may_refresh_rejected(self, request: httpx2.Request, response: Any) -> bool:
        """A 401 for a token that has not expired: refresh it first (pi's ``onUnauthorized``),
        unless the server asks for more scope, which needs a sign-in."""
        if response.status_code != 401 or "authorization" not in request.headers:
            return False
        if extract_field_from_www_auth(response, "error") == "insufficient_scope":
            return False
        return self.context.is_token_valid() and self.context.can_refresh_token()

    async def _stored_tokens_replaced(self, request: httpx2.Request) -> bool:
        """Tokens another process (pi) stored since this one were sent: use them as they are."""
        stored = await self._storage.get_tokens()
        sent = request.headers.get("authorization", "").removeprefix("Bearer ")
        if stored is None or not stored.access_token or stored.access_token == sent:
            return False
        self.context.current_tokens = stored
        self.context.token_expiry_time = self._storage.expires_at(
            await self._storage.state_off_loop()
        )
        self._add_auth_header(request)
        return True

    async def _before_discovery(self, response: Any) -> None:
        """The server refused: the SDK may discover next, with the challenge's scope and the
        configured metadata document at hand."""
        metadata = self.context.client_metadata
        if isinstance(metadata, ConfiguredScopeMetadata):
            metadata._challenged_scope = extract_scope_from_www_auth(response)
        if self._metadata_url:
            await self._fetch_configured_metadata()

    # ------------------------------------------------- oauth.authServerMetadataUrl

    def _is_authorization_server_discovery(self, outgoing: httpx2.Request) -> bool:
        if outgoing.method != "GET":
            return False
        candidates = build_oauth_authorization_server_metadata_discovery_urls(
            self.context.auth_server_url, self.context.server_url
        )
        return str(outgoing.url) in candidates

    async def _configured_metadata_response(self, outgoing: httpx2.Request) -> httpx2.Response:
        """The configured document, as the answer to the SDK's discovery request."""
        metadata = await self._fetch_configured_metadata()
        return httpx2.Response(
            200, content=metadata.model_dump_json(exclude_none=True), request=outgoing
        )

    async def _fetch_configured_metadata(self) -> OAuthMetadata:
        if self._configured_metadata is None:
            assert self._metadata_url is not None
            async with create_mcp_http_client() as http:
                response = await http.get(
                    self._metadata_url, headers={"Accept": "application/json"}
                )
            if response.status_code != 200:
                raise httpx2.HTTPStatusError(
                    f"HTTP {response.status_code} loading authorization server metadata "
                    f"from {self._metadata_url}",
                    request=response.request,
                    response=response,
                )
            self._configured_metadata = OAuthMetadata.model_validate_json(response.content)
        return self._configured_metadata

    def _select_authorization_server(self, advertised: list[str]) -> str:
        if self._configured_metadata is not None:
            return str(self._configured_metadata.issuer)
        return super()._select_authorization_server(advertised)

    def _expected_issuer(self) -> str:
        if self._configured_metadata is not None:
            return str(self._configured_metadata.issuer)
        return super()._expected_issuer()

    # ------------------------------------------- pi's Client ID Metadata Documents

    async def _choose_client_document(self, response: httpx2.Response) -> None:
        """With the authorization server's metadata at hand, identify by pi's document (and its
        redirect URI) when the server supports documents, as pi does; a registered client stays
        in use. ``cimd`` without the server's support fails the sign-in."""
        client = self.context.client_info
        if not self._documents or (client is not None and not is_document(client.client_id)):
            return
        try:
            metadata = json.loads(await response.aread())
        except ValueError:
            return
        uris = self.context.client_metadata.redirect_uris
        redirect = str(uris[0]) if uris else ""
        chosen = document_for(self.context.server_url, redirect, metadata)
        self.context.client_info = None
        if chosen is None:
            if self._documents_required:
                raise OAuthFlowError(
                    "The authorization server does not support Client ID Metadata Documents "
                    'for public clients; remove oauth.clientRegistration "cimd"'
                )
            self.context.client_metadata_url = None
            return
        self.context.client_metadata_url, document_redirect = chosen
        self.context.client_metadata.redirect_uris = [AnyUrl(document_redirect)]

    # ------------------------------------------------------------ refresh

    async def _refresh_token(self) -> Any:
        """Take pi's refresh lock, and the tokens another process (pi) may have refreshed
        meanwhile: their refresh token is the one the server still accepts."""
        if self._metadata_url:
            metadata = await self._fetch_configured_metadata()
            self.context.oauth_metadata = metadata
            self.context.auth_server_url = str(metadata.issuer)
        storage = self._storage
        lock = contextlib.ExitStack()
        await asyncio.to_thread(
            lock.enter_context, storage.file.refresh_lock(storage.server, storage.url)
        )
        self._refresh_held = lock
        stored = await storage.get_tokens()
        if stored is not None and stored.refresh_token:
            self.context.current_tokens = stored
        return await super()._refresh_token()

    async def _handle_refresh_response(self, response: Any) -> bool:
        try:
            return await super()._handle_refresh_response(response)
        finally:
            self._release_refresh_lock()

    def _release_refresh_lock(self) -> None:
        held, self._refresh_held = self._refresh_held, None
        if held is not None:
            held.close()

    # ------------------------------------------------------------ sign-in

    async def _handle_token_response(self, response: Any) -> None:
        await super()._handle_token_response(response)
        if not self._metadata_url:
            await self._save_discovery()

    async def _save_discovery(self) -> None:
        context = self.context
        if context.oauth_metadata is None:
            return
        discovery: dict[str, Any] = {
            "authorizationServerUrl": context.auth_server_url or str(context.oauth_metadata.issuer),
            "authorizationServerMetadata": context.oauth_metadata.model_dump(
                mode="json", exclude_none=True
            ),
        }
        if context.protected_resource_metadata is not None:
            discovery["resourceMetadata"] = context.protected_resource_metadata.model_dump(
                mode="json", exclude_none=True
            )
        await self._storage.save_discovery(discovery)
