"""Where Python extensions live, found as pi finds its extensions (listing only; nothing is run).

pi loads ``*.ts`` files and ``*/index.ts`` folders from ``<agentDir>/extensions/`` and
``.pi/extensions/``, plus the paths its settings files list under ``extensions``. pi-lsp does the
same for Python: a ``*.py`` file, or a folder with an ``__init__.py`` (a package), in those
folders or named by those settings. Names starting with ``_`` or ``.`` are skipped, so helper
modules can sit next to an extension. The project's own places (``.pi/extensions/`` and the
project settings' paths) count only in a trusted workspace: an extension runs code.

Importing the files is ``pi_lsp/extensions``' job; this module only lists them, with the time
each was last modified, so a reload knows which changed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import attrs

from pi_lsp.resources.diagnostics import ResourceDiagnostic, warning

ExtensionScope = Literal["user", "project"]

EXTENSIONS_FOLDER = "extensions"
PACKAGE_FILE = "__init__.py"


@attrs.frozen
class ExtensionFile:
    """One extension to load: a module file or a package's ``__init__.py``."""

    name: str
    """The file's stem, or the package folder's name."""
    path: str
    scope: ExtensionScope
    version: tuple[tuple[int, int], ...]
    """Modification time and size of each of the extension's ``.py`` files: a reload that finds
    another version imports the extension again."""


@attrs.frozen
class NamedExtensionPath:
    """A path a settings file lists under ``extensions``, and where it was listed."""

    path: Path
    scope: ExtensionScope
    declared_in: str
    line: int


def discover_extension_files(
    workspace: Path,
    agent_dir: Path,
    named: Iterable[NamedExtensionPath],
    *,
    trusted: bool,
) -> tuple[tuple[ExtensionFile, ...], tuple[ResourceDiagnostic, ...]]:
    """Every extension file in load order: paths the settings name (project ones first), then
    ``.pi/extensions/``, then ``<agentDir>/extensions/``; each file once."""
    found: list[ExtensionFile] = []
    problems: list[ResourceDiagnostic] = []
    named = [place for place in named if trusted or place.scope == "user"]
    places: list[tuple[Path, ExtensionScope, NamedExtensionPath | None]] = [
        *((place.path, place.scope, place) for place in named if place.scope == "project"),
    ]
    if trusted:
        places.append((workspace / ".pi" / EXTENSIONS_FOLDER, "project", None))
    places += [(place.path, place.scope, place) for place in named if place.scope == "user"]
    places.append((agent_dir / EXTENSIONS_FOLDER, "user", None))
    seen: set[str] = set()
    for path, scope, declared in places:
        if declared is not None and not path.exists():
            problems.append(
                warning(
                    declared.declared_in,
                    declared.line,
                    f"extension path {path} does not exist",
                )
            )
            continue
        for extension in _extensions_at(path, scope, explicit=declared is not None):
            if extension.path not in seen:
                seen.add(extension.path)
                found.append(extension)
    return tuple(found), tuple(problems)


def _extensions_at(path: Path, scope: ExtensionScope, *, explicit: bool) -> list[ExtensionFile]:
    if path.is_file():
        return [_module(path, scope)] if explicit or _is_candidate(path) else []
    if not path.is_dir():
        return []
    if explicit and (path / PACKAGE_FILE).is_file():
        return [_package(path, scope)]
    extensions = []
    for child in sorted(path.iterdir(), key=lambda child: child.name):
        if child.name.startswith(("_", ".")):
            continue
        if child.is_file() and child.suffix == ".py":
            extensions.append(_module(child, scope))
        elif child.is_dir() and (child / PACKAGE_FILE).is_file():
            extensions.append(_package(child, scope))
    return extensions


def _is_candidate(path: Path) -> bool:
    return path.suffix == ".py" and not path.name.startswith(("_", "."))


def _module(path: Path, scope: ExtensionScope) -> ExtensionFile:
    absolute = Path(os.path.abspath(path))
    return ExtensionFile(absolute.stem, str(absolute), scope, _version([absolute]))


def _package(folder: Path, scope: ExtensionScope) -> ExtensionFile:
    absolute = Path(os.path.abspath(folder))
    sources = sorted(path for path in absolute.rglob("*.py") if "__pycache__" not in path.parts)
    return ExtensionFile(absolute.name, str(absolute / PACKAGE_FILE), scope, _version(sources))


def _version(paths: list[Path]) -> tuple[tuple[int, int], ...]:
    stamps = []
    for path in paths:
        try:
            status = path.stat()
        except OSError:
            continue
        stamps.append((status.st_mtime_ns, status.st_size))
    return tuple(stamps)
