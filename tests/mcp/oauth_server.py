"""An OAuth-protected streamable-HTTP MCP server built with the SDK's server-side auth
(``mcp.server.auth``): the MCP server is its own authorization server (discovery metadata,
dynamic client registration, authorization code with PKCE, refresh tokens), like the SDK's
``simple-auth`` example, but the authorization page approves at once: it redirects straight to the
client's redirect URI with a code, so a test's "browser" is an HTTP client following redirects.

``python oauth_server.py PORT [HOST] [--client ID:SECRET:CALLBACK_PORT] [--misdirect]`` serves
``http://HOST:PORT/mcp`` (HOST 127.0.0.1 by default; ``::1`` for a loopback address the VS Code
test's code-server does not rewrite into its port proxy); ``--client`` registers a client
beforehand, as an authorization server without dynamic registration knows its clients (redirect
URI ``http://127.0.0.1:CALLBACK_PORT/callback``); ``--misdirect`` makes its protected resource
metadata name an authorization server that does not exist (as some servers do, which
``oauth.authServerMetadataUrl`` is for); ``--cimd`` makes it accept public clients identified by
pi's Client ID Metadata Documents on pi.dev (``https://pi.dev/oauth/…/client.json``), which it
advertises, as a server that fetches such documents would (the test machine has no network, and
the documents list loopback redirect URIs on ``/callback``). Its tool ``token_origin`` says which
grant issued the access token of the call (``authorization_code`` or ``refresh_token``), so a
test sees a refresh happen; ``revoke_my_token`` revokes the access token of its call before it
expires (the refresh token stays valid).
"""

from __future__ import annotations

import secrets
import sys
import time

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

ACCESS_TOKEN_SECONDS = 3600


class ApprovingProvider:
    """An in-memory authorization server that approves every authorization request."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self.access_tokens: dict[str, AccessToken] = {}
        self.origins: dict[str, str] = {}
        self.accepts_documents = False

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if self.accepts_documents and client_id.startswith(PI_DOCUMENTS):
            return DocumentClient(
                client_id=client_id,
                redirect_uris=["http://127.0.0.1/callback"],  # type: ignore[list-item]
                token_endpoint_auth_method="none",
            )
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id or ""] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(client, authorization_code.scopes, "authorization_code")

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh_tokens.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh_tokens[refresh_token.token]
        return self._issue(client, scopes or refresh_token.scopes, "refresh_token")

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access_tokens.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access_tokens.pop(token.token, None)
        self.refresh_tokens.pop(token.token, None)

    def _issue(
        self, client: OAuthClientInformationFull, scopes: list[str], grant: str
    ) -> OAuthToken:
        client_id = client.client_id or ""
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires_at = int(time.time()) + ACCESS_TOKEN_SECONDS
        self.access_tokens[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires_at
        )
        self.refresh_tokens[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes
        )
        self.origins[access] = grant
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=ACCESS_TOKEN_SECONDS,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )


MISDIRECTED_AUTHORIZATION_SERVER = "http://127.0.0.1:9/"
PI_DOCUMENTS = "https://pi.dev/oauth/"


class DocumentClient(OAuthClientInformationFull):
    """A client of pi's documents: any loopback redirect URI on ``/callback`` (RFC 8252: the
    port is the client's to choose)."""

    def validate_redirect_uri(self, redirect_uri):
        if redirect_uri is None or redirect_uri.host != "127.0.0.1":
            return super().validate_redirect_uri(redirect_uri)
        if not (redirect_uri.path or "").startswith("/callback"):
            return super().validate_redirect_uri(redirect_uri)
        return redirect_uri


def build(
    port: int, host: str = "127.0.0.1", client: str | None = None, cimd: bool = False
) -> MCPServer:
    base = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    provider = ApprovingProvider()
    provider.accepts_documents = cimd
    if client:
        client_id, secret, callback_port = client.split(":")
        provider.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id,
            client_secret=secret,
            redirect_uris=[f"http://127.0.0.1:{callback_port}/callback"],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_post",
        )
    server = MCPServer(
        "oauth-protected",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(enabled=True),
            required_scopes=[],
        ),
    )

    @server.tool(description="Which grant issued the access token of this call")
    def token_origin() -> str:
        token = get_access_token()
        return provider.origins.get(token.token, "unknown") if token else "no token"

    @server.tool(description="Revoke the access token of this call")
    def revoke_my_token() -> str:
        token = get_access_token()
        if token:
            provider.access_tokens.pop(token.token, None)
        return "revoked"

    return server


def misdirected(app, port: int, host: str):
    """``app`` with protected resource metadata naming an authorization server that is not
    there."""
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    base = f"http://{f'[{host}]' if ':' in host else host}:{port}"

    async def metadata(request):
        return JSONResponse(
            {"resource": f"{base}/mcp", "authorization_servers": [MISDIRECTED_AUTHORIZATION_SERVER]}
        )

    app.router.routes.insert(0, Route("/.well-known/oauth-protected-resource/mcp", metadata))
    return app


def accepting_documents(app, port: int, host: str):
    """``app`` advertising Client ID Metadata Documents for public clients."""
    from mcp.server.auth.routes import build_metadata
    from mcp.server.auth.settings import RevocationOptions
    from pydantic import AnyHttpUrl
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    base = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    advertised = build_metadata(
        AnyHttpUrl(base), None, ClientRegistrationOptions(enabled=True), RevocationOptions()
    )
    advertised.client_id_metadata_document_supported = True
    advertised.token_endpoint_auth_methods_supported = [
        *(advertised.token_endpoint_auth_methods_supported or []),
        "none",
    ]

    served = advertised.model_dump(mode="json", exclude_none=True) | {"issuer": base}

    async def metadata(request):
        return JSONResponse(served)

    app.router.routes.insert(0, Route("/.well-known/oauth-authorization-server", metadata))
    return app


if __name__ == "__main__":
    import uvicorn

    arguments = sys.argv[1:]
    client = None
    if "--client" in arguments:
        at = arguments.index("--client")
        client = arguments[at + 1]
        del arguments[at : at + 2]
    flags = {flag for flag in ("--misdirect", "--cimd") if flag in arguments}
    arguments = [argument for argument in arguments if argument not in flags]
    port = int(arguments[0])
    host = arguments[1] if len(arguments) > 1 else "127.0.0.1"
    app = build(port, host, client, cimd="--cimd" in flags).streamable_http_app()
    if "--misdirect" in flags:
        app = misdirected(app, port, host)
    if "--cimd" in flags:
        app = accepting_documents(app, port, host)
    uvicorn.run(app, host=host, port=port)
