"""Unit-test setup: makes ``tests/builders.py`` and ``tests/agent_harness.py`` importable, and
provides the in-process agent (``agent``, ``make_agent``) for tests of orchestration."""

import sys
from pathlib import Path

import pytest

_TESTS_DIR = str(Path(__file__).resolve().parents[1])
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)


@pytest.fixture
def make_agent(tmp_path, monkeypatch):
    """``make_agent(options=…, tools=…)``: an ``AgentHarness`` on a new workspace (``app.py``)."""
    from agent_harness import AgentHarness

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PI_LSP_MODEL", raising=False)
    made: list[AgentHarness] = []

    def make(**options) -> AgentHarness:
        workspace = tmp_path / f"project{len(made)}"
        workspace.mkdir()
        (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
        harness = AgentHarness(workspace, **options)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


@pytest.fixture
def agent(make_agent):
    """An ``AgentHarness`` with the default options (see ``tests/agent_harness.py``)."""
    return make_agent()
