"""Importing extensions: files found by ``resources/extension_files.py`` and installed packages'
``pi_lsp.extensions`` entry points.

A file extension is imported as a fresh module of its own (never cached in ``__pycache__`` next
to the user's file); its module-level functions are its hooks. An entry point may name an object
with hook methods, a class to instantiate, or a module. Whatever fails to import becomes a
diagnostic on the file, at the line that failed, and the other extensions load as usual.

``ExtensionHost`` holds the extensions in force. Each resource reload hands it the files found
now: a file whose version (modification times and sizes) is unchanged keeps its module, a changed
one is imported again, a removed one is dropped. Entry points load once, after the files.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import re
import sys
import traceback
import types
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import attrs

from pi_lsp.extensions.timings import HookTimings
from pi_lsp.resources.diagnostics import ResourceDiagnostic, error
from pi_lsp.resources.extension_files import PACKAGE_FILE, ExtensionFile

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "pi_lsp.extensions"
HOOK_NAMES = (
    "session_start",
    "before_agent_start",
    "context",
    "tool_result",
    "before_compact",
    "before_tree",
)

_module_numbers = itertools.count(1)


@attrs.frozen(eq=False)
class Extension:
    """One loaded extension: its name (file stem or entry point) and the object its hooks are on."""

    name: str
    handler: Any
    path: str | None = None
    """The file it was imported from; None for an entry point."""

    def hook(self, hook_name: str) -> Any:
        hook = getattr(self.handler, hook_name, None)
        return hook if callable(hook) else None


@attrs.frozen
class _Loaded:
    version: tuple[tuple[int, int], ...]
    extension: Extension | None
    problem: ResourceDiagnostic | None


class ExtensionHost:
    """The extensions in force, kept in step with the extension files as resources reload."""

    def __init__(self, *, load_entry_points: bool = True) -> None:
        self._files: dict[str, _Loaded] = {}
        self._entry_points: list[Extension] | None = None if load_entry_points else []
        self.extensions: list[Extension] = []
        self.timings = HookTimings()

    def sync(self, files: Sequence[ExtensionFile]) -> tuple[ResourceDiagnostic, ...]:
        """Import what is new or changed, drop what is gone; the load problems of ``files``."""
        if self._entry_points is None:
            self._entry_points = load_entry_points()
        loaded: dict[str, _Loaded] = {}
        for file in files:
            previous = self._files.get(file.path)
            if previous is not None and previous.version == file.version:
                loaded[file.path] = previous
                continue
            extension, problem = load_file(file)
            if previous is not None:
                logger.info("extension %s changed: reloaded %s", file.name, file.path)
            loaded[file.path] = _Loaded(file.version, extension, problem)
        for path, previous in self._files.items():
            if loaded.get(path) is not previous and previous.extension is not None:
                sys.modules.pop(previous.extension.handler.__name__, None)  # the replaced module
        self._files = loaded
        self.extensions = [
            item.extension for item in loaded.values() if item.extension is not None
        ] + list(self._entry_points)
        return tuple(item.problem for item in loaded.values() if item.problem is not None)

    def with_hook(self, hook_name: str) -> list[Extension]:
        """The extensions defining ``hook_name``, in load order."""
        return [extension for extension in self.extensions if extension.hook(hook_name)]


def load_file(file: ExtensionFile) -> tuple[Extension | None, ResourceDiagnostic | None]:
    """Import one extension file as a new module; a diagnostic instead when that fails."""
    path = Path(file.path)
    safe_name = re.sub(r"\W", "_", file.name)
    module_name = f"pi_lsp_extension_{next(_module_numbers)}_{safe_name}"
    module = types.ModuleType(module_name)
    module.__file__ = str(path)
    if path.name == PACKAGE_FILE:
        module.__path__ = [str(path.parent)]  # relative imports inside the package work
        module.__package__ = module_name
    sys.modules[module_name] = module  # dataclasses and pickling look modules up here
    writes_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # a package's submodules: no __pycache__ in the user's folder
    try:
        code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        exec(code, module.__dict__)  # noqa: S102 - running the user's extension is the point
    except BaseException as failure:  # SystemExit in a user's file must not stop the server
        sys.modules.pop(module_name, None)
        if isinstance(failure, KeyboardInterrupt):
            raise
        logger.warning("extension %s failed to load: %s", file.name, failure)
        return None, error(file.path, _failing_line(failure, file.path), _describe(failure))
    finally:
        sys.dont_write_bytecode = writes_bytecode
    logger.info("loaded extension %s from %s", file.name, file.path)
    return Extension(file.name, module, file.path), None


def load_entry_points() -> list[Extension]:
    """Every installed extension that loads; failures are logged and skipped."""
    loaded = []
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            target = entry_point.load()
            handler = target() if inspect.isclass(target) else target
        except Exception:
            logger.exception("extension %s failed to load; skipping it", entry_point.name)
            continue
        loaded.append(Extension(entry_point.name, handler))
        logger.info("loaded extension %s", entry_point.name)
    return loaded


def _failing_line(failure: BaseException, path: str) -> int:
    if isinstance(failure, SyntaxError) and failure.filename == path and failure.lineno:
        return failure.lineno
    lines = [
        frame.lineno
        for frame in traceback.extract_tb(failure.__traceback__)
        if frame.filename == path and frame.lineno
    ]
    return lines[-1] if lines else 1


def _describe(failure: BaseException) -> str:
    if isinstance(failure, SyntaxError):
        return f"The extension does not compile: {failure.msg}"
    return f"The extension failed to load: {type(failure).__name__}: {failure}"
