"""``pi-lsp acp``: the Agent Client Protocol front end (Zed, JetBrains, Emacs, Neovim ACP clients).

A thin adapter over the same service graph as the LSP server, built on the official SDK
(``agent-client-protocol``, import name ``acp``); see ``docs/acp.md``.
"""
