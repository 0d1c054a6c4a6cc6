"""pi's Client ID Metadata Documents on pi.dev, and when pi 1.6 identifies with one.

Instead of registering a client, pi 1.6 names itself by the URL of a document on pi.dev when the
authorization server supports such documents for public clients (``pi-mcp``'s
``client-settings.js``): ``https://pi.dev/oauth/client.json`` with the redirect URI
``http://127.0.0.1:<port>/callback`` when the server sends ``iss`` in its authorization
responses (RFC 9207), else a document and redirect path specific to the MCP server
(``https://pi.dev/oauth/<id>/client.json`` with ``/callback/<id>``), so a response cannot be
mixed up with another server's. pi-lsp uses the same documents the same way, so a sign-in made by
one refreshes in the other. A document is never stored as a client: tokens stored without a
client belong to it.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pi_lsp.mcp.oauth_store import canonical_url

DOCUMENTS_BASE = "https://pi.dev/oauth"


def offers_document(settings: Mapping[str, Any]) -> bool:
    """Whether the client may identify with a document (``offersClientMetadataDocument``):
    ``cimd`` always, ``auto`` without ``clientId`` or ``clientName`` and with a redirect URI the
    documents list (``/callback`` on a loopback host other than ``[::1]``)."""
    registration = settings.get("clientRegistration") or "auto"
    if registration != "auto":
        return bool(registration == "cimd")
    return (
        not settings.get("clientId")
        and not settings.get("clientName")
        and lists_redirect(settings.get("callbackUrl"))
    )


def lists_redirect(callback_url: Any) -> bool:
    """pi's ``isClientMetadataDocumentCallback``."""
    if not callback_url:
        return True
    parts = urlsplit(str(callback_url))
    return parts.hostname != "::1" and parts.path == "/callback"


def callback_id(server_url: str) -> str:
    """12 characters naming an MCP server URL in callback paths (as pi and Codex compute it)."""
    parts = urlsplit(canonical_url(server_url))
    href = urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))
    return base64.urlsafe_b64encode(hashlib.sha256(href.encode()).digest()[:9]).decode()


def server_specific_path(path: str, server_url: str) -> str:
    return f"{path.rstrip('/')}/{callback_id(server_url)}"


def document_for(
    server_url: str, redirect_url: str, metadata: Mapping[str, Any] | None
) -> tuple[str, str] | None:
    """The document and redirect URI to sign in with, or None when the authorization server
    (its ``metadata``) does not support documents for public clients."""
    if not metadata or not metadata.get("client_id_metadata_document_supported"):
        return None
    if "none" not in (metadata.get("token_endpoint_auth_methods_supported") or []):
        return None
    if metadata.get("authorization_response_iss_parameter_supported"):
        return f"{DOCUMENTS_BASE}/client.json", redirect_url
    parts = urlsplit(redirect_url)
    redirect = urlunsplit(
        (parts.scheme, parts.netloc, server_specific_path(parts.path, server_url), "", "")
    )
    return f"{DOCUMENTS_BASE}/{callback_id(server_url)}/client.json", redirect


def is_document(client_id: str | None) -> bool:
    return bool(client_id and client_id.startswith(f"{DOCUMENTS_BASE}/"))
