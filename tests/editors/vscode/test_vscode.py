"""The VS Code extension's tests, run by pytest: its vitest unit suite, its .vsix packaging (the
platform-specific package that carries the server, and its size), and end-to-end scenarios in a
real VS Code (code-server) driven by Chromium.

The end-to-end run starts, each in a temporary home: the scripted model server, code-server with
the packaged extension (.vsix) installed and the real ``pi-lsp`` server configured through
the ``pi.*`` settings, and the playwright-core driver ``editors/vscode/test/e2e/drive.mjs``, which
reports one JSON line per scenario. Screenshots land in ``editors/vscode/test-artifacts/``.
A second run installs the same .vsix into a fresh profile where nothing but the system's
``python3`` exists, and the extension must start the server it carries (``test-artifacts/bundled``).
``make install-vscode`` (``editors/vscode/test/install.sh``) installs what these tests need.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from pi_lsp import __version__
from tests.big_session import write_big_session
from tests.wheelhouse import BUILD_TIMEOUT_S, building_from_the_checkout

ROOT = Path(__file__).resolve().parents[3]
EXTENSION = ROOT / "editors" / "vscode"
CODE_SERVER = EXTENSION / ".code-server" / "node_modules" / ".bin" / "code-server"
ARTIFACTS = EXTENSION / "test-artifacts"

pytestmark = pytest.mark.timeout(BUILD_TIMEOUT_S)
SCENARIOS = [
    "activation",
    "prompt_stream_tool_call",
    "skill_completion",
    "steering",
    "queue",
    "retry_notice",
    "stop_turn",
    "compact",
    "navigate_with_summary",
    "fork",
    "label",
    "hide_and_show",
    "model_picker",
    "new_and_resume",
    "search_sessions",
    "sessions_view",
    "restart_server",
    "navigate_from_palette",
    "restore_files",
    "context_edit_marks",
    "context_view",
    "api_key",
    "permission_question",
    "auth_error_notice",
    "setup_view",
    "mcp_servers",
    "chat_rich_text",
    "tool_cards",
    "mcp_sign_in",
    "editor_models",
    "big_session",
]
SCREENSHOTS = [
    "activation.png",
    "chat.png",
    "chat-sidebar.png",
    "compact.png",
    "compact-sidebar.png",
    "navigate.png",
    "tree.png",
    "tree-sidebar.png",
    "branches.png",
    "fork.png",
    "auth-error.png",
    "setup.png",
    "restore-preview.png",
    "big-session.png",
    "context.png",
    "compaction-card.png",
    "rich-text.png",
    "tool-cards.png",
    "editor-model.png",
]
FAKE_KEY = "sk-vscode-e2e-FAKE-5d1c0b9a"
"""The key the api_key scenario stores with "Pi: Set API Key…" (scenarios.mjs has the same)."""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
INSTALL_HINT = "run `make install-vscode` (editors/vscode/test/install.sh) first"
# The size the README states for the linux-x64 .vsix: the goal was 60 MB, and the README says why
# the package is bigger (litellm's native core alone is 17.5 MB compressed; the MCP SDK and what it
# imports, cryptography among them, about 6 MB). 100 MB is the ceiling.
VSIX_BUDGET_MB = 80
VSIX_CEILING_MB = 100
SYSTEM_PYTHON = Path("/usr/bin/python3")


def _require_installed() -> None:
    missing = [str(path) for path in (EXTENSION / "node_modules", CODE_SERVER) if not path.exists()]
    if missing:
        pytest.fail(f"the VS Code test tools are missing ({', '.join(missing)}): {INSTALL_HINT}")


def _run(command: list[str], timeout: float, **options) -> subprocess.CompletedProcess:
    return subprocess.run(
        command,
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **options,
    )


def test_extension_typechecks():
    _require_installed()
    result = _run(["npx", "tsc", "--noEmit"], timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_vitest_unit_suite_passes():
    _require_installed()
    result = _run(["npx", "vitest", "run"], timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert " passed" in output and " failed" not in output, output


@pytest.fixture(scope="module")
def vsix(tmp_path_factory) -> Path:
    """The packaged extension (`npm run package`): what
    users install, and what the e2e run installs."""
    _require_installed()
    path = tmp_path_factory.mktemp("vsix") / "pi-lsp-linux-x64.vsix"
    with building_from_the_checkout():  # the bundle's wheel is built in the checkout
        result = _run(
            ["npm", "run", "package", "--", "--target", "linux-x64", "-o", str(path)], timeout=900
        )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return path


SCRIPTED_MODELS = EXTENSION / "test" / "e2e" / "scripted-models"
SCRIPTED_MODELS_ID = "pi-lsp-test.scripted-models"
"""The test extension that contributes a chat model through VS Code's Language Model API (its
README says how); its proposed API is enabled for it alone."""


@pytest.fixture(scope="module")
def scripted_models_vsix(tmp_path_factory) -> Path:
    _require_installed()
    path = tmp_path_factory.mktemp("scripted-models") / "scripted-models.vsix"
    vsce = EXTENSION / "node_modules" / ".bin" / "vsce"
    options = ["--allow-missing-repository", "--skip-license", "--no-dependencies"]
    result = subprocess.run(
        [str(vsce), "package", *options, "-o", str(path)],
        cwd=SCRIPTED_MODELS,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return path


def test_extension_packages_as_a_vsix_that_carries_the_server(vsix):
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        manifest = archive.read("extension.vsixmanifest").decode()
        bundle = json.loads(archive.read("extension/bundled/libs/manifest.json"))
    assert {
        "extension/package.json",
        "extension/out/extension.js",
        "extension/out/webview.js",
        "extension/media/chat.css",
        "extension/bundled/launch.py",
        "extension/bundled/libs/common/pi_lsp/__init__.py",
        "extension/bundled/libs/common/litellm/__init__.py",
    } <= names
    assert 'TargetPlatform="linux-x64"' in manifest
    assert bundle["target"] == "linux-x64" and bundle["abis"] == ["cp311", "cp312", "cp313"]
    for abi in bundle["abis"]:
        tag = f"cpython-{abi[2:]}-x86_64-linux-gnu.so"
        assert any(
            name.startswith(f"extension/bundled/libs/{abi}/pydantic_core/") and name.endswith(tag)
            for name in names
        ), abi
    assert not any(
        name.startswith(("extension/node_modules/", "extension/src/", "extension/test"))
        or "/__pycache__/" in name
        for name in names
    )


def test_the_vsix_stays_within_the_size_the_readme_states(vsix):
    megabytes = vsix.stat().st_size / 1e6
    assert megabytes <= VSIX_BUDGET_MB <= VSIX_CEILING_MB, (
        f"the .vsix is {megabytes:.1f} MB, over the {VSIX_BUDGET_MB} MB the README states"
    )
    readme = (EXTENSION / "README.md").read_text()
    assert f"at most {VSIX_BUDGET_MB} MB" in readme


# A Debian or Ubuntu python3 without python3-venv has neither venv nor ensurepip (nor pip): the
# launcher must not need them. Blocking the modules in sys.modules makes every import of them fail.
_WITHOUT_VENV = (
    "import runpy, sys\n"
    "for name in ('venv', 'ensurepip', 'pip'): sys.modules[name] = None\n"
    "sys.argv = [sys.argv[1], '--version']\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def test_the_vsix_server_runs_on_a_python_without_venv_ensurepip_or_pip(vsix, tmp_path):
    with zipfile.ZipFile(vsix) as archive:
        archive.extractall(tmp_path)
    launcher = tmp_path / "extension" / "bundled" / "launch.py"
    completed = subprocess.run(
        [str(SYSTEM_PYTHON), "-I", "-c", _WITHOUT_VENV, str(launcher)],
        capture_output=True,
        check=False,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip() == f"pi-lsp {__version__}"


# --------------------------------------------------------------------------- end to end


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(what: str, check, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


SHARED_SETTINGS = ("PI_LSP_SHARED", "PI_LSP_SHARED_IDLE_SECONDS")
"""Kept from the caller's environment: ``PI_LSP_SHARED=1 pytest tests/editors/vscode`` runs the
editor's servers as forwarders to one shared server (docs/performance.md, "The shared server")."""


@functools.cache
def _shared_runtime() -> Path:
    """The shared server's runtime directory: short, as a socket's path must fit in 107 bytes."""
    return Path(tempfile.mkdtemp(prefix="pi-lsp-run-"))


def _hermetic_environment(home: Path) -> dict[str, str]:
    environment = {
        key: value
        for key, value in os.environ.items()
        if key in SHARED_SETTINGS
        or (
            not key.startswith(("PI_LSP_", "PI_CODING_AGENT", "VSCODE_"))
            and not key.endswith("_API_KEY")  # the machine's own provider keys stay out
        )
    }
    if environment.get("PI_LSP_SHARED"):
        environment["XDG_RUNTIME_DIR"] = str(_shared_runtime())
    environment.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
        PI_CODING_AGENT_DIR=str(home / "agent"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    return environment


def _workspace(root: Path) -> Path:
    workspace = root / "project"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Always answer in English.\n")
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    skill = workspace / ".pi" / "skills" / "review"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: review\ndescription: Review a file for bugs\n---\n"
        "Read the file and list every bug you find.\n"
    )
    # The mcp_servers scenario's server: built with the MCP SDK, its tools direct.
    server = Path(__file__).resolve().parents[2] / "mcp" / "misbehaving_server.py"
    tools = {"command": sys.executable, "args": [str(server)], "exposure": "direct"}
    (workspace / ".pi" / "mcp.json").write_text(json.dumps({"mcpServers": {"tools": tools}}))
    prompts = workspace / ".pi" / "prompts"
    prompts.mkdir()
    (prompts / "explain.md").write_text(
        "---\ndescription: Explain a file\n---\nExplain $1 line by line.\n"
    )
    return workspace


def _user_settings(user_data: Path, api_base: str, server_path: str | None = None) -> None:
    settings = {
        "pi.server.path": str(Path(sys.executable).parent / "pi-lsp")
        if server_path is None
        else server_path,
        "pi.model": "openai/scripted",
        "pi.apiBase": api_base,
        "pi.contextWindow": 100000,
        "pi.tokenizer": "chars4",
        "pi.compaction.keepRecentTokens": 40,
        "pi.compaction.reserveTokens": 100,
        "pi.retry.baseDelayMs": 20,
        # The scenarios script exact replies; naming would ask the model once more.
        "pi.autoName": False,
        # The steering scenario's command runs without asking; permission_question's asks.
        "pi.permissions": {"bash": {"ask": True, "allow": ["echo *", "cat *"]}},
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "workbench.enableExperiments": False,
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "telemetry.telemetryLevel": "off",
        "security.workspace.trust.enabled": False,
        "workbench.colorTheme": "Default Dark Modern",
    }
    (user_data / "User").mkdir(parents=True)
    (user_data / "User" / "settings.json").write_text(json.dumps(settings, indent=2))


class Processes:
    """The processes of one end-to-end run, stopped in reverse order."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen] = []

    def start(self, command: list[str], log: Path, **options) -> subprocess.Popen:
        with log.open("w") as output:
            process = subprocess.Popen(
                command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True, **options
            )
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        for process in reversed(self.started):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def _start_scripted_llm(
    processes: Processes, root: Path, environment: dict[str, str], artifacts: Path = ARTIFACTS
) -> str:
    port_file = root / "llm.port"
    processes.start(
        [sys.executable, "-m", "pi_lsp.scripted_llm", "--port-file", str(port_file)],
        artifacts / "scripted-llm.log",
        env=environment,
    )
    _wait_for("the scripted model server", port_file.exists)
    return f"http://127.0.0.1:{port_file.read_text().strip()}"


def _start_oauth_mcp_server(
    processes: Processes, root: Path, environment: dict[str, str], artifacts: Path = ARTIFACTS
) -> str:
    """The mcp_sign_in scenario's OAuth-protected MCP server (the SDK's server-side auth), on
    ``[::1]``: code-server turns pages on 127.0.0.1 or localhost that an extension opens into its
    own port proxy, which loses their path (a real authorization server is not local)."""
    with socket.socket(socket.AF_INET6) as probe:
        probe.bind(("::1", 0))
        port = probe.getsockname()[1]
    server = Path(__file__).resolve().parents[2] / "mcp" / "oauth_server.py"
    processes.start(
        [sys.executable, str(server), str(port), "::1"],
        artifacts / "oauth-mcp.log",
        env=environment,
    )
    base = f"http://[::1]:{port}"
    _wait_for(
        "the OAuth MCP server", lambda: _healthy(f"{base}/.well-known/oauth-authorization-server")
    )
    return f"{base}/mcp"


def _install_extension(
    vsix: Path, user_data: Path, extensions: Path, environment: dict[str, str]
) -> None:
    result = subprocess.run(
        [
            str(CODE_SERVER),
            "--user-data-dir",
            str(user_data),
            "--extensions-dir",
            str(extensions),
            "--install-extension",
            str(vsix),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
    )
    assert result.returncode == 0 and "successfully installed" in result.stdout, (
        result.stdout + result.stderr
    )


def _start_code_server(
    processes: Processes,
    root: Path,
    workspace: Path,
    environment: dict[str, str],
    vsix: Path,
    artifacts: Path = ARTIFACTS,
    test_extension: Path | None = None,
) -> str:
    """code-server with the extension (and ``test_extension``, its proposed API enabled)."""
    user_data, extensions = root / "user-data", root / "extensions"
    _install_extension(vsix, user_data, extensions, environment)
    proposed: list[str] = []
    if test_extension is not None:
        _install_extension(test_extension, user_data, extensions, environment)
        proposed = ["--enable-proposed-api", SCRIPTED_MODELS_ID]
    port = _free_port()
    processes.start(
        [
            str(CODE_SERVER),
            "--bind-addr",
            f"127.0.0.1:{port}",
            "--auth",
            "none",
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
            "--user-data-dir",
            str(user_data),
            "--extensions-dir",
            str(extensions),
            *proposed,
            str(workspace),
        ],
        artifacts / "code-server.log",
        env=environment,
    )
    _wait_for("code-server", lambda: _healthy(f"http://127.0.0.1:{port}/healthz"))
    return f"http://127.0.0.1:{port}/?folder={workspace}"


def _collect_server_logs(user_data: Path, artifacts: Path = ARTIFACTS) -> None:
    for log in user_data.glob("logs/**/*pi-lsp*.log"):
        shutil.copy(log, artifacts / "pi-lsp-output.log")


@pytest.fixture(scope="module")
def e2e_root(tmp_path_factory) -> Path:
    """Where the end-to-end run keeps code-server's data, the homes and the workspace."""
    return tmp_path_factory.mktemp("vscode-e2e")


@pytest.fixture(scope="module")
def e2e_results(e2e_root, vsix, scripted_models_vsix) -> dict[str, dict]:
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    root = e2e_root
    environment = _hermetic_environment(root / "home")
    workspace = _workspace(root)
    processes = Processes()
    try:
        llm = _start_scripted_llm(processes, root, environment)
        oauth_mcp = _start_oauth_mcp_server(processes, root, environment)
        _user_settings(root / "user-data", f"{llm}/v1")
        # The test extension's chat model answers from the scripted model server too.
        code_server_environment = {**environment, "PI_TEST_MODEL_SERVER": llm}
        url = _start_code_server(
            processes,
            root,
            workspace,
            code_server_environment,
            vsix,
            test_extension=scripted_models_vsix,
        )
        # Copied into the session directory by the big_session scenario (not before: the server
        # opens the newest session at start).
        big = root / "2026-01-01T00-00-00-000Z_big-100000.jsonl"
        write_big_session(big, workspace, 100_000)
        driver_environment = {
            **_hermetic_environment(root / "chromium-home"),
            "PI_E2E_URL": url,
            "PI_E2E_LLM": llm,
            "PI_E2E_ARTIFACTS": str(ARTIFACTS),
            "PI_E2E_WORKSPACE": str(workspace),
            "PI_E2E_BIG_SESSION": str(big),
            "PI_E2E_OAUTH_MCP_URL": oauth_mcp,
            # The scenarios to run, comma-separated (all when unset): for working on a few.
            **(
                {"PI_E2E_SCENARIOS": os.environ["PI_E2E_SCENARIOS"]}
                if os.environ.get("PI_E2E_SCENARIOS")
                else {}
            ),
        }
        driver = _run(["node", "test/e2e/drive.mjs"], timeout=300, env=driver_environment)
        (ARTIFACTS / "driver.log").write_text(driver.stdout + driver.stderr)
        shared_servers = _shared_servers(_shared_runtime())
    finally:
        processes.stop_all()
        _collect_server_logs(root / "user-data")
    results = {}
    for line in driver.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
            results[result["scenario"]] = result
    assert "driver" not in results, results["driver"]["error"]
    results["shared servers"] = {"count": len(shared_servers)}
    return results


def _shared_servers(runtime_directory: Path) -> set[int]:
    """The shared servers (``pi-lsp --serve-shared``) running on ``runtime_directory``."""
    runtime = f"XDG_RUNTIME_DIR={runtime_directory}".encode()
    pids = set()
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and b"--serve-shared" in (entry / "cmdline").read_bytes()
                and runtime in (entry / "environ").read_bytes()
            ):
                pids.add(int(entry.name))
        except OSError:
            continue
    return pids


@pytest.mark.skipif(not os.environ.get("PI_LSP_SHARED"), reason="PI_LSP_SHARED is not set")
def test_e2e_ran_on_one_shared_server_when_asked(e2e_results):
    assert e2e_results["shared servers"]["count"] == 1


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_e2e_scenario(scenario, e2e_results):
    result = e2e_results.get(scenario)
    assert result is not None, (
        f"the driver reported nothing for {scenario}; see {ARTIFACTS / 'driver.log'}"
    )
    assert result["ok"], f"{scenario}: {result['error']}\nscreenshot: {result.get('screenshot')}"


def test_e2e_screenshots_are_non_empty_pngs(e2e_results):
    for name in SCREENSHOTS:
        data = (ARTIFACTS / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000, (
            f"{name} is not a real screenshot"
        )


def test_e2e_the_stored_key_is_in_no_file(e2e_results, e2e_root):
    """Set with "Pi: Set API Key…", the key reached the model server (api_key) and stays in
    VS Code's secret storage: not in settings.json, pi's auth.json, a session, a log."""
    assert e2e_results.get("api_key", {}).get("ok"), "the api_key scenario did not pass"
    settings = (e2e_root / "user-data" / "User" / "settings.json").read_text()
    assert '"pi.model"' in settings and FAKE_KEY not in settings
    searched = [e2e_root / "user-data", e2e_root / "home", e2e_root / "project", ARTIFACTS]
    holding = [
        str(path)
        for place in searched
        for path in place.rglob("*")
        if path.is_file() and FAKE_KEY.encode() in path.read_bytes()
    ]
    assert not holding, f"the key was written to {holding}"
    assert not (e2e_root / "home" / "agent" / "auth.json").exists()


# --------------------------------------------------------------------------- the bundled server


def _bare_environment(home: Path) -> dict[str, str]:
    """A user's environment with nothing of pi-lsp: a system PATH, no virtualenv, no PYTHONPATH."""
    environment = {
        key: value
        for key, value in _hermetic_environment(home).items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    environment["PATH"] = "/usr/bin:/bin"
    return environment


@pytest.fixture(scope="module")
def bundled_run(tmp_path_factory, vsix) -> dict:
    """The .vsix in a fresh profile where only the system's python3 exists: the driver's results
    for the bundled scenario and the extension's Output channel."""
    artifacts = ARTIFACTS / "bundled"
    shutil.rmtree(artifacts, ignore_errors=True)
    artifacts.mkdir(parents=True)
    root = tmp_path_factory.mktemp("vscode-bundled")
    environment = _bare_environment(root / "home")
    # The packaged server runs as a shared one here: CI's VS Code run of the shared server (the
    # main run covers the plain stdio server; PI_LSP_SHARED=1 runs it shared too).
    runtime = Path(tempfile.mkdtemp(prefix="pi-lsp-run-"))
    environment.update(
        PI_LSP_SHARED="1", PI_LSP_SHARED_IDLE_SECONDS="5", XDG_RUNTIME_DIR=str(runtime)
    )
    for name in ("pi-lsp", "python"):
        assert shutil.which(name, path=environment["PATH"]) is None, f"{name} is on the bare PATH"
    assert shutil.which("python3", path=environment["PATH"]) == str(SYSTEM_PYTHON)
    importable = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import pi_lsp"],
        cwd=root,
        env=environment,
        capture_output=True,
        check=False,
    )
    assert importable.returncode != 0, (
        "the system python3 can import pi_lsp: the test proves nothing"
    )
    workspace = _workspace(root)
    processes = Processes()
    try:
        llm = _start_scripted_llm(processes, root, _hermetic_environment(root / "home"), artifacts)
        _user_settings(root / "user-data", f"{llm}/v1", server_path="")
        url = _start_code_server(processes, root, workspace, environment, vsix, artifacts)
        driver_environment = {
            **_hermetic_environment(root / "chromium-home"),
            "PI_E2E_URL": url,
            "PI_E2E_LLM": llm,
            "PI_E2E_ARTIFACTS": str(artifacts),
            "PI_E2E_WORKSPACE": str(workspace),
            "PI_E2E_SUITE": "bundled",
        }
        driver = _run(["node", "test/e2e/drive.mjs"], timeout=300, env=driver_environment)
        (artifacts / "driver.log").write_text(driver.stdout + driver.stderr)
        shared_servers = _shared_servers(runtime)
    finally:
        processes.stop_all()
        _collect_server_logs(root / "user-data", artifacts)
    results = [json.loads(line) for line in driver.stdout.splitlines() if line.startswith("{")]
    output = artifacts / "pi-lsp-output.log"
    return {
        "results": results,
        "output": output.read_text() if output.exists() else "",
        "shared servers": len(shared_servers),
    }


def test_the_vsix_server_serves_the_editor_from_a_shared_server(bundled_run):
    [result] = bundled_run["results"]
    assert result["ok"], f"{result['error']}\nscreenshot: {result.get('screenshot')}"
    assert "not sharing a server" not in bundled_run["output"], bundled_run["output"]
    assert bundled_run["shared servers"] == 1


def test_the_vsix_runs_its_own_server_with_only_the_system_python(bundled_run):
    [result] = bundled_run["results"]
    assert result["ok"], f"{result['error']}\nscreenshot: {result.get('screenshot')}"
    output = bundled_run["output"]
    version = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
        capture_output=True,
        check=False,
        text=True,
    ).stdout.strip()
    assert "pi.server.path: not set" in output, output
    assert "pi-lsp on PATH: not found" in output, output
    assert "the Python extension's interpreter: the Python extension is not installed" in output
    abi = "cp" + "".join(version.split(".")[:2])
    assert (
        f"python3 on PATH ({SYSTEM_PYTHON}): chosen, Python {version} ({abi}) with the bundled "
        f"pi-lsp {__version__}"
    ) in output, output
    assert f"pi-lsp {__version__} is running (python3 on PATH" in output, output
