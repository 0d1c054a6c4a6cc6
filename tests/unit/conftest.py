"""Unit-test setup: the in-process agent (``agent``, ``make_agent``) for tests of orchestration.

Test helpers are imported from the ``tests`` package (``tests.builders``, ``tests.agent_harness``).
"""

import pytest


@pytest.fixture
def make_agent(tmp_path, monkeypatch):
    """``make_agent(options=…, tools=…)``: an ``AgentHarness`` on a new workspace (``app.py``)."""
    from tests.agent_harness import AgentHarness

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
