#!/usr/bin/env bash
# install.sh — install the official ACP TypeScript SDK (@agentclientprotocol/sdk, pinned in
# package.json and package-lock.json beside this script) into node_modules here, for the
# TypeScript client test and ACP's published JSON schema (schema/v1/schema.json) that the wire
# tests check every message against.
#
# Idempotent: when node_modules already holds the pinned version, it does nothing. Prints exactly
# one line saying what it did.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

wanted="$(sed -n 's/^[[:space:]]*"@agentclientprotocol\/sdk":[[:space:]]*"\([^"]*\)".*/\1/p' package.json)"
installed_json="node_modules/@agentclientprotocol/sdk/package.json"

installed() {
    [ -f "$installed_json" ] || return 0
    sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$installed_json" | head -n 1
}

if [ "$(installed)" = "$wanted" ]; then
    echo "ACP TypeScript SDK already installed: $wanted ($here/node_modules)"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "install.sh: npm is required to install the ACP TypeScript SDK but was not found" >&2
    exit 1
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! npm ci --no-audit --no-fund >"$log" 2>&1; then
    cat "$log" >&2
    echo "install.sh: npm ci failed in $here" >&2
    exit 1
fi
echo "installed the ACP TypeScript SDK $(installed) into $here/node_modules"
