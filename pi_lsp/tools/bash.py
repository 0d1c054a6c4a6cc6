"""``bash``: run a shell command in the workspace, in a process group of its own.

The command runs as ``bash -c`` (``sh -c`` where bash is missing) with stdout and stderr merged
into one pipe, stdin closed, and ``start_new_session=True`` so the shell and everything it starts
share a process group that can be ended as a whole. Output streams into a bounded accumulator;
the result keeps its last 2000 lines / 50 KB and saves the full output to a temp file when longer.
A finished command's ``details`` carry ``durationMs``, how long it ran.

On timeout, and when the awaiting task is cancelled, the whole group gets SIGTERM, then SIGKILL
after a short grace, and the shell is reaped, so no process of the command outlives the call
(a descendant that moved itself to another session with ``setsid`` is beyond reach, as in pi).
Cancellation is re-raised after a last ``on_update`` carrying the output so far and
"Command aborted". While the command runs, ``on_update`` receives the output tail at most every
100 ms (the agent streams it to the editors). A command that exits normally may leave background
jobs running (``server &``), as in pi; :func:`kill_running_commands` ends every command still
running, at server shutdown.

When the editor runs commands in terminals of its own (``ClientTerminals``: an ACP client with
``terminal/*``), the command runs there instead, where the user watches it; the result is what the
terminal printed, cut and worded the same way, and the terminal is killed on timeout and
cancellation.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import attrs

from pi_lsp.tools.accumulator import OutputAccumulator
from pi_lsp.tools.base import (
    ClientTerminal,
    ClientTerminals,
    TerminalExit,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    env_or_default,
)
from pi_lsp.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    format_size,
    truncation_details,
)

MAX_TIMEOUT_SECONDS = 2_147_483.647
UPDATE_INTERVAL = 0.1  # seconds between streamed updates
EXIT_IDLE_GRACE = 0.1  # after the shell exits, stop reading once the pipe is quiet this long
EXIT_DRAIN_LIMIT = 2.0  # ... or after this long in any case

_running_groups: set[int] = set()


def _checked_timeout(timeout: Any) -> float | None:
    if timeout is not None:
        if not math.isfinite(timeout) or timeout <= 0:
            raise ToolError("Invalid timeout: give a positive number of seconds.")
        if timeout > MAX_TIMEOUT_SECONDS:
            raise ToolError(f"Invalid timeout: at most {MAX_TIMEOUT_SECONDS:g} seconds.")
    return timeout


class _ThrottledUpdates:
    """The command's output as it grows, sent to the client at most every ``UPDATE_INTERVAL``."""

    def __init__(
        self, output: OutputAccumulator, context: ToolContext, partial: Callable[[], ToolResult]
    ) -> None:
        self.output = output
        self._context = context
        self._partial = partial
        self._loop = asyncio.get_running_loop()
        self._pending: asyncio.TimerHandle | None = None
        self._last_sent = 0.0

    def on_data(self, data: bytes) -> None:
        self.output.append(data)
        if self._context.on_update is None or self._pending is not None:
            return
        delay = UPDATE_INTERVAL - (self._loop.time() - self._last_sent)
        self._pending = self._loop.call_later(max(0.0, delay), self._send)

    def _send(self) -> None:
        self._pending = None
        self._last_sent = self._loop.time()
        self._context.emit_update(self._partial())

    def cancel(self) -> None:
        if self._pending is not None:
            self._pending.cancel()


def _stop_reading(
    process: asyncio.subprocess.Process,
    updates: _ThrottledUpdates,
    transport: asyncio.ReadTransport | None,
) -> None:
    """After the command ended, however it ended: no more updates, and the output complete."""
    _running_groups.discard(process.pid)
    updates.cancel()
    if transport is not None:
        transport.close()
    updates.output.finish()
    updates.output.close()


def find_shell() -> str:
    """``/bin/bash``, else ``bash`` on PATH, else ``sh``."""
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    return shutil.which("bash") or "sh"


def kill_running_commands() -> None:
    """SIGKILL the process group of every command still running (for server shutdown)."""
    for pgid in list(_running_groups):
        _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid``; uses /proc where there is one."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ..."; comm may contain spaces and parentheses
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


async def terminate_process_group(process: asyncio.subprocess.Process, grace: float) -> None:
    """End the process group led by ``process``: SIGTERM, SIGKILL after ``grace`` seconds for
    whatever is left, and reap the leader. Even when cancelled midway, SIGKILL is sent."""
    pgid = process.pid
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    finished = False
    try:
        _signal_group(pgid, signal.SIGTERM)
        if process.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), timeout=grace)
        while group_members(pgid) and loop.time() < deadline:
            await asyncio.sleep(0.02)
        finished = not group_members(pgid)
    finally:
        if not finished:
            _signal_group(pgid, signal.SIGKILL)
    if process.returncode is None:
        await process.wait()
    # SIGKILL cannot be refused; give the kernel a moment to tear the group down
    for _ in range(50):
        if not group_members(pgid):
            break
        await asyncio.sleep(0.01)


def _kill_if_spawned(read_fd: int) -> Any:
    def kill(future: asyncio.Future[asyncio.subprocess.Process]) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        pid = future.result().pid
        _signal_group(pid, signal.SIGKILL)
        _running_groups.discard(pid)
        os.close(read_fd)

    return kill


class _Output(asyncio.Protocol):
    """Feeds pipe data to the accumulator; notes when the pipe closes."""

    def __init__(self, on_data: Any) -> None:
        self._on_data = on_data
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.chunks = 0

    def data_received(self, data: bytes) -> None:
        self.chunks += 1
        self._on_data(data)

    def eof_received(self) -> bool | None:
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def _format_seconds(value: float) -> str:
    return f"{value:g}"


class BashTool(Tool):
    name = "bash"
    description = (
        "Run a bash command in the workspace folder and return what it printed (stdout and "
        f"stderr together). Only the last {DEFAULT_MAX_LINES} lines or "
        f"{DEFAULT_MAX_BYTES // 1024}KB of output are returned, whichever limit comes first; "
        "when output is cut, the full output is saved to a temp file whose path is given. "
        "Optionally give a timeout in seconds."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The bash command to run"},
            "timeout": {
                "type": "number",
                "description": "Timeout in seconds (optional; no timeout by default)",
            },
        },
        "required": ["command"],
    }

    kill_grace: float = 1.0  # seconds between SIGTERM and SIGKILL

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        started = time.monotonic()
        result = await self._run_command(arguments, context)
        # Kept in the session so a replayed card tells how long the command ran, as a live one
        # does; pi reads only the details it knows (truncation, fullOutputPath).
        elapsed = round((time.monotonic() - started) * 1000)
        return attrs.evolve(result, details={**(result.details or {}), "durationMs": elapsed})

    async def _run_command(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        command: str = arguments["command"]
        timeout = _checked_timeout(arguments.get("timeout"))
        if not context.cwd.is_dir():
            raise ToolError(
                f"Working directory does not exist: {context.cwd}\nCannot run bash commands."
            )

        if isinstance(context.editor, ClientTerminals):
            terminal = await context.editor.start_command(command, context.cwd)
            if terminal is not None:
                return await self._run_in_terminal(terminal, timeout, context)

        output = OutputAccumulator(temp_dir=context.temp_dir)
        updates = _ThrottledUpdates(output, context, lambda: self._partial(output))
        process, read_fd = await self._start(command, context, output)
        timed_out = await self._wait(process, read_fd, timeout, updates, context)
        if timed_out and timeout is not None:
            return self._finished(
                output,
                None,
                status=f"Command timed out after {_format_seconds(timeout)} seconds",
                timed_out=True,
            )
        return self._exited(output, process.returncode)

    async def _start(
        self, command: str, context: ToolContext, output: OutputAccumulator
    ) -> tuple[asyncio.subprocess.Process, int]:
        """The shell running ``command`` in a process group of its own, and the pipe's read end
        that carries its stdout and stderr."""
        read_fd, write_fd = os.pipe()
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                find_shell(),
                "-c",
                command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                cwd=str(context.cwd),
                env=env_or_default(context.env),
                start_new_session=True,
            )
        )

        def spawned(future: asyncio.Future[asyncio.subprocess.Process]) -> None:
            os.close(write_fd)  # the child has its copy now
            if future.cancelled() or future.exception() is not None:
                os.close(read_fd)
            else:
                _running_groups.add(future.result().pid)

        spawn.add_done_callback(spawned)
        try:
            # shielded: cancelled while starting, the shell may already run and must be ended
            return await asyncio.shield(spawn), read_fd
        except asyncio.CancelledError:
            spawn.add_done_callback(_kill_if_spawned(read_fd))
            context.emit_update(self._aborted(output))
            raise

    async def _wait(
        self,
        process: asyncio.subprocess.Process,
        read_fd: int,
        timeout: float | None,
        updates: _ThrottledUpdates,
        context: ToolContext,
    ) -> bool:
        """Read the command's output until it exits (``True``: it timed out and was ended);
        ended as well when anything fails or the call is cancelled, which is re-raised."""
        loop = asyncio.get_running_loop()
        transport: asyncio.ReadTransport | None = None
        timed_out = False
        try:
            transport, protocol = await loop.connect_read_pipe(
                lambda: _Output(updates.on_data), os.fdopen(read_fd, "rb", buffering=0)
            )
            try:
                async with asyncio.timeout(timeout):
                    await process.wait()
            except TimeoutError:
                timed_out = True
                await terminate_process_group(process, self.kill_grace)
            await self._drain(protocol)
        except BaseException as error:  # cancellation above all: end the command, then re-raise
            try:
                await terminate_process_group(process, self.kill_grace)
            finally:
                _stop_reading(process, updates, transport)
                if isinstance(error, asyncio.CancelledError):
                    context.emit_update(self._aborted(updates.output))
            raise
        _stop_reading(process, updates, transport)
        return timed_out

    def _exited(self, output: OutputAccumulator, code: int | None) -> ToolResult:
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return self._finished(output, code, status=f"Command was killed by {name}")
        if code != 0:
            return self._finished(output, code, status=f"Command exited with code {code}")
        return self._finished(output, code)

    async def _run_in_terminal(
        self, terminal: ClientTerminal, timeout: float | None, context: ToolContext
    ) -> ToolResult:
        """The command in the client's terminal, where the user watches it run; the result is
        what the terminal printed, cut as any command's output is. The terminal is killed on
        timeout and on cancellation, and released in any case."""
        shown = {"terminalId": terminal.id}
        context.emit_update(ToolResult(content=[], details=shown))

        async def collected() -> OutputAccumulator:
            output = OutputAccumulator(temp_dir=context.temp_dir)
            output.append((await terminal.output()).encode())
            output.finish()
            output.close()
            return output

        try:
            try:
                async with asyncio.timeout(timeout):
                    ended: TerminalExit | None = await terminal.wait_for_exit()
            except TimeoutError:
                await terminal.kill()
                ended = None
            output = await collected()
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await terminal.kill()
                aborted = self._finished(
                    await collected(), None, status="Command aborted", cancelled=True, extra=shown
                )
                context.emit_update(aborted)
            raise
        finally:
            with contextlib.suppress(Exception):
                await terminal.release()
        if ended is None:
            timed_out = f"Command timed out after {_format_seconds(timeout or 0)} seconds"
            return self._finished(output, None, status=timed_out, timed_out=True, extra=shown)
        if ended.signal:
            return self._finished(
                output, None, status=f"Command was killed by {ended.signal}", extra=shown
            )
        code = ended.exit_code
        exited = f"Command exited with code {code}" if code else None
        return self._finished(output, code, status=exited, extra=shown)

    @staticmethod
    async def _drain(protocol: _Output) -> None:
        """Read what is left in the pipe after the shell exited. Stops at end of file, once the
        pipe stays quiet for a moment, or after a few seconds at most (a background job may hold
        the pipe open, or keep writing to it, indefinitely)."""
        deadline = asyncio.get_running_loop().time() + EXIT_DRAIN_LIMIT
        while not protocol.closed.done() and asyncio.get_running_loop().time() < deadline:
            seen = protocol.chunks
            await asyncio.wait([protocol.closed], timeout=EXIT_IDLE_GRACE)
            if protocol.chunks == seen:
                break

    @staticmethod
    def _text_and_details(output: OutputAccumulator, empty: str) -> tuple[str, dict[str, Any]]:
        snap = output.snapshot(persist_if_truncated=True)
        truncation = snap["truncation"]
        text = snap["content"] or empty
        details: dict[str, Any] = {"truncated": truncation["truncated"]}
        if truncation["truncated"]:
            path = snap["fullOutputPath"]
            details["truncation"] = truncation_details(truncation)
            details["fullOutputPath"] = path
            total = truncation["totalLines"]
            start = total - truncation["outputLines"] + 1
            if truncation["lastLinePartial"]:
                text += (
                    f"\n\n[Showing the last {format_size(truncation['outputBytes'])} of line "
                    f"{total} (the line is "
                    f"{format_size(output.last_line_bytes)}). Full output: {path}]"
                )
            elif truncation["truncatedBy"] == "lines":
                text += f"\n\n[Showing lines {start}-{total} of {total}. Full output: {path}]"
            else:
                text += (
                    f"\n\n[Showing lines {start}-{total} of {total} "
                    f"({format_size(DEFAULT_MAX_BYTES)} limit). Full output: {path}]"
                )
        return text, details

    def _aborted(self, output: OutputAccumulator) -> ToolResult:
        return self._finished(output, None, status="Command aborted", cancelled=True)

    def _partial(self, output: OutputAccumulator) -> ToolResult:
        text, details = self._text_and_details(output, "")
        return ToolResult(content=[{"type": "text", "text": text}], details=details)

    def _finished(
        self,
        output: OutputAccumulator,
        exit_code: int | None,
        *,
        status: str | None = None,
        cancelled: bool = False,
        timed_out: bool = False,
        extra: dict[str, Any] | None = None,
    ) -> ToolResult:
        text, details = self._text_and_details(output, "" if status else "(no output)")
        if status:
            text = f"{text}\n\n{status}" if text else status
        details = {
            "exitCode": exit_code,
            "cancelled": cancelled,
            "timedOut": timed_out,
            **details,
            **(extra or {}),
        }
        return ToolResult(
            content=[{"type": "text", "text": text}], details=details, is_error=status is not None
        )
