"""Thin LSP adapters: each handler parses params, calls one service and shapes the reply."""

from __future__ import annotations


def register_all(server) -> None:
    from pi_lsp.handlers import (  # noqa: F401 - registers handlers
        base,
        compact,
        context,
        credentials,
        editor,
        language_models,
        lifecycle,
        mcp,
        prompt,
        resources,
        session_files,
        session_search,
        sessions,
        state,
        tree,
    )

    lifecycle.register(server)
    editor.register(server)
    credentials.register(server)
    language_models.register(server)
    base.register_requests(server)
