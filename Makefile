# One entry point for people and CI. `make test` installs everything a fresh machine needs
# (a virtualenv with the package and its test and lint tools, Node 22, pi 0.84.2 and pi 1.6.0
# for the conformance suite, all from the package registries), runs the lint gate and then every
# test suite. `make lint` and `make test-fast` are the quick loop while developing.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
VSCODE := editors/vscode
LUA_SOURCES := editors/neovim tests/editors/neovim/init.lua

.PHONY: test test-fast lint protocol protocol-check install install-python install-wheelhouse install-reference \
	install-vscode install-luacheck install-acp-client install-mcp-servers bench clean \
	test-reliability-full

test: install lint
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=20

# The unit and in-process suites (no editors, no pi, no server subprocesses): well under a minute.
test-fast: install-python
	$(PY) -m pytest tests/unit tests/integration -x -q

# The reliability suite alone, at the counts docs/reliability.md reports; `make test` sends 2,000
# fuzzed requests instead of 10,000 and writes a 50 MB session instead of 500 MB.
test-reliability-full: install-python install-reference
	PI_LSP_FUZZ_REQUESTS=10000 PI_LSP_HUGE_SESSION_MB=500 $(PY) -m pytest tests/reliability

lint: install-python install-luacheck $(VSCODE)/node_modules/.package-lock.json
	$(PY) -m tools.protocol.generate --check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	cd $(VSCODE) && npm run --silent typecheck
	luacheck --quiet --formatter plain $(LUA_SOURCES)

# pi_lsp/protocol.py is the protocol's one source: `make protocol` regenerates its mirrors (the
# extension's src/protocol.generated.ts, the Neovim plugin's lua/pi/protocol.lua, the tables of
# docs/protocol.md) through JSON Schema; `make protocol-check` (part of `make lint`) fails when a
# mirror differs from what it generates.
protocol: install-python $(VSCODE)/node_modules/.package-lock.json
	$(PY) -m tools.protocol.generate

protocol-check: install-python $(VSCODE)/node_modules/.package-lock.json
	$(PY) -m tools.protocol.generate --check

install: install-python install-wheelhouse install-reference install-vscode install-luacheck \
	install-acp-client install-mcp-servers

install-python: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,dev]'
	touch $@

# The wheels of pi-lsp's dependencies for CPython 3.11-3.13, downloaded once per run and reused by
# the VS Code bundle, the installed-wheel smoke test and the :PiInstall test (tools/wheelhouse.py).
install-wheelhouse: install-python
	$(PY) tools/wheelhouse.py

# luacheck comes from Debian's lua-check package (the machine is Debian; CI runs as root).
install-luacheck:
	@command -v luacheck >/dev/null || { \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq \
		&& DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			lua-check >/dev/null; }

# The extension's npm packages, for its typecheck (install.sh does the same step, and more).
$(VSCODE)/node_modules/.package-lock.json: $(VSCODE)/package-lock.json
	cd $(VSCODE) && npm ci --no-audit --no-fund --loglevel=error

install-reference:
	bash tests/reference/install.sh

# The official ACP TypeScript SDK: a real client in tests/e2e/acp, and ACP's published JSON schema.
install-acp-client:
	bash tests/e2e/acp/ts_client/install.sh

# The npm MCP server the MCP tests start as a user's mcp.json would (PyPI's is in the test extra).
install-mcp-servers:
	bash tests/mcp/install.sh

install-vscode:
	bash editors/vscode/test/install.sh

bench: install
	$(PY) bench/side_by_side.py
	$(PY) bench/anthropic_streaming.py
	$(PY) bench/session_bench.py
	$(PY) bench/cache_bench.py

clean:
	rm -rf $(VENV) tests/reference/node_modules tests/e2e/acp/ts_client/node_modules .pytest_cache .hypothesis .bench-data .ruff_cache .mypy_cache \
		build editors/vscode/bundled/libs
