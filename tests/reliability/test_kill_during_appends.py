"""kill -9 of a process appending to a session file, at random points, many times over.

Each trial starts a writer process that opens the session file with the real store (a restart:
it repairs what the previous writer left) and appends messages of random sizes (a few bytes to
a megabyte and a half, non-ASCII included) until it is killed with SIGKILL after a random delay.
The writer reports each append that returned; after every kill the file must hold all of them
and at most one entry more (the one in flight). After the last kill of a file a last append must
land on a clean line. Then every file is opened by pi-lsp and by pi 0.84.2 (one Node process for
all of them), which must see the same entries, leaf and context.

Trials: ``PI_LSP_KILL_TRIALS`` (default 1,000), spread over files of ``KILLS_PER_FILE`` kills.

The writers come from multiprocessing's fork server: a process of its own, started once, with one
thread, that has the store imported and forks each writer in a few milliseconds. Forking the test
process itself would copy the locks its other threads hold (a pytest-xdist worker has some), and a
writer could wait on one of them for ever.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import select
import signal
import time
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from pi_lsp.session.session import Session
from pi_lsp.session.store import parse_session_bytes
from tests.builders import assistant_message, text, user_message

from .figures import record_figure
from .pi_reader import assert_same_reading

TRIALS = int(os.environ.get("PI_LSP_KILL_TRIALS", "1000"))
KILLS_PER_FILE = 5
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


WRITERS = multiprocessing.get_context("forkserver")
WRITERS.set_forkserver_preload([__name__])


def writer(path: Path, seed: int, report_pipe: Connection) -> None:
    """The child: open (or create) the session and append until killed; report each append."""
    report = report_pipe.fileno()
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
    """Start a writer, kill it with SIGKILL ``delay`` seconds after it opened the file; the ids of
    the appends it reported done."""
    reports, report_pipe = WRITERS.Pipe(duplex=False)
    process = WRITERS.Process(target=writer, args=(path, seed, report_pipe), daemon=True)
    process.start()
    report_pipe.close()  # the writer has its own copy: the pipe ends when the writer does
    read_end = reports.fileno()
    if not select.select([read_end], [], [], WRITER_OPEN_SECONDS)[0]:
        process.kill()
        pytest.fail(f"a writer did not open {path.name} within {WRITER_OPEN_SECONDS} s")
    reported = os.read(read_end, 65536)  # "open" (or more): the file is open
    time.sleep(delay)
    os.kill(process.pid, signal.SIGKILL)
    process.join()
    while chunk := os.read(read_end, 65536):
        reported += chunk
    reports.close()
    lines = reported.decode().split("\n")
    return [line for line in lines[:-1] if line != "open"]  # a torn last report is not a report


def ids_in(path: Path) -> tuple[list[str], bool]:
    if not path.exists():
        return [], False
    loaded = parse_session_bytes(path.read_bytes(), path)
    return [entry.id for entry in loaded.lines[1:]], loaded.report.torn_last_line


@pytest.mark.timeout(600)
def test_kill_9_during_appends_loses_at_most_the_line_in_flight(tmp_path, reference_node):
    rng = random.Random(int(os.environ.get("PI_LSP_KILL_SEED", "17")))
    files = [tmp_path / f"session-{number:04d}.jsonl" for number in range(TRIALS // KILLS_PER_FILE)]
    started = time.perf_counter()
    torn = lost_in_flight = kept_in_flight = 0
    for path in files:
        known: list[str] = []
        torn_in_file = size = 0
        for _ in range(KILLS_PER_FILE):
            reported = run_one_writer(path, rng.randrange(1 << 30), rng.uniform(0, 0.006))
            now, torn_end = ids_in(path)
            grew = path.exists() and path.stat().st_size != size
            size = path.stat().st_size if path.exists() else 0
            torn_end = (
                torn_end and grew
            )  # a torn end the writer killed before appending left as it was
            assert now[: len(known)] == known, f"{path.name}: entries written before were changed"
            new = now[len(known) :]
            assert new[: len(reported)] == reported, f"{path.name}: a reported append is missing"
            assert len(new) - len(reported) <= 1, f"{path.name}: more than the in-flight entry"
            kept_in_flight += len(new) - len(reported)
            torn += torn_end
            torn_in_file += torn_end
            lost_in_flight += torn_end
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
        assert fragments == torn_in_file, f"{path.name}: unparseable lines besides torn ones"
    write_seconds = time.perf_counter() - started
    started = time.perf_counter()
    assert_same_reading(reference_node, files)
    record_figure(
        "kill -9 during appends",
        trials=len(files) * KILLS_PER_FILE,
        files=len(files),
        torn_lines=torn,
        in_flight_entries_lost=lost_in_flight,
        in_flight_entries_kept=kept_in_flight,
        entries_lost_that_were_acknowledged=0,
        write_and_kill_seconds=round(write_seconds, 1),
        pi_and_pi_lsp_read_seconds=round(time.perf_counter() - started, 1),
    )
