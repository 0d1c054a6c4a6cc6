"""``/tree`` over ACP: a window of the tree as text, and the ``/tree <id>`` hints that page it."""

from __future__ import annotations

import re

import pytest

from pi_lsp.acp.tree_text import tree_text
from pi_lsp.errors import EntryNotFoundError
from pi_lsp.session.session import Session
from tests.builders import user_entry, write_session_file

BASE_MS = 1_767_225_600_000


def _message(entry_id: str, parent_id: str | None, index: int, text: str) -> dict:
    return user_entry(entry_id, parent_id, BASE_MS + index * 1000, text)


@pytest.fixture
def session(tmp_path) -> Session:
    """A run of 501 entries, r0000…r0500; three branches start at r0500: b0… (200 entries, the
    active one), b1x and b2x (one entry each)."""
    entries = []
    parent = None
    for index in range(501):
        entries.append(_message(f"r{index:04d}", parent, index, f"main {index}"))
        parent = f"r{index:04d}"
    for branch in (1, 2):
        entries.append(_message(f"b{branch}x", "r0500", 2000 + branch, f"branch {branch}"))
    parent = "r0500"
    for index in range(200):
        entries.append(_message(f"b0{index:03d}", parent, 600 + index, f"branch 0 step {index}"))
        parent = f"b0{index:03d}"
    return Session.open(write_session_file(tmp_path / "s.jsonl", entries), writable=False)


def ids(text: str) -> list[str]:
    return re.findall(r"^[@* ] +([rb]\w+) user", text, re.MULTILINE)


def hints(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "⋯" in line or "▸" in line]


def test_the_leaf_shows_its_window_and_the_path_above_it(session):
    text = tree_text(session, limit=10)
    assert text.splitlines()[0] == "session s1: 703 entries (@ the leaf, * the active path)"
    assert ids(text) == ["r0500", "b0000", *[f"b0{index:03d}" for index in range(190, 200)]]
    assert "\n@ b0199 user: branch 0 step 199" in text
    assert "\n* r0500 user: main 500  ⑂ 3 branches: /tree r0500\n" in text
    # The rows under b0000 are the 199 entries continuing its branch: 189 of them come before.
    assert hints(text) == [
        "⋯ 500 earlier entries: /tree r0495",
        "⋯ 189 earlier entries: /tree b0185",
    ]
    assert len(text) < 1_000


def test_an_earlier_hint_shows_the_page_before(session):
    text = tree_text(session, "b0185", limit=10)
    assert ids(text) == ["r0500", "b0000", *[f"b0{index:03d}" for index in range(180, 190)]]
    assert "⋯ 179 earlier entries: /tree b0175" in text
    assert "⋯ 10 later entries: /tree b0195" in text
    assert tree_text(session, "r0495", limit=10).count("main 49") == 10  # r0490…r0499


def test_a_branch_point_lists_its_branches(session):
    text = tree_text(session, "r0500", limit=10)
    assert ids(text) == [*[f"r{index:04d}" for index in range(491, 501)], "b0000", "b1x", "b2x"]
    assert "\n*   b0000 user: branch 0 step 0  ▸ continues: /tree b0000\n" in text
    assert "\n    b1x user: branch 1\n" in text
    assert hints(text)[0] == "⋯ 491 earlier entries: /tree r0486"


def test_a_branch_start_shows_the_run_it_begins(session):
    text = tree_text(session, "b0000", limit=5)
    run = [f"b{index:04d}" for index in range(6)]
    assert ids(text) == ["r0500", *run, "b1x", "b2x"]
    assert "\n      ⋯ 194 later entries: /tree b0008\n" in text


def test_a_path_through_many_branch_points_shows_its_last_levels(tmp_path):
    """39 branch points on the path (p002, p005, … p116; the leaf is s119): the text draws the
    last four and folds the rest into one line whose ``/tree`` goes on up."""
    entries, parent = [], None
    for index in range(120):
        entries.append(_message(f"p{index:03d}", parent, index, f"step {index}"))
        if index % 3 == 2:
            entries.append(_message(f"s{index:03d}", f"p{index:03d}", 1000 + index, "side"))
        parent = f"p{index:03d}"
    path = write_session_file(tmp_path / "s.jsonl", entries, session_id="s2")
    session = Session.open(path, writable=False)
    text = tree_text(session, limit=5)
    (further,) = [line for line in text.splitlines() if "the path further up" in line]
    assert further == "⋯ the path further up, 35 branch points: /tree p105"
    assert text.count("⑂ 2 branches") == 4
    assert len(text.splitlines()) < 30
    above = further.rsplit(" ", 1)[1]
    assert re.search(rf"^\* +{above} user", tree_text(session, above, limit=5), re.MULTILINE)


def test_an_unknown_entry_is_an_error(session):
    with pytest.raises(EntryNotFoundError):
        tree_text(session, "nope")
