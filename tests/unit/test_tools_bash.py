"""bash: output, exit codes, truncation with a full-output file, streaming, timeouts, and — above
all — cancellation that leaves no process of the command behind."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import time
from pathlib import Path

import pytest

from pi_lsp.tools import ToolContext, ToolResult
from pi_lsp.tools import bash as bash_module
from pi_lsp.tools.bash import BashTool, group_members, kill_running_commands


@pytest.fixture
def bash() -> BashTool:
    tool = BashTool()
    tool.kill_grace = 0.3
    return tool


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, temp_dir=tmp_path / "tmp")


def alive(pid: int) -> bool:
    """True if ``pid`` is a live (non-zombie) process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2] not in "ZX"


async def wait_for_lines(path: Path, count: int, timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            lines = path.read_text().split()
            if len(lines) >= count:
                return [int(x) for x in lines[:count]]
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never got {count} lines")


async def wait_until_dead(pids: list[int], timeout: float = 5.0) -> None:
    """Wait for SIGKILLed processes to go: the kernel tears them down after the signal returns,
    later still on a loaded machine."""
    deadline = time.monotonic() + timeout
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


def kill_quietly(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


async def test_output_and_exit_status(bash, ctx, tmp_path: Path):
    result = await bash.execute({"command": "echo out; echo err >&2; pwd"}, ctx)
    assert not result.is_error
    assert result.text == f"out\nerr\n{tmp_path}\n"
    duration = result.details.pop("durationMs")
    assert isinstance(duration, int) and duration >= 0
    assert result.details == {
        "exitCode": 0,
        "cancelled": False,
        "timedOut": False,
        "truncated": False,
    }
    result = await bash.execute({"command": "true"}, ctx)
    assert result.text == "(no output)"
    result = await bash.execute({"command": "echo partial; exit 3"}, ctx)
    assert result.is_error
    assert result.text == "partial\n\n\nCommand exited with code 3"
    assert result.details["exitCode"] == 3
    result = await bash.execute({"command": "exit 4"}, ctx)
    assert result.text == "Command exited with code 4"
    result = await bash.execute({"command": "kill -9 $$"}, ctx)
    assert result.is_error and "killed by SIGKILL" in result.text


async def test_environment_and_stdin(bash, tmp_path: Path):
    context = ToolContext(cwd=tmp_path, env={"PATH": os.environ["PATH"], "PI_TEST_VALUE": "42"})
    result = await bash.execute({"command": "echo $PI_TEST_VALUE; cat; echo after-cat"}, context)
    assert result.text == "42\nafter-cat\n"  # stdin is closed, cat does not hang


async def test_long_output_keeps_the_tail_and_saves_everything(bash, ctx, tmp_path: Path):
    result = await bash.execute({"command": "seq 1 3000"}, ctx)
    assert not result.is_error
    body, note = result.text.rsplit("\n\n", 1)
    assert body.split("\n")[0] == "1001" and body.split("\n")[-1] == "3000"
    full = result.details["fullOutputPath"]
    assert note == f"[Showing lines 1001-3000 of 3000. Full output: {full}]"
    assert Path(full).parent == tmp_path / "tmp"
    assert Path(full).read_text() == "".join(f"{i}\n" for i in range(1, 3001))
    assert result.details["truncated"] is True
    assert result.details["truncation"]["truncatedBy"] == "lines"


async def test_byte_limit_and_a_single_huge_line(bash, ctx):
    result = await bash.execute(
        {"command": "for i in $(seq 1 200); do printf '%0500d\\n' $i; done"}, ctx
    )
    assert "(50.0KB limit). Full output:" in result.text
    result = await bash.execute({"command": "head -c 70000 /dev/zero | tr '\\0' 'z'"}, ctx)
    assert result.details["truncation"]["lastLinePartial"] is True
    assert "[Showing the last 50.0KB of line 1 (the line is 68.4KB). Full output:" in result.text


async def test_streams_partial_output(bash, tmp_path: Path):
    updates: list[ToolResult] = []
    context = ToolContext(cwd=tmp_path, on_update=updates.append)
    result = await bash.execute({"command": "echo first; sleep 0.4; echo second"}, context)
    assert result.text == "first\nsecond\n"
    assert any(u.text == "first\n" for u in updates)


async def test_timeout_kills_the_whole_group(bash, ctx, tmp_path: Path):
    pids = tmp_path / "pids"
    started = time.monotonic()
    result = await bash.execute(
        {
            "command": f"echo $$ > {pids}; sleep 100 & echo $! >> {pids}; echo waiting; wait",
            "timeout": 0.8,
        },
        ctx,
    )
    assert time.monotonic() - started < 3
    shell, child = [int(x) for x in pids.read_text().split()]
    try:
        assert result.is_error
        assert result.text == "waiting\n\n\nCommand timed out after 0.8 seconds"
        assert result.details["timedOut"] is True and result.details["exitCode"] is None
        assert not alive(child) and not alive(shell)
        assert group_members(shell) == []
    finally:
        kill_quietly([child])


@pytest.mark.parametrize("trap_term", [False, True], ids=["plain", "ignores-sigterm"])
async def test_cancellation_leaves_no_orphans(bash, tmp_path: Path, trap_term: bool):
    updates: list[ToolResult] = []
    context = ToolContext(cwd=tmp_path, on_update=updates.append)
    pids = tmp_path / "pids"
    prefix = "trap '' TERM; " if trap_term else ""
    command = (
        f"{prefix}echo $$ > {pids}; "
        f"sleep 100 & echo $! >> {pids}; "
        f"(sleep 100; echo never) & echo $! >> {pids}; "
        "echo started; wait"
    )
    task = asyncio.create_task(bash.execute({"command": command}, context))
    recorded = await wait_for_lines(pids, 3)
    await asyncio.sleep(0.1)
    try:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled()
        shell = recorded[0]
        for pid in recorded:
            assert not alive(pid), f"process {pid} survived the cancellation"
        assert group_members(shell) == []
        final = updates[-1]
        assert final.is_error and final.details["cancelled"] is True
        assert final.text == "started\n\n\nCommand aborted"
    finally:
        kill_quietly(recorded)


async def test_a_second_cancel_during_the_grace_period_still_kills(bash, ctx, tmp_path: Path):
    bash.kill_grace = 5.0
    pids = tmp_path / "pids"
    task = asyncio.create_task(
        bash.execute(
            {"command": f"trap '' TERM; echo $$ > {pids}; sleep 100 & echo $! >> {pids}; wait"}, ctx
        )
    )
    recorded = await wait_for_lines(pids, 2)
    try:
        task.cancel()
        await asyncio.sleep(0.1)  # now inside the SIGTERM grace period
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await wait_until_dead(recorded, timeout=2)
        assert not any(alive(pid) for pid in recorded)
    finally:
        kill_quietly(recorded)


async def test_cancelling_at_any_moment_of_the_start_leaves_nothing(bash, ctx):
    marker = f"77.{secrets.randbelow(10**9):09d}"  # unique even when test runs overlap
    for ticks in range(10):
        task = asyncio.create_task(bash.execute({"command": f"sleep {marker}; true"}, ctx))
        for _ in range(ticks):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    def survivors() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    cmdline = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
                if marker.encode() in cmdline and alive(int(entry.name)):
                    found.append(int(entry.name))
        return found

    deadline = time.monotonic() + 2
    while survivors() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    left = survivors()
    kill_quietly(left)
    assert left == []


async def test_wait_for_timeout_around_execute_also_cleans_up(bash, ctx, tmp_path: Path):
    pids = tmp_path / "pids"
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(
            bash.execute({"command": f"sleep 100 & echo $! > {pids}; sleep 100"}, ctx), timeout=0.5
        )
    child = int(pids.read_text())
    try:
        assert not alive(child)
    finally:
        kill_quietly([child])


async def test_background_job_does_not_block_a_finished_command(bash, ctx, tmp_path: Path):
    pids = tmp_path / "pids"
    started = time.monotonic()
    result = await bash.execute({"command": f"sleep 30 & echo $! > {pids}; echo done"}, ctx)
    child = int(pids.read_text())
    try:
        assert time.monotonic() - started < 2
        assert result.text == "done\n" and not result.is_error
    finally:
        kill_quietly([child])


async def test_kill_running_commands(bash, ctx, tmp_path: Path):
    pids = tmp_path / "pids"
    task = asyncio.create_task(
        bash.execute({"command": f"sleep 100 & echo $! > {pids}; wait"}, ctx)
    )
    (child,) = await wait_for_lines(pids, 1)
    while not bash_module._running_groups:  # the shell may write before the tool has its pid
        await asyncio.sleep(0.01)
    kill_running_commands()
    result = await asyncio.wait_for(task, 5)
    assert result.is_error and "killed by SIGKILL" in result.text
    await wait_until_dead([child])
    assert not alive(child)


async def test_bad_arguments_and_missing_cwd(bash, ctx, tmp_path: Path):
    for timeout in (0, -1, "soon"):
        result = await bash.execute({"command": "true", "timeout": timeout}, ctx)
        assert result.is_error and "timeout" in result.text.lower()
    result = await bash.execute({"command": 7}, ctx)  # coerced to the string "7", as pi does
    assert result.is_error and result.text.endswith("Command exited with code 127")
    result = await bash.execute({}, ctx)
    assert result.is_error and "command: required but missing" in result.text
    result = await bash.execute({"command": "true"}, ToolContext(cwd=tmp_path / "gone"))
    assert result.is_error and result.text.startswith("Working directory does not exist")
