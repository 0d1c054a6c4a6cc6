"""kill -9 of a process appending to a session file, at random points, many times over.

Each trial starts a writer process that opens the session file with the real store (a restart:
it repairs what the previous writer left) and appends messages of random sizes (a few bytes to
a megabyte and a half, non-ASCII included) until it is killed with SIGKILL after a random delay.
The writer reports each append that returned; after every kill the file must hold all of them
and at most one entry more (the one in flight). After the last kill of a file a last append must
land on a clean line. Then every file is opened by pi-lsp and by pi 0.84.2 (one Node process for
all of them), which must see the same entries, leaf and context.

Trials: ``PI_LSP_KILL_TRIALS`` (default 1,000), spread over files of ``KILLS_PER_FILE`` kills.

The kills are driven from ``DRIVERS`` processes of their own, one file at a time each, not from
the test process. A trial is mostly waiting (for a writer to start, for its delay, for its end),
and on a busy machine each wait costs a time slice: in ``make test``, beside the editor suites,
the thousand kills took twelve times as long as alone. Driven from the test process, each wait
also had to take the GIL back from any busy thread of the process, and a writer killed late
wrote more for every later check and reading to parse. Four drivers overlap their waits. A
driver comes from multiprocessing's fork server (a process of its own, started once, with one
thread and the store imported), so it holds no lock of the test process's threads; having one
thread itself, it forks each writer directly, in a millisecond or two.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import select
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.session.session import Session
from pi_lsp.session.store import parse_session_bytes
from tests.builders import assistant_message, text, user_message

from .figures import record_figure
from .pi_reader import assert_same_reading, read_in_pi_lsp

TRIALS = int(os.environ.get("PI_LSP_KILL_TRIALS", "1000"))
KILLS_PER_FILE = 5
DRIVERS = 4
WRITER_OPEN_SECONDS = 30
ENTRY_START = b'{"type":"message","id":'
ALPHABET = 'abcdefghij klmnop 0123456789 — é 漢字 😀 " \\ \n'


def random_text(rng: random.Random) -> str:
    size = rng.randint(100_000, 1_500_000) if rng.random() < 0.2 else rng.randint(1, 3000)
    unit = "".join(rng.choice(ALPHABET) for _ in range(64))
    return (unit * (size // 64 + 1))[:size]


def message(rng: random.Random, index: int) -> dict:
    timestamp = 1_767_225_600_000 + index
    if index % 2 == 0:
        return user_message([text(random_text(rng))], timestamp)
    return assistant_message(random_text(rng), timestamp=timestamp)


DRIVER_PROCESSES = multiprocessing.get_context("forkserver")
DRIVER_PROCESSES.set_forkserver_preload([__name__])


def writer(path: Path, seed: int, report: int) -> None:
    """The child: open (or create) the session and append until killed; report each append."""
    rng = random.Random(seed)
    if path.exists():
        session = Session.open(path)
    else:
        session = Session.create(path.parent, "/work/project", path=path)
    os.write(report, b"open\n")
    index = 0
    while True:
        entry_id = session.append_message(message(rng, index))
        os.write(report, entry_id.encode() + b"\n")
        index += 1


def run_one_writer(path: Path, seed: int, delay: float) -> list[str]:
    """Fork a writer, kill it with SIGKILL ``delay`` seconds after it opened the file; the ids of
    the appends it reported done."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the writer: it never returns into the driver
        try:
            os.close(read_end)
            writer(path, seed, write_end)
        finally:
            os._exit(1)
    os.close(write_end)  # the writer has its own copy: the pipe ends when the writer does
    try:
        if not select.select([read_end], [], [], WRITER_OPEN_SECONDS)[0]:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError(
                f"a writer did not open {path.name} within {WRITER_OPEN_SECONDS} s"
            )
        reported = os.read(read_end, 65536)  # "open" (or more): the file is open
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        while chunk := os.read(read_end, 65536):
            reported += chunk
    finally:
        os.close(read_end)
    lines = reported.decode().split("\n")
    return [line for line in lines[:-1] if line != "open"]  # a torn last report is not a report


def ids_in(path: Path) -> tuple[list[str], bool]:
    if not path.exists():
        return [], False
    loaded = parse_session_bytes(path.read_bytes(), path)
    return [entry.id for entry in loaded.lines[1:]], loaded.report.torn_last_line


@dataclass
class FileOutcome:
    torn: int
    kept_in_flight: int
    read_by_pi_lsp: dict[str, Any]


def kill_writers_of(path: Path, seed: int) -> FileOutcome:
    """In a driver: ``KILLS_PER_FILE`` writers of ``path`` killed one after the other, each kill
    checked; then the last append and pi-lsp's reading of the file."""
    rng = random.Random(seed)
    known: list[str] = []
    torn = kept_in_flight = size = 0
    for _ in range(KILLS_PER_FILE):
        reported = run_one_writer(path, rng.randrange(1 << 30), rng.uniform(0, 0.006))
        now, torn_end = ids_in(path)
        grew = path.exists() and path.stat().st_size != size
        size = path.stat().st_size if path.exists() else 0
        torn_end = torn_end and grew  # a torn end the writer killed before appending left as it was
        assert now[: len(known)] == known, f"{path.name}: entries written before were changed"
        new = now[len(known) :]
        assert new[: len(reported)] == reported, f"{path.name}: a reported append is missing"
        assert len(new) - len(reported) <= 1, f"{path.name}: more than the in-flight entry"
        kept_in_flight += len(new) - len(reported)
        torn += torn_end
        known = now
    with Session.open(path) as session:  # the restart after the last kill
        # A message: a file the writers never got a message into is still empty, and a
        # session is written from its first message on.
        last = session.append_message(message(rng, 0))
    final = path.read_bytes().split(b"\n")
    assert final[-1] == b"" and json.loads(final[-2])["id"] == last
    fragments = 0
    for line in final[:-1]:  # every line is an entry, or the torn start of one in flight
        try:
            json.loads(line)
        except ValueError:
            fragments += 1
            # The torn start of one entry: SIGKILL can stop a write at any page boundary,
            # even two bytes in. No entry after it may have joined its line.
            joined = line.find(ENTRY_START, 1) >= 0
            assert line.startswith(b'{"') and not joined, f"{path.name}: torn {line[:80]!r}"
    assert fragments == torn, f"{path.name}: unparseable lines besides torn ones"
    return FileOutcome(torn, kept_in_flight, read_in_pi_lsp(path))


def drive(task: tuple[Path, int]) -> FileOutcome:
    return kill_writers_of(*task)


@pytest.mark.timeout(600)
def test_kill_9_during_appends_loses_at_most_the_line_in_flight(tmp_path, reference_node):
    rng = random.Random(int(os.environ.get("PI_LSP_KILL_SEED", "17")))
    files = [tmp_path / f"session-{number:04d}.jsonl" for number in range(TRIALS // KILLS_PER_FILE)]
    tasks = [(path, rng.randrange(1 << 30)) for path in files]
    started = time.perf_counter()
    with DRIVER_PROCESSES.Pool(DRIVERS) as drivers:
        outcomes = drivers.map(drive, tasks, chunksize=1)
    kill_seconds = time.perf_counter() - started
    started = time.perf_counter()
    read_by_pi_lsp = {
        path: outcome.read_by_pi_lsp for path, outcome in zip(files, outcomes, strict=True)
    }
    assert_same_reading(reference_node, files, ours=read_by_pi_lsp)
    torn = sum(outcome.torn for outcome in outcomes)
    record_figure(
        "kill -9 during appends",
        trials=len(files) * KILLS_PER_FILE,
        files=len(files),
        torn_lines=torn,
        in_flight_entries_lost=torn,
        in_flight_entries_kept=sum(outcome.kept_in_flight for outcome in outcomes),
        entries_lost_that_were_acknowledged=0,
        kill_check_and_pi_lsp_read_seconds=round(kill_seconds, 1),
        pi_read_and_compare_seconds=round(time.perf_counter() - started, 1),
    )
