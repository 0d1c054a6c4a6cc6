"""MCP servers, as pi 1.6 connects them (its ``docs/mcp.md``), on the official ``mcp`` SDK.

Configuration comes from ``resources/mcp_config.py`` (pi's ``mcp.json``, pure, with diagnostics)
and from ACP clients' ``mcpServers``; ``servers.py`` connects every server in the background
(``connection.py``: one SDK client session per server) and turns their tools into ordinary tools
of the registry (``tools.py``), named as pi names them (``naming.py``), whose results reach the
model as pi's do (``results.py``, ``output.py``). HTTP servers that use OAuth are signed in to on
the user's request with the SDK's OAuth client (``oauth.py``), their tokens kept in pi's
``mcp-auth.json`` (``oauth_store.py``). Nothing here imports pygls; the SDK is imported only when
a server connects.
"""
