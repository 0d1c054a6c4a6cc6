"""Which pi session an ACP session id leads to, after ``/new`` or ``/fork`` moved it on.

An ACP client keeps a conversation by the id ``session/new`` gave it (Zed's history,
CodeCompanion's ``/resume``, agent-shell). After ``/new`` or ``/fork`` the conversation goes on in
another pi session, so the id the client holds must lead there: ``session/load`` and
``session/resume`` of it open the pi session it moved to, and ``session/list`` shows that pi
session under the client's id (the pi session it left is not listed: the id now means the
conversation that went on). The moves are kept in ``acp-threads.json`` in the session directory
(pi and pi-lsp read only ``*.jsonl`` files there), written whole by renaming a temporary file
over it, so a later ``pi-lsp acp`` follows them too; a missing or unreadable file means no moves.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

FILE_NAME = "acp-threads.json"


class Threads:
    """The moves of one session directory: ACP session id → the pi session it continues in."""

    def __init__(self, session_dir: Path) -> None:
        self._file = session_dir / FILE_NAME

    def moves(self) -> dict[str, str]:
        try:
            moves = json.loads(self._file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            logger.warning("%s cannot be read, so no ACP session moves: %s", self._file, error)
            return {}
        if not isinstance(moves, dict):
            return {}
        return {key: value for key, value in moves.items() if isinstance(value, str)}

    def current(self, acp_id: str) -> str:
        """The pi session ``acp_id`` leads to now (itself unless it moved)."""
        return self.moves().get(acp_id, acp_id)

    def move(self, acp_id: str, pi_session_id: str) -> None:
        """``acp_id`` goes on in ``pi_session_id`` from now on."""
        moves = self.moves()
        if pi_session_id == acp_id:
            moves.pop(acp_id, None)
        else:
            moves[acp_id] = pi_session_id
        try:
            self._write(moves)
        except OSError as error:  # the command that moved it still succeeds; only this is lost
            logger.warning(
                "%s could not be written; %s stays where it was: %s", self._file, acp_id, error
            )

    def _write(self, moves: dict[str, str]) -> None:
        self._file.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=self._file.parent, prefix=".acp-threads-")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                json.dump(moves, file, indent=1, sort_keys=True)
            os.replace(temporary, self._file)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
