"""The log messages MCP servers send (``notifications/message``), appended to ``mcp.log`` in the
agent directory as pi 1.6 appends them (its ``extensions/mcp/log.js``): one line a message,
``<ISO time> [<server>] <level> <logger>: <message>``, continuation lines indented, the file moved
to ``mcp.log.1`` past 5 MB. Several processes (pi, pi-lsp) may write to it, so each message is
one append; a write that fails is dropped, since logging must never break a tool."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MCP_LOG = "mcp.log"
MAX_LOG_BYTES = 5 * 1024 * 1024


def format_log_message(server: str, params: Any, now: datetime | None = None) -> str:
    message = params if isinstance(params, dict) else {"data": params}
    level = message.get("level") if isinstance(message.get("level"), str) else "info"
    logger = message.get("logger")
    logger_text = f" {logger}:" if isinstance(logger, str) and logger else ""
    data = message.get("data")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    text = text.replace("\r\n", "\n").replace("\n", "\n    ")
    moment = (now or datetime.now(UTC)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return f"{moment} [{server}] {level}{logger_text} {text}\n"


class ServerLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, server: str, params: Any) -> None:
        line = format_log_message(server, params)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self._size() > MAX_LOG_BYTES:
                os.replace(self.path, f"{self.path}.1")
            with open(self.path, "a", encoding="utf-8") as log:
                log.write(line)
        except OSError:
            pass  # best effort: a server's log line is never worth a failed call

    def _size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0
