"""How `make test` splits the suites between its two workers (pytest-xdist, ``--dist loadgroup``).

Each test file is one unit of work, so a file's warm server, Neovim or code-server starts once.
The files that build pi-lsp from this checkout (the sdist and wheel, the VS Code bundle,
:PiInstall) form one unit together: setuptools builds in the source tree's ``build/`` and
``*.egg-info``, and two builds at once would overwrite each other's files. That unit is the
longest, so it is handed out first and the other worker takes every other file meanwhile.
"""

from __future__ import annotations

import pytest

SOURCE_BUILDS = (
    "tests/packaging/",
    "tests/editors/vscode/",
    "tests/editors/neovim/test_install.py",
)
SOURCE_BUILD_GROUP = "builds-from-the-checkout"


def _group(item: pytest.Item) -> str:
    path = item.nodeid.split("::", 1)[0]
    return SOURCE_BUILD_GROUP if path.startswith(SOURCE_BUILDS) else path


@pytest.hookimpl(tryfirst=True)  # before xdist turns the marks into scheduling groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group(item)))
    items.sort(key=lambda item: _group(item) != SOURCE_BUILD_GROUP)
