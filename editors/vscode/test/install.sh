#!/usr/bin/env bash
# install.sh — everything the VS Code extension's tests need on a fresh Debian machine (as root):
# Chromium and the native build tools from apt, the extension's npm packages (npm ci), its
# esbuild bundle, and code-server 4.100.3 (the last one that runs on Debian's Node 20) in
# editors/vscode/.code-server. Idempotent: each step runs only when its result is missing or
# stale. Prints one line saying what it did.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
code_server_version="4.100.3"
code_server_dir="$here/.code-server"
code_server_bin="$code_server_dir/node_modules/.bin/code-server"
apt_packages=(chromium ripgrep build-essential pkg-config libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev)
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
done_steps=()

fail() {
    cat "$log" >&2
    echo "install.sh: $1" >&2
    exit 1
}

install_apt_packages() {
    local missing=()
    for package in "${apt_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >>"$log" 2>&1 || fail "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >>"$log" 2>&1 \
        || fail "apt-get install ${missing[*]} failed"
    done_steps+=("apt: ${missing[*]}")
}

install_npm_packages() {
    # npm writes node_modules/.package-lock.json last; an older one means package-lock.json changed.
    if [ -f "$here/node_modules/.package-lock.json" ] && [ "$here/node_modules/.package-lock.json" -nt "$here/package-lock.json" ]; then
        return 0
    fi
    (cd "$here" && npm ci --no-audit --no-fund) >>"$log" 2>&1 || fail "npm ci failed in $here"
    done_steps+=("npm ci")
}

build_bundle() {
    (cd "$here" && node esbuild.mjs) >>"$log" 2>&1 || fail "the esbuild bundle failed"
    done_steps+=("bundle")
}

code_server_ready() {
    [ -x "$code_server_bin" ] && "$code_server_bin" --version 2>/dev/null | grep -q "^$code_server_version "
}

# The recipe of shared/reference/feasibility.md §3: skip every download from outside the npm
# registry (ripgrep comes from apt) and build the native modules against Debian's Node headers.
install_code_server() {
    code_server_ready && return 0
    rm -rf "$code_server_dir"
    mkdir -p "$code_server_dir"
    (
        set -e
        cd "$code_server_dir"
        echo '{"name":"pi-lsp-code-server","private":true}' > package.json
        export npm_config_nodedir=/usr npm_config_yes=true XDG_CONFIG_HOME="$code_server_dir/config"
        npm i --ignore-scripts --no-audit --no-fund "code-server@$code_server_version"
        npm rebuild argon2
        cd node_modules/code-server/lib/vscode
        npm install --omit=dev --ignore-scripts --no-audit --no-fund
        mkdir -p node_modules/@vscode/ripgrep/bin
        cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
        npm rebuild
        ln -sfn node_modules node_modules.asar
        (cd bin/remote-cli && ln -sfn code-linux.sh code-server)
        (cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
        (cd extensions && npm install --omit=dev --no-audit --no-fund)
    ) >>"$log" 2>&1 || fail "installing code-server $code_server_version failed"
    code_server_ready || fail "code-server $code_server_version does not run after installing it"
    done_steps+=("code-server $code_server_version")
}

command -v npm >/dev/null 2>&1 || { echo "install.sh: npm is required but not on PATH" >&2; exit 1; }
install_apt_packages
install_npm_packages
build_bundle
install_code_server

if [ ${#done_steps[@]} -eq 1 ]; then
    echo "VS Code test tools already installed; rebuilt the extension bundle ($here/out)"
else
    echo "VS Code test tools installed: $(IFS=,; echo "${done_steps[*]}" | sed 's/,/, /g')"
fi
