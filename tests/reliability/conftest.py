"""Fixtures of the reliability suite: pi 0.84.2 on Node 22, the figures printed at the end, and
the stacks a stalled test reports.

Every test has a time-out (pytest-timeout: the ``timeout`` marker, or the configured one). Shortly
before it fails a test, ``stacks_before_the_timeout`` takes the stacks of the test process and
of its pi-lsp servers (``stalls.py``); they are shown with the failure. Should the time-out not
manage to interrupt the test (a thread stuck where no signal reaches it), faulthandler dumps
every thread to stderr and ends the process a minute later: CI never just hangs.
"""

from __future__ import annotations

import faulthandler
import json
import os
import sys
import threading
from pathlib import Path

import pytest

from tests.conformance.harness import install_reference

from .figures import FIGURES
from .stalls import stacks

STACKS = pytest.StashKey[str]()
STACKS_BEFORE_SECONDS = 20
"""How long before the time-out the stacks are taken."""
BACKSTOP_SECONDS = 60
"""How long after the time-out the process is ended if the test is still running."""


@pytest.fixture(scope="session")
def reference_node() -> Path:
    """The Node 22 that runs pi 0.84.2 (installed first if needed)."""
    return install_reference()


def timeout_of(item: pytest.Item) -> float:
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    configured = item.config.getoption("timeout", None) or item.config.getini("timeout")
    return float(configured or 0)


@pytest.fixture(autouse=True)
def stacks_before_the_timeout(request, tmp_path):
    timeout = timeout_of(request.node)
    if not timeout:
        yield
        return

    def take() -> None:
        request.node.stash[STACKS] = stacks(tmp_path)

    timer = threading.Timer(max(timeout - STACKS_BEFORE_SECONDS, timeout * 0.9), take)
    timer.daemon = True
    timer.start()
    # To the process's own stderr: the one pytest captures would be lost with the process.
    faulthandler.dump_traceback_later(timeout + BACKSTOP_SECONDS, exit=True, file=sys.__stderr__)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        timer.cancel()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    taken = item.stash.get(STACKS, None)
    if taken and report.failed:
        report.sections.append(("stacks taken before the time-out", taken))
        del item.stash[STACKS]
    return report


def pytest_terminal_summary(terminalreporter) -> None:
    if not FIGURES:
        return
    terminalreporter.section("reliability figures")
    for item, figures in FIGURES.items():
        shown = ", ".join(f"{name}={value}" for name, value in figures.items())
        terminalreporter.write_line(f"{item}: {shown}")
    destination = os.environ.get("PI_LSP_RELIABILITY_FIGURES")
    if destination:
        Path(destination).write_text(json.dumps(FIGURES, indent=2) + "\n", encoding="utf-8")
