"""How `make test` splits the suites between its two workers (pytest-xdist, ``--dist loadfile``).

Each test file is one unit of work, so a file's warm server, Neovim or code-server starts once.
The longest files are handed out first, so neither worker is left with a long one at the end.
The files that build pi-lsp from the checkout take turns through
``tests.wheelhouse.building_from_the_checkout``.
"""

from __future__ import annotations

import pytest

LONGEST_FIRST = (
    "tests/editors/vscode/test_vscode.py",
    "tests/packaging/test_python_package.py",
    "tests/editors/neovim/test_install.py",
)


def _rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: the tests of a file keep their order
