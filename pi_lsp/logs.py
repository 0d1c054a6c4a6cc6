"""Logging: a file under the user log directory, and ``window/logMessage`` once a client is
attached.

stdout belongs to the LSP stream, so nothing may log there; stderr is left for crashes. On SIGUSR1
the process writes the stack of every thread to the log file (for a server that seems stuck:
``kill -USR1 <pid>``).
Every record passes ``SecretFilter`` on its way out: an API key pi-lsp resolved never reaches a
log, whoever logged it (litellm included).
"""

from __future__ import annotations

import contextlib
import contextvars
import faulthandler
import logging
import signal
from pathlib import Path

import platformdirs

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

CONNECTION: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "pi_lsp_connection", default=None
)
"""Which client's work is running: set by the shared server for each connection (its tasks
inherit it), so a record goes to the client whose work logged it and to no other."""


def default_log_file() -> Path:
    return Path(platformdirs.user_log_dir("pi-lsp", appauthor=False)) / "pi-lsp.log"


def configure_logging(log_file: str | None, *, verbose: bool = False) -> Path:
    path = Path(log_file) if log_file else default_log_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(SecretFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    logging.getLogger("pygls").setLevel(logging.DEBUG if verbose else logging.WARNING)
    if hasattr(signal, "SIGUSR1") and handler.stream is not None:  # no SIGUSR1 on Windows
        faulthandler.register(signal.SIGUSR1, file=handler.stream, all_threads=True)
    return path


class SecretFilter(logging.Filter):
    """Replaces every secret pi-lsp resolved (``llm.credentials``) in a record by ``***``."""

    def filter(self, record: logging.LogRecord) -> bool:
        from pi_lsp.llm.secrets import redact_secrets

        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.msg, record.args = redact_secrets(message), None
        if record.exc_text:
            record.exc_text = redact_secrets(record.exc_text)
        return True


class ClientLogHandler(logging.Handler):
    """Forwards pi-lsp's own log records to the client as ``window/logMessage``."""

    def __init__(self, server) -> None:
        super().__init__(logging.INFO)
        self._server = server
        self._connection = CONNECTION.get()
        self.addFilter(self._from_this_connection)
        self.addFilter(SecretFilter())

    def _from_this_connection(self, record: logging.LogRecord) -> bool:
        return CONNECTION.get() is self._connection

    def emit(self, record: logging.LogRecord) -> None:
        from lsprotocol import types

        kind = {
            logging.ERROR: types.MessageType.Error,
            logging.WARNING: types.MessageType.Warning,
        }.get(record.levelno, types.MessageType.Log)
        # The connection may be gone; the file log still has the record.
        with contextlib.suppress(Exception):
            self._server.window_log_message(
                types.LogMessageParams(type=kind, message=self.format(record))
            )
