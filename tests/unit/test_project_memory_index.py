"""The session index against a full scan of the session files, and its searches.

Random session sets are grown by appends, branches, files rewritten in place or replaced, torn
last lines completed later, and deletions; after every step the index, kept current only
incrementally, must hold exactly the rows a full scan of the files gives: every entry with its
type, role, text and whether it is on the file's active path (pi's path from the last entry).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_lsp.errors import NotASessionError
from pi_lsp.project_memory.database import connect
from pi_lsp.project_memory.extract import indexed_text
from pi_lsp.project_memory.indexer import forget_file, sync_file
from pi_lsp.project_memory.search import SearchFilter, search_index
from pi_lsp.session.paths import session_path
from pi_lsp.session.store import is_session_header, parse_session_bytes

WORDS = ["retry", "policy", "backoff", "cache", "naïve", "日本語", "C++", "foo-bar", "x.y"]


def header(session_id: str) -> dict:
    return {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/project",
    }


def message(entry_id: str, parent: str | None, role: str, text: str, second: int) -> dict:
    content: object = text if role == "user" else [{"type": "text", "text": text}]
    if role == "toolResult":
        content = [{"type": "text", "text": text}]
    body: dict = {"role": role, "content": content, "timestamp": 1_735_689_600_000 + second}
    if role == "toolResult":
        body |= {"toolCallId": "call", "toolName": "read", "isError": False}
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2025-01-01T00:{second // 60 % 60:02d}:{second % 60:02d}.000Z",
        "message": body,
    }


def line(body: dict) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def full_scan(path: Path) -> list[tuple]:
    """What the index must hold for ``path``, computed from scratch."""
    if not path.exists():
        return []
    data = path.read_bytes()
    data = data[: data.rfind(b"\n") + 1]
    try:
        loaded = parse_session_bytes(data, path)
    except NotASessionError:
        return []
    if not loaded.lines:
        return []
    entries = [entry for entry in loaded.lines[1:] if not is_session_header(entry)]
    on_path = {id(entry) for entry in session_path(entries)} if entries else set()
    return [(entry.id, entry.type, indexed_text(entry), id(entry) in on_path) for entry in entries]


def indexed_rows(connection: sqlite3.Connection, path: Path) -> list[tuple]:
    return [
        (entry_id, entry_type, text or "", bool(on_path))
        for entry_id, entry_type, text, on_path in connection.execute(
            "SELECT e.entry_id, e.type, t.text, e.on_path FROM entries e "
            "JOIN files f ON f.file = e.file LEFT JOIN entry_text t ON t.rowid = e.row "
            "WHERE f.path = ? ORDER BY e.seq",
            (str(path),),
        )
    ]


class SessionFiles:
    """A few session files changed the ways pi, pi-lsp and editors change them."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.ids: dict[Path, list[str]] = {}
        self.counter = 0

    def path(self, number: int) -> Path:
        return self.directory / f"s{number}.jsonl"

    def next_id(self) -> str:
        self.counter += 1
        return f"e{self.counter:05d}"

    def append(self, number: int, role: str, word: str, parent_choice: int | None) -> None:
        path = self.path(number)
        ids = self.ids.setdefault(path, [])
        prefix = b""
        if not path.exists():
            prefix = line(header(f"session-{number}"))
        parent = ids[-1] if ids else None
        if parent_choice is not None and ids:
            parent = ids[parent_choice % len(ids)]
        entry_id = self.next_id()
        with open(path, "ab") as stream:
            stream.write(prefix + line(message(entry_id, parent, role, word, self.counter)))
        ids.append(entry_id)

    def reuse(self, number: int, which: int, word: str) -> None:
        """An entry with the id of an earlier one (a later entry wins an id used twice, so the
        path above it may change), continuing from the last entry."""
        path = self.path(number)
        ids = self.ids.get(path)
        if not ids:
            return
        entry_id, self.counter = ids[which % len(ids)], self.counter + 1
        with open(path, "ab") as stream:
            stream.write(line(message(entry_id, ids[-1], "user", word, self.counter)))
        ids.append(entry_id)

    def tear(self, number: int, word: str) -> None:
        """Half a line at the end, as a crash mid-write leaves it."""
        path = self.path(number)
        if path.exists():
            whole = line(message(self.next_id(), None, "user", word, self.counter))
            with open(path, "ab") as stream:
                stream.write(whole[: len(whole) // 2])

    def repair_and_append(self, number: int, word: str) -> None:
        """What the store does after a torn line: a newline first, then the new entry."""
        path = self.path(number)
        if path.exists() and not path.read_bytes().endswith(b"\n"):
            with open(path, "ab") as stream:
                stream.write(b"\n")
        self.append(number, "assistant", word, None)

    def rewrite(self, number: int, in_place: bool, word: str) -> None:
        """The file written again from scratch (pi migrating it, or a tool replacing it)."""
        path = self.path(number)
        ids = [self.next_id() for _ in range(2)]
        data = (
            line(header(f"session-{number}-rewritten"))
            + line(message(ids[0], None, "user", word, self.counter))
            + line(message(ids[1], ids[0], "assistant", word + " again", self.counter))
        )
        self.ids[path] = ids
        if in_place:
            path.write_bytes(data)
        else:
            temporary = path.with_suffix(".tmp")
            temporary.write_bytes(data)
            os.replace(temporary, path)

    def delete(self, number: int) -> None:
        self.path(number).unlink(missing_ok=True)
        self.ids.pop(self.path(number), None)


operation = st.one_of(
    st.tuples(
        st.just("append"),
        st.integers(0, 2),
        st.sampled_from(["user", "assistant", "toolResult"]),
        st.sampled_from(WORDS),
        st.none() | st.integers(0, 50),
    ),
    st.tuples(st.just("reuse"), st.integers(0, 2), st.integers(0, 50), st.sampled_from(WORDS)),
    st.tuples(st.just("tear"), st.integers(0, 2), st.sampled_from(WORDS)),
    st.tuples(st.just("repair_and_append"), st.integers(0, 2), st.sampled_from(WORDS)),
    st.tuples(st.just("rewrite"), st.integers(0, 2), st.booleans(), st.sampled_from(WORDS)),
    st.tuples(st.just("delete"), st.integers(0, 2)),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=st.lists(operation, min_size=1, max_size=25))
def test_the_index_kept_current_incrementally_equals_a_full_scan(tmp_path_factory, operations):
    directory = tmp_path_factory.mktemp("sessions")
    files = SessionFiles(directory)
    connection = connect(directory / "index.sqlite3")
    try:
        for kind, number, *arguments in operations:
            getattr(files, kind)(number, *arguments)
            sync_file(connection, files.path(number))
            for other in range(3):
                path = files.path(other)
                assert indexed_rows(connection, path) == full_scan(path), (kind, other)
    finally:
        connection.close()


def test_a_file_that_is_not_a_session_is_left_out(tmp_path):
    connection = connect(tmp_path / "index.sqlite3")
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"hello": "retry policy"}\n')
    sync_file(connection, notes)
    assert search_index(connection, "retry", limit=10).total == 0


@pytest.fixture
def two_sessions(tmp_path):
    connection = connect(tmp_path / "index.sqlite3")
    first = tmp_path / "first.jsonl"
    second = tmp_path / "second.jsonl"
    first.write_bytes(
        line(header("first"))
        + line(message("a1", None, "user", "What is our retry policy? Use foo-bar(x).", 1))
        + line(message("a2", "a1", "assistant", "Exponential backoff, naïve café 日本語 text.", 2))
        + line(
            {
                "type": "session_info",
                "id": "a3",
                "parentId": "a2",
                "timestamp": "2025-01-01T00:00:03.000Z",
                "name": "Retry design",
            }
        )
    )
    second.write_bytes(
        line(header("second"))
        + line(message("b1", None, "user", "The retry budget is five attempts.", 10))
    )
    sync_file(connection, first)
    sync_file(connection, second)
    yield connection, first, second
    connection.close()


def test_a_search_finds_words_newest_first(two_sessions):
    connection, *_ = two_sessions
    page = search_index(connection, "retry", limit=10)
    assert page.total == 3  # a message, the name, and the other session's message
    assert [hit.entry_id for hit in page.hits] == ["b1", "a3", "a1"]
    assert page.hits[0].session_id == "second"
    assert {hit.session_name for hit in page.hits if hit.session_id == "first"} == {"Retry design"}


def test_a_quoted_phrase_and_an_excluded_word(two_sessions):
    connection, *_ = two_sessions
    assert [h.entry_id for h in search_index(connection, '"retry policy"', limit=5).hits] == ["a1"]
    assert [
        h.entry_id for h in search_index(connection, "retry -budget -design", limit=5).hits
    ] == ["a1"]


@pytest.mark.parametrize(
    "query",
    [
        *("foo-bar(x)", "NEAR(retry", '"unbalanced', "a:b", "*", "AND OR NOT", "retry^", "("),
        *("''", '"', '-"\x00retry', 'retry "a\x00b"', "retry\ud800", "\ud800\udfff"),
    ],
)
def test_punctuation_never_reaches_fts_as_syntax(two_sessions, query):
    connection, *_ = two_sessions
    for order in ("newest", "best"):
        search_index(connection, query, limit=5, order=order)  # nothing raised


def test_punctuated_words_are_found_literally(two_sessions):
    connection, *_ = two_sessions
    assert [h.entry_id for h in search_index(connection, "foo-bar(x)", limit=5).hits] == ["a1"]


def test_non_ascii_words_are_found_with_or_without_accents(two_sessions):
    connection, *_ = two_sessions
    assert [h.entry_id for h in search_index(connection, "naive", limit=5).hits] == ["a2"]
    assert [h.entry_id for h in search_index(connection, "Café", limit=5).hits] == ["a2"]
    assert [h.entry_id for h in search_index(connection, "日本語", limit=5).hits] == ["a2"]


def test_words_match_whole_words(two_sessions):
    connection, *_ = two_sessions
    assert search_index(connection, "exponential back", limit=5).total == 0
    assert [h.entry_id for h in search_index(connection, "exponential backoff", limit=5).hits] == [
        "a2"
    ]


def test_best_match_first_and_filters(two_sessions):
    connection, *_ = two_sessions
    best = search_index(connection, "retry policy", limit=5, order="best")
    assert best.hits[0].entry_id == "a1"
    only = search_index(connection, "retry", limit=5, only=SearchFilter(session_id="second"))
    assert [hit.entry_id for hit in only.hits] == ["b1"]
    others = search_index(
        connection, "retry", limit=5, only=SearchFilter(excluded_session_id="first")
    )
    assert [hit.entry_id for hit in others.hits] == ["b1"]


def test_hits_know_their_place_and_show_the_matched_words(two_sessions):
    connection, first, _ = two_sessions
    hit = search_index(connection, "backoff", limit=5).hits[0]
    assert (hit.path, hit.entry_id, hit.role, hit.type) == (
        str(first),
        "a2",
        "assistant",
        "message",
    )
    assert "backoff" in hit.preview.lower()
    assert hit.on_active_path
    assert hit.timestamp_ms == 1_735_689_602_000


def test_a_file_gone_is_forgotten(two_sessions):
    connection, first, _ = two_sessions
    forget_file(connection, first)
    assert {hit.session_id for hit in search_index(connection, "retry", limit=9).hits} == {"second"}


def test_a_corrupt_database_is_rebuilt(tmp_path):
    database = tmp_path / "index.sqlite3"
    database.write_bytes(b"this is not a database" * 100)
    connection = connect(database, check=True)
    session = tmp_path / "s.jsonl"
    session.write_bytes(line(header("s")) + line(message("m", None, "user", "retry", 1)))
    sync_file(connection, session)
    assert search_index(connection, "retry", limit=5).total == 1
    connection.close()


def test_a_damaged_page_fails_the_check_and_is_rebuilt(tmp_path):
    database = tmp_path / "index.sqlite3"
    connection = connect(database)
    session = tmp_path / "s.jsonl"
    session.write_bytes(
        line(header("s"))
        + b"".join(line(message(f"m{i}", None, "user", f"retry {i} " * 50, i)) for i in range(200))
    )
    sync_file(connection, session)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    data = bytearray(database.read_bytes())
    page = 4096
    data[page * 3 : page * 6] = os.urandom(page * 3)
    database.write_bytes(bytes(data))
    connection = connect(database, check=True)
    assert connection.execute("SELECT count(*) FROM entries").fetchone()[0] == 0
    sync_file(connection, session)
    assert search_index(connection, "retry", limit=5).total == 200
    connection.close()


def sqlite_steps_of_a_branch(tmp_path: Path, n: int) -> int:
    """The SQLite virtual machine steps (in thousands) that indexing one entry costs when it
    branches off the middle of a chain of ``n`` entries."""
    database = tmp_path / f"index-{n}.sqlite3"
    session = tmp_path / f"s-{n}.jsonl"
    chain = (message(f"m{i}", f"m{i - 1}" if i else None, "user", "retry", i) for i in range(n))
    session.write_bytes(line(header(f"s{n}")) + b"".join(map(line, chain)))
    connection = connect(database)
    sync_file(connection, session)
    with open(session, "ab") as stream:
        stream.write(line(message("branch", f"m{n // 2}", "user", "backoff", n)))
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    connection.set_progress_handler(count, 1000)
    sync_file(connection, session)
    connection.set_progress_handler(None, 0)
    on_path = connection.execute("SELECT count(*) FROM entries WHERE on_path").fetchone()[0]
    assert on_path == n // 2 + 2  # the root up to the junction, and the branch
    connection.close()
    return steps


def test_a_branch_costs_in_proportion_to_its_path_not_to_its_square(tmp_path):
    # Each ancestor's parent is found through the index on (file, entry_id, seq); an index the
    # planner preferred for "ORDER BY seq" made every lookup scan the whole file (a branch off a
    # 10,000-entry session took seconds).
    small, large = (sqlite_steps_of_a_branch(tmp_path, n) for n in (500, 2000))
    assert large < small * 6


def test_an_id_used_again_moves_the_path_above_it(tmp_path):
    # a ← b ← c, then a second "a" under c: pi's walk goes a' → c → b → (a is now a') and ends
    # there, so the first "a" leaves the path although the append continues from the leaf.
    connection = connect(tmp_path / "index.sqlite3")
    session = tmp_path / "s.jsonl"
    chain = [message("a", None, "user", "retry", 1), message("b", "a", "assistant", "retry", 2)]
    session.write_bytes(line(header("s")) + b"".join(map(line, chain)))
    session.write_bytes(session.read_bytes() + line(message("c", "b", "user", "retry", 3)))
    sync_file(connection, session)
    with open(session, "ab") as stream:
        stream.write(line(message("a", "c", "assistant", "retry", 4)))
    sync_file(connection, session)
    assert [row[3] for row in indexed_rows(connection, session)] == [False, True, True, True]
    assert indexed_rows(connection, session) == full_scan(session)
    connection.close()


def test_an_entry_given_the_id_the_paths_top_lacked_extends_the_path(tmp_path):
    # b's parent "a" is nowhere, so the path stops at b; then one write adds "a" (a root) and c
    # under b: pi's walk goes c → b → a, though c continues from the leaf.
    connection = connect(tmp_path / "index.sqlite3")
    session = tmp_path / "s.jsonl"
    session.write_bytes(line(header("s")) + line(message("b", "a", "user", "retry", 1)))
    sync_file(connection, session)
    with open(session, "ab") as stream:
        stream.write(line(message("a", None, "assistant", "retry", 2)))
        stream.write(line(message("c", "b", "user", "retry", 3)))
    sync_file(connection, session)
    assert [row[3] for row in indexed_rows(connection, session)] == [True, True, True]
    assert indexed_rows(connection, session) == full_scan(session)
    connection.close()
