"""pi-lsp: the pi coding agent's memory model (session tree,
compaction, branch summaries) as a language server."""

__version__ = "0.1.0"
