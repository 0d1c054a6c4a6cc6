"""Project memory: one searchable index of every session of a workspace (SQLite with FTS5).

Pure (no pygls): the LSP handlers, the agent's tools and the command line read it through
``ProjectMemory`` (``service.py``), which builds and keeps the index current on a thread of its own.
"""
