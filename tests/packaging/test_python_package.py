"""The Python package as users get it: ``python -m build`` makes an sdist and a wheel that
``twine check`` accepts, with complete metadata and everything needed at run time inside; the
wheel, installed (not editable) into a fresh virtualenv outside the checkout, runs
``pi-lsp --version``, ``pi-lsp demo`` and a ``pi/prompt`` turn against its own scripted model.

Dependencies come from the wheelhouse of this CI run (``tests/wheelhouse.py``), so the install
is offline; ``bench/install_bench.py`` prints its size and time.
"""

from __future__ import annotations

import ast
import email
import importlib.metadata
import json
import re
import subprocess
import sys
import tarfile
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest
from lsprotocol import types
from packaging.requirements import Requirement

from pi_lsp import __version__
from pi_lsp.client import EventLog
from tests.e2e.conftest import make_client, request, server_environment
from tests.wheelhouse import (
    BUILD_TIMEOUT_S,
    building_from_the_checkout,
    offline_pip_environment,
    wheelhouse_for,
)

pytestmark = pytest.mark.timeout(BUILD_TIMEOUT_S)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheelhouse() -> Path:
    return wheelhouse_for(sys.executable)


@pytest.fixture(scope="module")
def distributions(tmp_path_factory, wheelhouse) -> dict[str, Path]:
    """``python -m build``'s sdist and wheel (the wheel is built from the sdist, as PyPI users
    get it)."""
    output = tmp_path_factory.mktemp("dist")
    with building_from_the_checkout():
        completed = subprocess.run(
            [sys.executable, "-m", "build", "--outdir", str(output), str(ROOT)],
            capture_output=True,
            check=False,
            text=True,
            timeout=300,
            env=offline_pip_environment(wheelhouse),  # the isolated build env's setuptools, offline
        )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    (sdist,) = output.glob("pi_lsp-*.tar.gz")
    (wheel,) = output.glob("pi_lsp-*-py3-none-any.whl")
    return {"sdist": sdist, "wheel": wheel}


def test_twine_check_accepts_the_sdist_and_the_wheel(distributions):
    completed = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, distributions.values())],
        capture_output=True,
        check=False,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.count("PASSED") == 2, completed.stdout


def wheel_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        return email.message_from_bytes(archive.read(f"pi_lsp-{__version__}.dist-info/METADATA"))


def test_the_metadata_is_complete_and_has_one_version(distributions):
    assert distributions["wheel"].name == f"pi_lsp-{__version__}-py3-none-any.whl"
    metadata = wheel_metadata(distributions["wheel"])
    assert metadata["Name"] == "pi-lsp" and metadata["Version"] == __version__
    assert metadata["License-Expression"] == "MIT" and metadata["License-File"] == "LICENSE"
    assert metadata["Requires-Python"] == ">=3.11"
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert "pi-lsp is a coding agent for your editor" in metadata.get_payload()
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL"))
    assert {"Homepage", "Source", "Issues", "Documentation"} <= set(urls)
    classifiers = metadata.get_all("Classifier")
    for version in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers
    assert "Typing :: Typed" in classifiers
    package_json = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    assert package_json["version"] == __version__, "the extension and the server share a version"


def test_the_wheel_carries_everything_needed_at_run_time(distributions):
    with zipfile.ZipFile(distributions["wheel"]) as archive:
        names = set(archive.namelist())
    sources = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "pi_lsp").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert sources <= names, f"missing from the wheel: {sorted(sources - names)}"
    assert {
        "pi_lsp/scripted_llm/server.py",
        "pi_lsp/compaction/prompts.py",
        "pi_lsp/py.typed",
    } <= names
    assert f"pi_lsp-{__version__}.dist-info/licenses/LICENSE" in names
    entry_points = zipfile.ZipFile(distributions["wheel"]).read(
        f"pi_lsp-{__version__}.dist-info/entry_points.txt"
    )
    assert b"pi-lsp = pi_lsp.cli:main" in entry_points
    assert not any(name.startswith(("tests/", "editors/", "tools/", "bench/")) for name in names)


def test_the_sdist_builds_from_its_own_files(distributions):
    with tarfile.open(distributions["sdist"]) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "pi_lsp/__init__.py",
        "pi_lsp/py.typed",
    } <= names


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_declared_dependency_is_imported_by_pi_lsp():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    distributions_of = importlib.metadata.packages_distributions()
    imported = set()
    for source in (ROOT / "pi_lsp").rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    used = {_normalized(d) for module in imported for d in distributions_of.get(module, [])}
    unused = [text for text in declared if _normalized(Requirement(text).name) not in used]
    assert not unused, f"declared but never imported by pi_lsp: {unused}"


# --------------------------------------------------------------------------- installed


@pytest.fixture(scope="module")
def installed(tmp_path_factory, distributions, wheelhouse) -> dict:
    """A fresh virtualenv outside the checkout with the wheel installed (not editable)."""
    home = tmp_path_factory.mktemp("installed")
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    started = time.monotonic()
    completed = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            str(distributions["wheel"]),
        ],
        capture_output=True,
        check=False,
        text=True,
        timeout=600,
        # Bytecode for every module is a user's install; the test compiles only what it imports.
        env={**offline_pip_environment(wheelhouse), "PIP_NO_COMPILE": "1"},
        cwd=home,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    environment = server_environment()
    environment.pop("PYTHONPATH", None)
    return {
        "home": home,
        "bin": venv / "bin",
        "environment": environment,
        "seconds": time.monotonic() - started,
    }


def run_installed(
    installed: dict, *command: str, timeout: float = 120
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(installed["bin"] / command[0]), *command[1:]],
        capture_output=True,
        check=False,
        text=True,
        timeout=timeout,
        cwd=installed["home"],
        env=installed["environment"],
    )


def test_the_installed_package_is_the_wheel_not_the_checkout(installed):
    completed = run_installed(installed, "python", "-c", "import pi_lsp; print(pi_lsp.__file__)")
    location = Path(completed.stdout.strip())
    assert completed.returncode == 0, completed.stderr
    assert installed["home"] in location.parents and ROOT not in location.parents
    listed = json.loads(
        run_installed(installed, "python", "-m", "pip", "list", "--format=json").stdout
    )
    [pi_lsp] = [package for package in listed if package["name"] == "pi-lsp"]
    assert pi_lsp["version"] == __version__ and "editable_project_location" not in pi_lsp


def test_pi_lsp_version_prints_the_one_version(installed):
    completed = run_installed(installed, "pi-lsp", "--version")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == f"pi-lsp {__version__}"


def test_the_demo_runs_from_the_installed_wheel(installed):
    completed = run_installed(installed, "pi-lsp", "demo", "story", timeout=240)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    assert "model: scripted" in completed.stdout
    assert "pi/navigate" in completed.stdout and "pi/fork" in completed.stdout
    assert (installed["home"] / "story" / "calc.py").exists()


class InstalledScriptedModel:
    """The scripted model server of the installed wheel, in its own process."""

    def __init__(self, installed: dict) -> None:
        port_file = installed["home"] / "scripted.port"
        self.process = subprocess.Popen(
            [
                str(installed["bin"] / "python"),
                "-m",
                "pi_lsp.scripted_llm",
                "--port-file",
                str(port_file),
            ],
            cwd=installed["home"],
            env=installed["environment"],
        )
        deadline = time.monotonic() + 30
        while not port_file.exists():
            assert self.process.poll() is None and time.monotonic() < deadline, "no scripted model"
            time.sleep(0.05)
        self.port = int(port_file.read_text())

    def enqueue(self, *replies: dict) -> None:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/__enqueue",
            data=json.dumps(list(replies)).encode(),
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(request, timeout=10).close()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def installed_model(installed):
    model = InstalledScriptedModel(installed)
    yield model
    model.stop()


async def test_a_prompt_against_the_installed_server(installed, installed_model):
    model = installed_model
    workspace = installed["home"] / "project"
    workspace.mkdir(exist_ok=True)
    client = make_client()
    await client.start_io(
        str(installed["bin"] / "pi-lsp"), env=installed["environment"], cwd=str(installed["home"])
    )
    try:
        log = EventLog()
        client.feature("pi/event")(lambda params: log.add(params))
        result = await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=workspace.as_uri(),
                initialization_options={
                    "model": "openai/scripted",
                    "apiBase": f"http://127.0.0.1:{model.port}/v1",
                    "autoName": False,
                },
            )
        )
        assert result.server_info.version == __version__
        model.enqueue({"kind": "text", "text": "Installed and it works.", "chunks": 3})
        answer = await request(client, "pi/prompt", {"text": "Does it work?"})
        assert answer["stopReason"] == "stop"
        deltas = [event["delta"] for event in log.events() if event["type"] == "text_delta"]
        assert "".join(deltas) == "Installed and it works."
        await client.shutdown_session()
    finally:
        await client.stop()
