"""A disk that fills up (ENOSPC injected at the write call) and a session directory that cannot
be written: a clear error, nothing already written touched, writes again once space is back; a
read-only session served for reading with the reason shown.

The read-only directory is made with ``chattr +i`` when the tests run as root (root ignores
permission bits), else with ``chmod``.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

from pi_lsp.client import PiRequestError
from pi_lsp.errors import SessionWriteError
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from pi_lsp.session import store
from pi_lsp.session.session import Session
from tests.builders import user_text

from .figures import record_figure
from .pi_reader import assert_same_reading
from .servers import FAULT_INJECTION, make_workspace, server_options, start_server


@contextmanager
def disk_full_after(monkeypatch, budget: int):
    """``os.write`` in the store writes at most ``budget`` more bytes, then fails with ENOSPC."""
    real_write = os.write
    left = [budget]

    def write(descriptor, data):
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = real_write(descriptor, bytes(memoryview(data)[: left[0]]))
        left[0] -= written
        return written

    with monkeypatch.context() as patch:
        patch.setattr(store.os, "write", write)
        yield


@pytest.mark.parametrize("budget", [0, 1, 37, 500, 4096])
def test_a_write_that_fails_part_way_leaves_the_file_as_it_was(tmp_path, monkeypatch, budget):
    path = tmp_path / "s.jsonl"
    with Session.create(tmp_path, "/w", path=path) as session:
        session.append_message(user_text("first"))
        before = path.read_bytes()
        entries = list(session.entries)
        with (
            disk_full_after(monkeypatch, budget),
            pytest.raises(SessionWriteError, match="No space left on device"),
        ):
            session.append_message(user_text("x" * 10_000))
        assert path.read_bytes() == before  # the half-written line was cut off again
        assert session.entries == entries
        third = session.append_message(user_text("space is back"))
    reopened = Session.open(path, writable=False)
    assert reopened.report.unparseable_lines == [] and reopened.leaf_id == third


def test_a_first_write_that_fails_leaves_no_half_session(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    session = Session.create(tmp_path, "/w", path=path)
    with disk_full_after(monkeypatch, 60), pytest.raises(SessionWriteError):
        session.append_message(user_text("hello"))
    assert path.read_bytes() == b""
    session.append_message(user_text("hello again"))
    assert Session.open(path, writable=False).report.unparseable_lines == []


@contextmanager
def read_only(*paths: Path):
    root = os.geteuid() == 0
    if root and not shutil.which("chattr"):
        pytest.fail("running as root needs chattr (e2fsprogs) to make a read-only directory")
    for path in paths:
        if root:
            subprocess.run(["chattr", "+i", str(path)], check=True)
        else:
            path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        yield
    finally:
        for path in paths:
            if root:
                subprocess.run(["chattr", "-i", str(path)], check=True)
            else:
                path.chmod(0o755 if path.is_dir() else 0o644)


async def test_disk_full_and_read_only_sessions_in_a_running_server(tmp_path, reference_node):
    workspace = make_workspace(tmp_path)
    sessions = workspace / "sessions"
    flag = tmp_path / "disk-full"
    environment = {
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(FAULT_INJECTION), os.environ.get("PYTHONPATH")])
        ),
        "PI_LSP_FAULT_DIR": str(sessions),
        "PI_LSP_FAULT_FLAG": str(flag),
    }
    older = Session.create(sessions, str(workspace))
    older.append_message(user_text("an older conversation"))
    older.close()
    async with ScriptedLLM() as model:
        client = await start_server(
            tmp_path / "home",
            workspace,
            server_options(model.base_url, workspace),
            environment=environment,
        )
        try:
            new = await client.request("pi/newSession", {})
            model.enqueue(replies.text("First answer."))
            await client.request("pi/prompt", {"text": "first"})
            path = Path(new["path"])
            before = path.read_bytes()

            flag.touch()  # the disk is full: the user message cannot be written
            with pytest.raises(PiRequestError) as raised:
                await client.request("pi/prompt", {"text": "second " * 2000})
            assert raised.value.code == -32006
            assert "No space left on device" in raised.value.message
            assert path.read_bytes() == before

            model.enqueue(replies.slow_text("An answer the full disk cannot take.", chunks=4))
            flag.unlink()
            client.events.notifications.clear()
            task = asyncio.ensure_future(client.request("pi/prompt", {"text": "third"}))
            await client.events.wait_for("text_delta")
            written = path.read_bytes()
            flag.touch()  # full while the answer streams: the answer cannot be written
            outcome = await asyncio.gather(task, return_exceptions=True)
            flag.unlink()
            assert path.read_bytes() == written
            error = outcome[0]
            shown = (
                error.message if isinstance(error, PiRequestError) else outcome[0]["errorMessage"]
            )
            assert "No space left on device" in shown

            model.enqueue(replies.text("Space is back."))
            result = await client.request("pi/prompt", {"text": "fourth"})
            assert result["stopReason"] == "stop"
            assert path.read_bytes().startswith(written)

            with read_only(sessions, Path(older.path)):
                opened = await client.request("pi/openSession", {"sessionId": older.id})
                assert opened["readOnly"] is True
                assert "cannot be written" in opened["readOnlyReason"]
                tree = await client.request("pi/tree", {"sessionId": older.id})
                assert tree["leafId"] == older.leaf_id
                state = await client.request("pi/state", {"sessionId": older.id})
                assert "cannot be written" in state["readOnlyReason"]
                with pytest.raises(PiRequestError) as refused:
                    await client.request("pi/prompt", {"sessionId": older.id, "text": "more"})
                assert refused.value.code == -32005 and "cannot be written" in refused.value.message
        finally:
            await client.close()
    assert_same_reading(reference_node, [path, Path(older.path)])
    record_figure(
        "disk full and read-only",
        disk_full_writes_refused=2,
        bytes_changed_in_written_lines=0,
        read_only_session_served=True,
    )
