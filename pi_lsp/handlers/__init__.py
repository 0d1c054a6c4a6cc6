"""Thin LSP adapters: each handler parses params, calls one service and shapes the reply."""

from __future__ import annotations


def register_all(server) -> None:
    # Importing the request modules registers their handlers.
    from pi_lsp.handlers import (  # noqa: F401
        base,
        compact,
        credentials,
        editor,
        lifecycle,
        prompt,
        resources,
        sessions,
        state,
    )

    lifecycle.register(server)
    editor.register(server)
    credentials.register(server)
    base.register_requests(server)
