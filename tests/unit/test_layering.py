"""No module imports across the layers docs/architecture.md documents.

Every ``import`` in ``pi_lsp`` (at module level, inside functions and under ``TYPE_CHECKING`` alike)
is checked against the table of docs/architecture.md, read from the doc itself so the two cannot
differ: which of pi-lsp's own modules each package and root module may import, and which
third-party libraries only the adapters may touch (pygls, lsprotocol), only ``llm`` may load
(litellm, lazily) and only the scripted server may serve with (aiohttp: the direct path streams
with h11, ``llm/http_stream.py``, which loads much faster).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pi_lsp"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
TABLE_ROW = re.compile(r"^\| `pi_lsp/(?P<module>[a-z_]+)(?:/|\.py)` \| (?P<allowed>[^|]*) \|")


def _documented_layers() -> dict[str, set[str]]:
    """The table of docs/architecture.md: which of pi-lsp's own modules each layer may import."""
    allowed: dict[str, set[str]] = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        if match := TABLE_ROW.match(line):
            names = set(re.findall(r"`([a-z_.]+)`", match["allowed"]))
            allowed[match["module"]] = names
    return allowed


ALLOWED = _documented_layers()
"""pi-lsp's own modules each layer may import (itself always), as the doc's table shows them."""

ADAPTER_LIBRARIES = {"pygls", "lsprotocol"}
PURE = {
    "checkpoints",
    "project_memory",
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


def _is_module(name: str) -> bool:
    return (PACKAGE / name / "__init__.py").exists() or (PACKAGE / f"{name}.py").exists()


def _allowed(layer: str, imported: str) -> bool:
    target = imported.removeprefix("pi_lsp.")
    if "." not in target and not _is_module(target):  # ``from pi_lsp import __version__``
        target = "__init__"
    allowed = ALLOWED.get(layer, set()) | {layer}
    return any(target == name or target.startswith(name + ".") for name in allowed)


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_imports_stay_within_the_layers(path):
    layer = _layer(path)
    problems = []
    for imported, line, top_level in _imports(path):
        root = imported.split(".")[0]
        where = f"{path.relative_to(PACKAGE)}:{line}"
        if root == "pi_lsp" and not _allowed(layer, imported):
            problems.append(f"{where} imports {imported}, which the {layer} layer may not")
        if root in ADAPTER_LIBRARIES and layer in PURE:
            problems.append(f"{where} imports {root}: only the LSP adapters may")
        if root == "litellm" and (path.name != "_litellm.py" or top_level):
            problems.append(f"{where} imports litellm: only llm/_litellm.py may, lazily")
        if root == "aiohttp" and layer != "scripted_llm":
            problems.append(f"{where} imports aiohttp: only the scripted server may")
    assert not problems, "\n".join(problems)


def _package_and_root_modules() -> set[str]:
    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    return packages | {path.stem for path in PACKAGE.glob("*.py")}


def test_the_table_covers_every_package_and_root_module():
    missing = _package_and_root_modules() - set(ALLOWED)
    assert not missing, f"docs/architecture.md's layer table has no row for {sorted(missing)}"


def test_the_table_names_only_modules_that_exist():
    modules = _package_and_root_modules()
    stale = set(ALLOWED) - modules
    named = {name.split(".")[0] for names in ALLOWED.values() for name in names}
    assert not stale, f"the layer table has rows for modules that do not exist: {sorted(stale)}"
    assert named <= modules, f"the layer table allows modules that do not exist: {named - modules}"


def test_a_crossing_import_is_caught():
    assert not _allowed("session", "pi_lsp.agent.agent")
    assert not _allowed("llm", "pi_lsp.scripted_llm.server")
    assert _allowed("llm", "pi_lsp.scripted_llm.replies")
    assert _allowed("agent", "pi_lsp.protocol")
    assert not _allowed("errors", "pi_lsp.session.session")
    assert not _allowed("transport", "pi_lsp.handlers.sessions")
    assert _allowed("cli", "pi_lsp.__version__")
    assert not _allowed("session", "pi_lsp.REPOSITORY_URL")
