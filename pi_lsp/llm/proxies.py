"""Which proxy, if any, a request to a URL goes through: the environment's proxy variables.

The variables are the ones curl, requests and httpx read (and litellm, through httpx):
``HTTPS_PROXY`` for ``https`` URLs, ``HTTP_PROXY`` for ``http`` URLs, ``ALL_PROXY`` for both,
``NO_PROXY`` for the hosts that bypass them, lower case winning over upper case as in Python's
``urllib`` (which reads them here). ``http_stream`` speaks to an ``http://`` proxy (a ``CONNECT``
tunnel for ``https``); a proxy of another kind (``socks5://``, ``https://``) is not one it
speaks, and ``unsupported_proxy`` tells the caller to use litellm instead.

``urllib.request`` costs about 70 ms of imports: it is imported only when a proxy variable is set.
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

import attrs


@attrs.frozen
class Proxy:
    """An ``http://`` proxy: where it listens, and ``user:password`` when its URL names them."""

    host: str
    port: int
    credentials: str | None = attrs.field(default=None, repr=False)


def proxy_url(scheme: str, host: str) -> str | None:
    """The proxy URL the environment gives a request to ``scheme://host``, or None."""
    if not any(name.lower().endswith("_proxy") for name in os.environ):
        return None
    import urllib.request

    proxies = urllib.request.getproxies_environment()
    url = proxies.get(scheme.lower()) or proxies.get("all")
    # proxy_bypass_environment is urllib's NO_PROXY matcher (public, missing from typeshed).
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    if not url or bypass(host, proxies):
        return None
    return url if "://" in url else f"http://{url}"


def unsupported_proxy(url: str) -> bool:
    """Whether requests to ``url`` must go through a proxy ``http_stream`` does not speak."""
    parts = urlsplit(url)
    found = proxy_url(parts.scheme, parts.hostname or "")
    return found is not None and urlsplit(found).scheme != "http"


def proxy_for(scheme: str, host: str) -> Proxy | None:
    """The ``http://`` proxy for ``scheme://host``; raises ``OSError`` for another kind."""
    url = proxy_url(scheme, host)
    if url is None:
        return None
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise OSError(f"pi-lsp speaks to http:// proxies only, not {parts.scheme}:// ({url})")
    credentials = None
    if parts.username is not None:
        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    return Proxy(parts.hostname, parts.port or 80, credentials)
