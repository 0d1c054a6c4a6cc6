"""The figures the reliability tests measure, printed at the end of the run.

Each test records what it tried and what was lost with ``record_figure``; the suite's
``conftest.py`` prints them after the test summary (they are what ``docs/reliability.md``
reports), and writes them as JSON to ``PI_LSP_RELIABILITY_FIGURES`` when that is set.
"""

from __future__ import annotations

from typing import Any

FIGURES: dict[str, dict[str, Any]] = {}


def record_figure(item: str, **figures: Any) -> None:
    FIGURES.setdefault(item, {}).update(figures)
