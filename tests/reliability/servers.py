"""Real pi-lsp server processes for the reliability tests, with the scripted model.

``start_server`` starts ``python -m pi_lsp`` through ``PiClient`` with an isolated home and
initializes it on a workspace whose sessions live in ``<workspace>/sessions``;
``FAULT_INJECTION`` is the directory to put on the server's ``PYTHONPATH`` for
``fault_injection/sitecustomize.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_lsp.client import PiClient, isolated_environment

FAULT_INJECTION = Path(__file__).resolve().parent / "fault_injection"
SCRIPTED_MODEL = "openai/scripted"


def make_workspace(root: Path) -> Path:
    workspace = root / "project"
    workspace.mkdir(parents=True)
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    return workspace


def server_options(api_base: str, workspace: Path, **extra: Any) -> dict[str, Any]:
    return {
        "model": SCRIPTED_MODEL,
        "apiBase": api_base,
        "sessionDir": str(workspace / "sessions"),
        "retry": {"baseDelayMs": 20},
        "autoName": False,
        **extra,
    }


async def start_server(
    home: Path,
    workspace: Path,
    options: dict[str, Any],
    *,
    environment: dict[str, str] | None = None,
    timeout: float = 300.0,
) -> PiClient:
    client = PiClient(timeout=timeout)
    env = isolated_environment(home)
    env.update(environment or {})
    await client.start_server(env=env)
    await client.initialize_workspace(workspace, options)
    return client
