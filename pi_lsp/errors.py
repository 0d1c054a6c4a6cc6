"""Typed errors shared by every layer, each carrying the JSON-RPC error code a client receives.

The pure core raises these; the LSP adapters turn them into JSON-RPC error responses unchanged, and
the CLI prints their message on one line. Codes in the -32000..-32099 range are the server-defined
range JSON-RPC reserves for implementations.

A message that names what a client sent (an id, a path, a value) quotes it through ``echoed``, so
an error never sends back more than the start of a megabyte-long id.
"""

from __future__ import annotations

from typing import Any

ECHO_LIMIT = 80
"""Characters of client input an error message quotes before it shortens it."""


def echoed(value: Any, limit: int = ECHO_LIMIT) -> str:
    """Client input as an error message quotes it: whole when it is short, else its first
    ``limit`` characters, an ellipsis and its length."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


class PiError(Exception):
    """Base class: a failure a user or client can act on, with a stable JSON-RPC code."""

    code = -32603  # JSON-RPC "internal error"

    def __init__(self, message: str, data: dict | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        """Structured detail a client may act on (the JSON-RPC error's ``data``)."""


class InvalidParamsError(PiError):
    """A request or command argument is malformed; the message names the field."""

    code = -32602


class SessionNotFoundError(PiError):
    """No session with the given id or path exists."""

    code = -32001


class EntryNotFoundError(PiError):
    """An entry id does not exist in the session."""

    code = -32002


class NotASessionError(PiError):
    """A non-empty file is not a pi session; it is left untouched."""

    code = -32003


class SessionLockedError(PiError):
    """Another process is the writer of this session file; it may still be read."""

    code = -32004


class SessionReadOnlyError(PiError):
    """The session was opened for reading only and cannot be appended to."""

    code = -32005


class SessionWriteError(PiError):
    """Writing to the session file failed; the in-memory session was rolled back."""

    code = -32006


class NothingToCompactError(PiError):
    """The branch has nothing that compaction could summarize, or it was just compacted."""

    code = -32010


class TurnInProgressError(PiError):
    """The session is busy (a turn or a compaction runs);
    the request would act on a moving target."""

    code = -32011


class SummaryError(PiError):
    """The model could not produce a usable summary (error, cut off, tool call, no text); nothing
    was written to the session."""

    code = -32012


class CompactionCancelledError(PiError):
    """A compaction or branch summary was aborted before it finished; nothing was written."""

    code = -32013


class FilesNotRestoredError(PiError):
    """The editor refused the file changes of a restore; no file and no leaf was changed."""

    code = -32014


class CheckpointContentMissingError(PiError):
    """A file content a checkpoint refers to is missing from the store (or damaged)."""

    code = -32015


class PromptTakenBackError(PiError):
    """A queued prompt was taken out of the queue (``pi/clearQueue``, ``pi/removeQueued``) before
    the agent read it: its ``pi/prompt`` request ends with this error, and nothing was written."""

    code = -32016


class ModelNotConfiguredError(PiError):
    """No model is configured, so the agent cannot answer; the message says how to configure one."""

    code = -32020


class NoApiKeyError(PiError):
    """The model's provider has no usable API key; ``data`` is ``{"provider": …}`` so a client can
    offer its own way to store one."""

    code = -32022

    def __init__(self, message: str, provider: str) -> None:
        super().__init__(message, {"provider": provider})


class UnauthorizedConnectionError(PiError):
    """A TCP connection did not open with ``initialize`` carrying the token; it is closed."""

    code = -32030


class AlreadyServingError(PiError):
    """A TCP server already serves a client; another one must start its own server."""

    code = -32031


class McpSignInError(PiError):
    """A sign-in to an OAuth-protected MCP server did not end with tokens (the message says
    why: the page was not answered in time, the authorization server refused, …)."""

    code = -32040
