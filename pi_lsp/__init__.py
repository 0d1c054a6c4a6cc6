"""pi-lsp: the pi coding agent's memory model (session tree,
compaction, branch summaries) as a language server."""

__version__ = "0.1.0"

REPOSITORY_URL = "https://github.com/pi-lsp/pi-lsp"
"""Where the documentation is for users of the wheel, who have no docs/ folder (pyproject's
``Source`` URL; a test keeps them equal)."""
