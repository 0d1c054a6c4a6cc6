"""What a stalled reliability test reports: the stack of every thread of the test process and of
every pi-lsp server it started.

A server writes its stacks to its log file on SIGUSR1 (``pi_lsp.logs``); the servers of a test
keep their logs under the test's ``tmp_path`` (``isolated_environment``). ``conftest.py`` calls
``stacks`` shortly before pytest-timeout fails a test; a test that finds a server stuck can call
it too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

LOG_NAME = "pi-lsp.log"
SERVER_ARGUMENTS = [b"-m", b"pi_lsp"]


def server_processes(parent: int) -> list[int]:
    """The ``python -m pi_lsp`` processes among the descendants of ``parent``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        parent_of_entry = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent_of_entry, []).append(int(entry.name))
    found, waiting = [], list(children.get(parent, []))
    while waiting:
        pid = waiting.pop()
        waiting.extend(children.get(pid, []))
        try:
            arguments = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if arguments[1:3] == SERVER_ARGUMENTS:
            found.append(pid)
    return found


def own_stacks() -> str:
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    return "\n".join(
        f"Thread {names.get(ident, ident)}:\n" + "".join(traceback.format_stack(frame))
        for ident, frame in sys._current_frames().items()
    )


def stacks(root: Path) -> str:
    """Every thread of this process, and of the pi-lsp servers under it (from their logs under
    ``root``)."""
    logs = {path: path.stat().st_size for path in root.rglob(LOG_NAME)}
    servers = server_processes(os.getpid())
    for pid in servers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGUSR1)
    report = [f"== the test process ({os.getpid()})", own_stacks()]
    report.append(f"== pi-lsp servers: {servers or 'none running'}")
    if servers:
        time.sleep(1)  # the servers write their stacks from a signal handler
        for path, size in logs.items():
            with path.open("rb") as log:
                log.seek(size)
                written = log.read().decode(errors="replace")
            start = written.find("Thread 0x")
            if start < 0:
                start = written.find("Current thread 0x")
            if start >= 0:
                report += [f"-- {path.relative_to(root)}", written[start:]]
    return "\n".join(report)
