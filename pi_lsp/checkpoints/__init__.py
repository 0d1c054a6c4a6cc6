"""File checkpoints: what the agent's changes to files were, and how to put files back.

Pure of pygls and of the agent: a content-addressed blob store next to the session files (one
store per session directory, so forks share blobs), the ``pi-lsp.checkpoint`` entries the session
file gets (paths and hashes only), the ledger of what pi-lsp last left in each file, the planning
of a restore (the content each file should have at a target entry, and whether the file changed
since pi-lsp last wrote it), previews as unified diffs, and garbage collection. The agent package
records changes and applies restores through the editor bridge or the disk.
"""
