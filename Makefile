# One entry point for people and CI. `make test` installs everything a fresh machine needs
# (a virtualenv with the package and its test tools, Node 22 and pi 0.84.2 for the conformance
# suite, both from the package registries) and then runs every test suite.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: test install install-python install-wheelhouse install-reference install-vscode bench clean

test: install
	$(PY) -m pytest

install: install-python install-wheelhouse install-reference install-vscode

install-python: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

# The wheels of pi-lsp's dependencies for CPython 3.11-3.13, downloaded once per run and reused by
# the VS Code bundle, the installed-wheel smoke test and the :PiInstall test (tools/wheelhouse.py).
install-wheelhouse: install-python
	$(PY) tools/wheelhouse.py

install-reference:
	bash tests/reference/install.sh

install-vscode:
	bash editors/vscode/test/install.sh

bench: install
	$(PY) bench/session_bench.py

clean:
	rm -rf $(VENV) tests/reference/node_modules .pytest_cache .hypothesis .bench-data build editors/vscode/bundled/libs
