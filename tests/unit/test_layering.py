"""No module imports across the layers docs/architecture.md documents.

Every ``import`` in ``pi_lsp`` (at module level, inside functions and under ``TYPE_CHECKING`` alike)
is checked against the table: which of pi-lsp's own packages a package may import, and which
third-party libraries only the adapters may touch (pygls, lsprotocol), only ``llm`` may load
(litellm, lazily) and only the scripted server may serve with (aiohttp: the direct path streams
with h11, ``llm/http_stream.py``, which loads much faster).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pi_lsp"

ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "startup": set(),
    "session": {"errors"},
    "compaction": {"session", "errors"},
    "checkpoints": {"errors"},
    "resources": {"compaction", "protocol", "errors"},
    "tools": {"errors"},
    "llm": {"errors", "scripted_llm.replies", "resources.models_file", "resources.auth_file"},
    "protocol": {"errors"},
    "config": {"compaction", "resources", "protocol", "errors"},
    "extensions": {"resources", "errors"},
    "agent": {
        "checkpoints",
        "session",
        "compaction",
        "resources",
        "tools",
        "llm",
        "protocol",
        "config",
        "extensions",
        "errors",
    },
    "services": {"agent", "config", "extensions", "llm", "tools", "errors"},
    "handlers": {
        "agent",
        "services",
        "protocol",
        "session",
        "resources",
        "config",
        "llm",
        "logs",
        "tools",
        "startup",
        "transport.client_gone",
        "errors",
    },
    "acp": {
        "agent",
        "services",
        "protocol",
        "session",
        "config",
        "logs",
        "llm",
        "tools",
        "errors",
        "__version__",
    },
    "scripted_llm": set(),
    "client": {"protocol", "__version__"},
    "demo": {"client", "scripted_llm", "session", "errors"},
    # The ways bytes reach the server (stdio, TCP, the shared server): an adapter like cli.py and
    # server.py, which the table leaves unchecked; the forwarder imports nothing but its address.
    "transport": {"server", "logs", "tools", "errors", "__version__"},
}
"""pi-lsp's own packages each package may import (itself always)."""

ADAPTER_LIBRARIES = {"pygls", "lsprotocol"}
PURE = {
    "checkpoints",
    "errors",
    "session",
    "compaction",
    "resources",
    "tools",
    "llm",
    "protocol",
    "config",
    "extensions",
    "agent",
    "services",
}


def _modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py"))


def _layer(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py")


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, at module level) for every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_level = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, id(node) in top_level) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from pi_lsp.x import y`` may import the module ``pi_lsp.x.y``: keep the full name.
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            found += [(name, node.lineno, id(node) in top_level) for name in names]
    return found


def _allowed(layer: str, imported: str) -> bool:
    target = imported.removeprefix("pi_lsp.")
    allowed = ALLOWED[layer] | {layer}
    return any(target == name or target.startswith(name + ".") for name in allowed)


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_imports_stay_within_the_layers(path):
    layer = _layer(path)
    problems = []
    for imported, line, top_level in _imports(path):
        root = imported.split(".")[0]
        where = f"{path.relative_to(PACKAGE)}:{line}"
        checked = root == "pi_lsp" and layer in ALLOWED
        if checked and not _allowed(layer, imported):
            problems.append(f"{where} imports {imported}, which the {layer} layer may not")
        if root in ADAPTER_LIBRARIES and layer in PURE:
            problems.append(f"{where} imports {root}: only the LSP adapters may")
        if root == "litellm" and (path.name != "_litellm.py" or top_level):
            problems.append(f"{where} imports litellm: only llm/_litellm.py may, lazily")
        if root == "aiohttp" and layer != "scripted_llm":
            problems.append(f"{where} imports aiohttp: only the scripted server may")
    assert not problems, "\n".join(problems)


def test_the_table_covers_every_package():
    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert packages <= set(ALLOWED), (
        f"packages missing from the layering table: {packages - set(ALLOWED)}"
    )


def test_a_crossing_import_is_caught():
    assert not _allowed("session", "pi_lsp.agent.agent")
    assert not _allowed("llm", "pi_lsp.scripted_llm.server")
    assert _allowed("llm", "pi_lsp.scripted_llm.replies")
    assert _allowed("agent", "pi_lsp.protocol")
