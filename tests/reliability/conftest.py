"""Fixtures of the reliability suite: pi 0.84.2 on Node 22, and the figures printed at the end."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conformance.harness import install_reference

from .figures import FIGURES


@pytest.fixture(scope="session")
def reference_node() -> Path:
    """The Node 22 that runs pi 0.84.2 (installed first if needed)."""
    return install_reference()


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
