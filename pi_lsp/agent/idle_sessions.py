"""Which open sessions a server closes: those left alone, beyond the few last used.

An open session holds its whole file's index in memory (about 190 MB for a 100k-entry session),
and pi-lsp used to keep every session it opened until it exited, so an editor that went through
the day's sessions grew with each. pi holds one. The registry now keeps the current session, the
``KEPT`` others used last, and any session something still needs: a turn running or queued, a
summary being written, a prompt deciding whether to start, a client that holds it by id (ACP's
sessions, ``pinned``), or a session not yet written to its file. Others are closed once nothing
has asked for them for ``IDLE_SECONDS`` (a request that named one may still be on its way); a
later request that names a closed session opens it again from its file.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from pi_lsp.agent.runtime import SessionRuntime

KEPT = 2
"""Idle sessions kept open besides the current one (switching back and forth stays instant)."""
IDLE_SECONDS = 60.0


def sessions_to_close(
    runtimes: Iterable[SessionRuntime],
    *,
    kept_open: Collection[str],
    opening: SessionRuntime,
    last_used: Mapping[str, float],
    now: float,
    kept: int = KEPT,
    idle_seconds: float = IDLE_SECONDS,
) -> list[SessionRuntime]:
    """The sessions to close now, by the rules in the module docstring; ``kept_open``: the ids of
    the current session and of the pinned ones. ``opening``, the session being opened, counts
    among the last used and is never closed."""
    idle = [
        runtime
        for runtime in runtimes
        if runtime.id not in kept_open
        and _unneeded(runtime)
        and now - last_used.get(runtime.id, now) >= idle_seconds
    ]
    idle.sort(key=lambda runtime: last_used.get(runtime.id, now), reverse=True)
    return [runtime for runtime in idle[kept:] if runtime is not opening]


def _unneeded(runtime: SessionRuntime) -> bool:
    return not (
        runtime.is_streaming
        or runtime.compacting
        or runtime.queue
        or runtime.starting.locked()
        or not runtime.session.is_persisted
    )
