"""The shapes every agent tool shares: results, the execution context, the editor bridge, the base
class.

Tools are pure of pygls and litellm. What they know about the editor comes through an
:class:`EditorBridge`, which the server implements on top of LSP (``textDocument/didOpen`` /
``didChange`` for unsaved text, ``workspace/applyEdit`` for changes the user can undo); with no
editor attached, :class:`NoEditor` makes every tool work on the disk alone.

A tool never raises for something the model got wrong or for an ordinary failure (missing file,
edit text not found, command exiting non-zero): it returns a :class:`ToolResult` with
``is_error=True`` whose text tells the model what happened. Only cancellation
(:class:`asyncio.CancelledError`) propagates.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import attrs

log = logging.getLogger(__name__)

ContentBlock = dict[str, Any]


@attrs.define
class ToolResult:
    """What a tool returns: pi content blocks for the LLM, details for clients and the session file.

    ``content`` holds ``{"type": "text", "text": ...}`` and
    ``{"type": "image", "data": <base64>, "mimeType": ...}`` blocks, exactly as pi stores them in a
    ``toolResult`` message. ``details`` is never sent to the LLM; pi keeps it in the session
    (``null`` when a tool has nothing to add).
    """

    content: list[ContentBlock] = attrs.field(factory=list)
    details: dict[str, Any] | None = None
    is_error: bool = False

    @property
    def text(self) -> str:
        """The text blocks joined with newlines (convenience for logs and tests)."""
        return "\n".join(
            block.get("text", "") for block in self.content if block.get("type") == "text"
        )


def text_result(text: str, details: dict[str, Any] | None = None) -> ToolResult:
    return ToolResult(content=[{"type": "text", "text": text}], details=details)


def error_result(message: str, details: dict[str, Any] | None = None) -> ToolResult:
    return ToolResult(content=[{"type": "text", "text": message}], details=details, is_error=True)


class ToolError(Exception):
    """Raised inside a tool to end it with an error result carrying ``message``."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


@runtime_checkable
class EditorBridge(Protocol):
    """How tools see and change documents that are open in the editor.

    Paths are absolute and already resolved against the workspace; a bridge compares them with
    the paths of its open documents (after resolving symlinks if it wants to).
    """

    def open_document_text(self, path: Path) -> str | None:
        """The current (possibly unsaved) text of ``path``
        if it is open in the editor, else None."""
        ...

    async def apply_edit(self, path: Path, new_text: str) -> bool:
        """Replace the whole text of the open document ``path`` through the editor (undoable).

        Returns False when the document is not open or the editor refused the edit; the tool then
        writes the file on disk itself. A bridge may also save the document after applying the
        edit, so that shell commands see the change.
        """
        ...

    async def apply_file_edits(self, edits: Sequence[FileEdit], label: str) -> AppliedEdits | None:
        """Apply ``edits`` (several files: replaced, created, deleted) as one editor operation the
        user can undo at once, labelled ``label``.

        None when the editor cannot (no resource operations): the caller writes the disk itself.
        Otherwise whether the editor applied the edit; a refused edit changed nothing.
        """
        ...


@attrs.frozen
class FileEdit:
    """One file of a multi-file edit."""

    path: Path
    kind: Literal["replace", "create", "delete"]
    text: str | None = None
    """The new text (``replace``, ``create``)."""
    current_text: str | None = None
    """The text being replaced (``replace``), for the edit's range."""


@attrs.frozen
class AppliedEdits:
    applied: bool
    failure_reason: str | None = None


class NoEditor:
    """The bridge for when no editor is connected: nothing is open, every change goes to disk."""

    def open_document_text(self, path: Path) -> str | None:
        return None

    async def apply_edit(self, path: Path, new_text: str) -> bool:
        return False

    async def apply_file_edits(self, edits: Sequence[FileEdit], label: str) -> AppliedEdits | None:
        return None


@runtime_checkable
class ClientFileSystem(Protocol):
    """A client that reads and writes every file for the tools, unsaved buffers included (ACP's
    ``fs/read_text_file`` and ``fs/write_text_file``); an ``EditorBridge`` may also be one.

    ``read_text`` returns None when the client cannot give the text (the tool reads the disk);
    ``write_text`` returns False when the client refused or failed (the tool writes the disk).
    """

    async def read_text(self, path: Path) -> str | None: ...

    async def write_text(self, path: Path, text: str) -> bool: ...


@attrs.frozen
class TerminalExit:
    """How a command in a client's terminal ended: its exit code, or the signal that ended it."""

    exit_code: int | None = None
    signal: str | None = None


class ClientTerminal(Protocol):
    """A command running in one of the client's terminals (ACP's ``terminal/*``)."""

    id: str

    async def wait_for_exit(self) -> TerminalExit: ...

    async def output(self) -> str:
        """Everything the terminal printed so far (as much as the client keeps)."""
        ...

    async def kill(self) -> None: ...

    async def release(self) -> None: ...


@runtime_checkable
class ClientTerminals(Protocol):
    """A client that runs ``bash`` commands in its own terminals, where the user sees them.

    ``start_command`` returns None when the client has no terminals (``bash`` runs the command
    itself).
    """

    async def start_command(self, command: str, cwd: Path) -> ClientTerminal | None: ...


@runtime_checkable
class FileChangeRecorder(Protocol):
    """Told about every change a tool makes to a file (the checkpoints record them).

    ``before_change`` runs under the file's mutation lock right before the change,
    ``after_change`` right after it with the text the file now has.
    """

    async def before_change(self, path: Path) -> None: ...

    async def after_change(self, path: Path, text: str) -> None: ...


class NoRecorder:
    """Records nothing."""

    async def before_change(self, path: Path) -> None:
        return None

    async def after_change(self, path: Path, text: str) -> None:
        return None


UpdateCallback = Callable[["ToolResult"], None]


@attrs.define
class ToolContext:
    """Where and how a tool runs.

    - ``cwd``: the workspace folder; relative paths in arguments resolve against it.
    - ``editor``: the editor bridge (:class:`NoEditor` when none is connected).
    - ``temp_dir``: where ``bash`` saves the full output of a truncated command
      (the system temp folder when None).
    - ``on_update``: optional callback receiving partial results while a tool runs (``bash``
      streams its output tail through it, at most every 100 ms). When a tool is cancelled, its last
      update — if it sent one — is the result to record (``bash`` sends a final
      "Command aborted" update before re-raising the cancellation).
    - ``env``: environment for ``bash`` (the server's own environment when None).
    - ``changes``: told about every file a tool changes (``write`` and ``edit``), so the change can
      be undone by navigating the session tree with ``restoreFiles``.
    """

    cwd: Path = attrs.field(converter=Path)
    editor: EditorBridge = attrs.field(factory=NoEditor)
    temp_dir: Path | None = None
    on_update: UpdateCallback | None = None
    env: Mapping[str, str] | None = None
    changes: FileChangeRecorder = attrs.field(factory=NoRecorder)
    session_id: str | None = None
    """The session the tool runs in (the session search leaves it out of its results)."""

    def emit_update(self, result: ToolResult) -> None:
        if self.on_update is None:
            return
        try:
            self.on_update(result)
        except Exception:  # a broken listener must not break the tool
            log.exception("tool update callback failed")


# ---------------------------------------------------------------------------------------------
# Argument checking (lenient in the same places as pi: numeric strings become numbers, "true" /
# "false" become booleans, numbers become strings where a string is expected, and null for an
# optional parameter counts as absent).


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _coerce(value: Any, schema: Mapping[str, Any], where: str, problems: list[str]) -> Any:
    expected = schema.get("type")
    if expected == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        problems.append(f"{where}: expected a string, got {_type_name(value)}")
        return value
    if expected in ("number", "integer"):
        number: Any = value
        if isinstance(value, str) and value.strip():
            try:
                number = float(value)
            except ValueError:
                number = value
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            problems.append(f"{where}: expected a number, got {_type_name(value)}")
            return value
        if isinstance(number, float):
            if not math.isfinite(number):
                problems.append(f"{where}: expected a finite number")
                return value
            if number.is_integer():
                number = int(number)
        if expected == "integer" and not isinstance(number, int):
            problems.append(f"{where}: expected a whole number, got {value!r}")
        return number
    if expected == "boolean":
        if isinstance(value, bool):
            return value
        if value in ("true", "false"):
            return value == "true"
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        problems.append(f"{where}: expected a boolean, got {_type_name(value)}")
        return value
    if expected == "array":
        if not isinstance(value, list):
            problems.append(f"{where}: expected an array, got {_type_name(value)}")
            return value
        item_schema = schema.get("items")
        if isinstance(item_schema, Mapping):
            return [
                _coerce(item, item_schema, f"{where}[{index}]", problems)
                for index, item in enumerate(value)
            ]
        return list(value)
    if expected == "object":
        if not isinstance(value, dict):
            problems.append(f"{where}: expected an object, got {_type_name(value)}")
            return value
        return _coerce_object(value, schema, where, problems)
    return value


def _coerce_object(
    value: Mapping[str, Any], schema: Mapping[str, Any], where: str, problems: list[str]
) -> dict[str, Any]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    out: dict[str, Any] = {}
    prefix = f"{where}." if where else ""
    for key, item in value.items():
        sub = properties.get(key)
        if sub is None:
            out[key] = item  # unknown keys pass through, as in pi
            continue
        if item is None and key not in required:
            continue
        out[key] = _coerce(item, sub, f"{prefix}{key}", problems)
    for key in properties:
        if key in required and key not in out:
            problems.append(f"{prefix}{key}: required but missing")
    return out


def validate_arguments(
    tool_name: str, schema: Mapping[str, Any], arguments: Any
) -> tuple[dict[str, Any] | None, str | None]:
    """Check ``arguments`` against a tool's JSON schema; returns (coerced arguments, error text)."""
    problems: list[str] = []
    if not isinstance(arguments, dict):
        problems.append(f"arguments: expected an object, got {_type_name(arguments)}")
        coerced = None
    else:
        coerced = _coerce_object(arguments, schema, "", problems)
    if not problems:
        return coerced, None
    try:
        received = json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        received = repr(arguments)
    lines = "\n".join(f"  - {problem}" for problem in problems)
    return (
        None,
        f'Invalid arguments for tool "{tool_name}":\n{lines}\n\nArguments received:\n{received}',
    )


# ---------------------------------------------------------------------------------------------


class Tool:
    """Base class of the agent tools.

    Subclasses set ``name``, ``description`` and ``parameters`` (a JSON schema object) and
    implement :meth:`run`, which receives checked arguments and may raise :class:`ToolError`.
    :meth:`execute` is what the agent loop calls; it never raises except for cancellation.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]
    read_only_hint: ClassVar[bool] = False
    """The tool says it changes nothing (an MCP server's ``readOnlyHint``): an untrusted
    workspace runs it without asking."""

    def prepare_arguments(self, arguments: Any) -> Any:
        """Repair common model mistakes before checking (pi's ``prepareArguments``)."""
        return arguments

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        raise NotImplementedError

    def spec(self) -> dict[str, Any]:
        """``{name, description, parameters}`` for the LLM's tool list."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    async def execute(self, arguments: Any, context: ToolContext) -> ToolResult:
        checked, problem = validate_arguments(
            self.name, self.parameters, self.prepare_arguments(arguments)
        )
        if problem is not None or checked is None:
            return error_result(problem or "Invalid arguments")
        try:
            return await self.run(checked, context)
        except ToolError as error:
            return error_result(error.message, error.details)
        except asyncio.CancelledError:
            raise
        except OSError as error:
            return error_result(describe_os_error(error))
        except Exception as error:  # a bug in a tool still becomes a result the model can read
            log.exception("tool %s failed", self.name)
            return error_result(f"{self.name} failed: {type(error).__name__}: {error}")


def limit_argument(arguments: Mapping[str, Any], default: int) -> int:
    """The ``limit`` argument (``default`` when absent); below 1 is an error for the model."""
    limit = arguments.get("limit")
    limit = default if limit is None else int(limit)
    if limit < 1:
        raise ToolError(f"limit must be at least 1, got {limit}")
    return limit


def require_directory(path: Path) -> Path:
    """``path`` if it is an existing directory, else a ``ToolError`` saying what it is instead."""
    if not path.exists():
        raise ToolError(f"Path not found: {path}")
    if not path.is_dir():
        raise ToolError(f"Not a directory: {path}")
    return path


def describe_os_error(error: OSError) -> str:
    """A one-line description of a filesystem error, naming the path when known."""
    reason = error.strerror or str(error)
    code = errno.errorcode.get(error.errno, "") if error.errno is not None else ""
    target = f": {error.filename}" if error.filename else ""
    return f"{reason}{f' ({code})' if code else ''}{target}"


def env_or_default(env: Mapping[str, str] | None) -> dict[str, str]:
    return dict(os.environ if env is None else env)
