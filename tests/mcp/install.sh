#!/usr/bin/env bash
# install.sh — install the npm MCP servers pi-lsp's MCP tests start (as a user's mcp.json would)
# into tests/mcp/node_modules, from package.json beside this script.
#
# Idempotent: when node_modules already holds @modelcontextprotocol/server-everything at the
# pinned version, it does nothing. Prints exactly one line saying what it did.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

wanted="$(sed -n 's/.*"@modelcontextprotocol\/server-everything":[[:space:]]*"\([^"]*\)".*/\1/p' package.json)"
installed_json="node_modules/@modelcontextprotocol/server-everything/package.json"
installed=""
if [ -f "$installed_json" ]; then
    installed="$(sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$installed_json" | head -n 1)"
fi

if [ "$installed" = "$wanted" ]; then
    echo "MCP test servers already installed (server-everything $wanted)"
    exit 0
fi

npm install --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null
echo "installed MCP test servers (server-everything $wanted)"
