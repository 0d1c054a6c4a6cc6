"""How `make test` splits the suites between its two workers (pytest-xdist, ``--dist loadfile``).

Each test file is one unit of work, so a file's warm server, Neovim or code-server starts once.
The longest files are handed out first, so neither worker is left with a long one at the end;
the rest follow in the order collected, which ends with the unit tests: many short files that
even out the end. ``make test`` passes ``--no-loadscope-reorder``: by default xdist hands out the
files with the most tests first, which sent the long one-test files (the kills, the fuzzing) to
the very end, where one of them alone was the last minutes of the run.
The files that build pi-lsp from the checkout take turns through
``tests.wheelhouse.building_from_the_checkout``, so they are not handed out together.
"""

from __future__ import annotations

import pytest

LONGEST_FIRST = (  # from the --durations of CI runs on two workers
    "tests/editors/vscode/test_vscode.py",  # 470 s
    # Not the two other files that build from the checkout yet: they would wait for the VS Code
    # bundle's build, and then for each other's (started together, their setups took 375 s
    # longer than in a run where they started apart).
    "tests/reliability/test_kill_server_mid_turn.py",  # 60-120 s, one test
    "tests/e2e/test_acplint.py",  # 60 s, one test
    "tests/packaging/test_python_package.py",  # 150 s
    "tests/editors/neovim/test_install.py",  # 110 s
    "tests/e2e/acp/test_acp.py",  # 56 s
    "tests/reliability/test_fuzzed_requests.py",  # 50 s, one test
    "tests/reliability/test_kill_during_appends.py",  # 40 s, one test (385 s before its drivers)
    "tests/reliability/test_hostile_inputs.py",
)


def _rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: the tests of a file keep their order
