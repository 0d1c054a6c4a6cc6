"""``bash`` in the ACP client's terminal (``terminal/*``), when the client offers terminals.

The user watches the command in the client's terminal view (the tool call embeds it as
``terminal`` content) and the client runs it; pi-lsp waits for it to exit, reads what it printed
and makes that the tool's result, cut as any command's output is (``tools/bash.py``). The client
keeps at most ``OUTPUT_BYTE_LIMIT`` of output, the end of it. Every ``terminal/*`` request goes
after the updates queued before it (``flush``), as ``fs/*`` requests do.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pi_lsp.tools.base import TerminalExit
from pi_lsp.tools.bash import find_shell

OUTPUT_BYTE_LIMIT = 10 * 1024 * 1024


class AcpTerminal:
    """One command in one of the client's terminals (a ``ClientTerminal``)."""

    def __init__(
        self,
        connection: Any,
        session_id: str,
        terminal_id: str,
        flush: Callable[[], Awaitable[None]],
    ) -> None:
        self._connection = connection
        self._session_id = session_id
        self.id = terminal_id
        self._flush = flush

    async def wait_for_exit(self) -> TerminalExit:
        await self._flush()
        ended = await self._connection.wait_for_terminal_exit(
            session_id=self._session_id, terminal_id=self.id
        )
        return TerminalExit(exit_code=ended.exit_code, signal=ended.signal)

    async def output(self) -> str:
        await self._flush()
        answer = await self._connection.terminal_output(
            session_id=self._session_id, terminal_id=self.id
        )
        return answer.output

    async def kill(self) -> None:
        await self._flush()
        await self._connection.kill_terminal(session_id=self._session_id, terminal_id=self.id)

    async def release(self) -> None:
        await self._flush()
        await self._connection.release_terminal(session_id=self._session_id, terminal_id=self.id)


async def start_command(
    connection: Any,
    session_id: str,
    command: str,
    cwd: Path,
    flush: Callable[[], Awaitable[None]],
) -> AcpTerminal:
    """``terminal/create`` running ``command`` with the shell ``bash`` uses, in ``cwd``."""
    await flush()
    created = await connection.create_terminal(
        session_id=session_id,
        command=find_shell(),
        args=["-c", command],
        cwd=str(cwd),
        output_byte_limit=OUTPUT_BYTE_LIMIT,
    )
    return AcpTerminal(connection, session_id, created.terminal_id, flush)
