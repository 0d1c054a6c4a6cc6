"""The tests' way to the wheelhouse (``tools/wheelhouse.py``): the wheels of one CI run, downloaded
once and reused by the wheel smoke test, the Neovim ``:PiInstall`` test and the VS Code bundle.

``make install`` fills it before the tests run; here it is only topped up for an interpreter
whose ABI it lacks. ``offline_pip_environment`` points pip at it and away from the registry, so
an install in a test is quick and proves that nothing is fetched at that point.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "wheelhouse.py"


def python_abi(python: str) -> str:
    """``cp311`` for a CPython 3.11 ``python``."""
    return subprocess.run(
        [python, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.strip()


def tool():
    """``tools/wheelhouse.py`` as a module."""
    spec = importlib.util.spec_from_file_location("pi_lsp_tools_wheelhouse", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def wheelhouse_for(python: str = sys.executable) -> Path:
    """The wheelhouse folder for ``python``'s ABI on this machine (downloaded if missing)."""
    wheelhouse = tool()
    abi = python_abi(python)
    completed = subprocess.run(
        [sys.executable, str(TOOL), "--abi", abi],
        capture_output=True,
        check=False,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr
    return wheelhouse.folder(wheelhouse.DEFAULT_DESTINATION, wheelhouse.host_target(), abi)


def offline_pip_environment(folder: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment in which pip installs from ``folder`` only."""
    environment = dict(os.environ if base is None else base)
    environment.update(
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(folder),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return environment


BUILD_TIMEOUT_S = 900
"""pytest-timeout for the modules that build from the checkout: a test's setup may wait for the
other worker's build to finish before it builds."""


@contextlib.contextmanager
def building_from_the_checkout() -> Iterator[None]:
    """Held while something builds pi-lsp from this checkout (the sdist and wheel, the VS Code
    bundle, :PiInstall). setuptools builds in the checkout's ``build/`` and ``*.egg-info``, and two
    builds at once, from `make test`'s two workers, would overwrite each other's files."""
    lock_path = ROOT / "build" / ".checkout-build.lock"
    lock_path.parent.mkdir(exist_ok=True)
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
