"""The windowed tree: rows under a node, the levels down to an entry, paging, search, changes.

The rows must be the tree view's layout of the whole tree (``session.tree()``, pi's ``getTree``):
a random forest with branches, orphans, duplicate timestamps and out-of-order children is laid out
by a straightforward reference and compared node by node.
"""

from __future__ import annotations

import itertools
import json
import random

import pytest

from pi_lsp.agent.tree_changes import TreeChanges
from pi_lsp.errors import EntryNotFoundError, InvalidParamsError
from pi_lsp.session.session import Session
from pi_lsp.session.tree_search import search_tree
from pi_lsp.session.tree_window import tree_children, tree_levels
from tests.builders import user_entry, write_session_file

BASE_MS = 1_767_225_600_000


def _write(path, entries) -> Session:
    return Session.open(write_session_file(path, entries), writable=False)


def _random_forest(generator: random.Random, count: int) -> list[dict]:
    entries = []
    for index in range(count):
        entry_id = f"e{index:04d}"
        choice = generator.random()
        if not entries or choice < 0.04:
            parent = None
        elif choice < 0.06:
            parent = "missing"  # an orphan: pi shows it as a root
        elif choice < 0.75:
            parent = entries[-1]["id"]  # a conversation going on
        else:
            parent = generator.choice(entries)["id"]  # a branch
        ms = BASE_MS + index * 1000 - (generator.randint(0, 5) * 1000 if choice > 0.9 else 0)
        entries.append(user_entry(entry_id, parent, ms, f"text {index}"))
    return entries


def _reference_layout(session: Session) -> dict[str | None, list[str]]:
    """The tree view's rows under each node, from the whole tree (VS Code's old buildTreeModel)."""
    layout: dict[str | None, list[str]] = {}

    def run(node) -> list[str]:
        rows = []
        while node is not None:
            rows.append(node.entry["id"])
            if len(node.children) == 1:
                node = node.children[0]
            else:
                if node.children:
                    layout[node.entry["id"]] = [branch(child) for child in node.children]
                node = None
        return rows

    def branch(node) -> str:
        if len(node.children) == 1:
            layout[node.entry["id"]] = run(node.children[0])
        elif node.children:
            layout[node.entry["id"]] = [branch(child) for child in node.children]
        return node.entry["id"]

    roots = session.tree()
    layout[None] = run(roots[0]) if len(roots) == 1 else [branch(root) for root in roots]
    return layout


@pytest.mark.parametrize("seed", range(12))
def test_rows_under_every_node_are_the_tree_views_layout(tmp_path, seed):
    session = _write(tmp_path / "s.jsonl", _random_forest(random.Random(seed), 160))
    reference = _reference_layout(session)
    for entry in [None, *session.entries]:
        parent_id = None if entry is None else entry.id
        level = tree_children(session, parent_id, limit=1000)
        rows = [row.row.id for row in level.nodes]
        assert rows == reference.get(parent_id, []), f"rows under {parent_id}"
        assert level.total == len(rows)
        for node in level.nodes:
            assert node.expandable == bool(reference.get(node.row.id))
            assert node.child_count == len(session.children(node.row.id))


@pytest.mark.parametrize("seed", range(6))
def test_levels_lead_down_to_the_target_one_path_row_each(tmp_path, seed):
    session = _write(tmp_path / "s.jsonl", _random_forest(random.Random(seed), 200))
    active = {entry.id for entry in session.branch()}
    for target in [None, *random.Random(seed).sample([e.id for e in session.entries], 15)]:
        levels = tree_levels(session, target, limit=7)
        target_id = target or session.leaf_id
        path = {entry.id for entry in session.branch(target_id)}
        assert target_id in [node.row.id for node in levels[-1].nodes]
        assert len(levels[-1].nodes) == min(7, levels[-1].total)
        assert levels[0].parent_id is None
        for upper, lower in itertools.pairwise(levels):
            assert [node.row.id for node in upper.nodes] == [lower.parent_id]
            assert lower.parent_id in path
        for level in levels:
            whole = tree_children(session, level.parent_id, limit=1000)
            assert level.total == whole.total
            window = [node.row.id for node in whole.nodes][level.offset : level.offset + 7]
            assert [node.row.id for node in level.nodes] == window[: len(level.nodes)]
            for node in level.nodes:
                assert node.active == (node.row.id in active)


def test_a_long_run_is_paged_and_windowed_around_an_entry(tmp_path):
    entries = [
        user_entry(f"e{i:04d}", f"e{i - 1:04d}" if i else None, BASE_MS + i, "t")
        for i in range(500)
    ]
    session = _write(tmp_path / "s.jsonl", entries)
    first = tree_levels(session, None, limit=20)
    assert len(first) == 1 and first[0].total == 500 and first[0].offset == 480
    assert first[0].nodes[-1].row.id == "e0499" and first[0].nodes[-1].active
    page = tree_children(session, None, offset=100, limit=10)
    assert [node.row.id for node in page.nodes] == [f"e{i:04d}" for i in range(100, 110)]
    around = tree_children(session, None, around_id="e0250", limit=11)
    assert around.offset == 245 and around.nodes[5].row.id == "e0250"
    assert tree_children(session, None, offset=10_000).nodes == []
    with pytest.raises(InvalidParamsError):
        tree_children(session, "e0001", around_id="e0002")  # e0002 continues the run, not under
    with pytest.raises(EntryNotFoundError):
        tree_children(session, "nope")


def test_a_branch_point_shows_its_branches_collapsed_with_counts(tmp_path):
    entries = [user_entry("a", None, BASE_MS, "root"), user_entry("b", "a", BASE_MS + 1, "old")]
    entries += [
        user_entry("c", "b", BASE_MS + 2, "old 2"),
        user_entry("d", "a", BASE_MS + 3, "new"),
    ]
    session = _write(tmp_path / "s.jsonl", entries)
    levels = tree_levels(session, None, limit=50)
    assert [(level.parent_id, level.total) for level in levels] == [(None, 1), ("a", 2)]
    branches = tree_children(session, "a")
    assert [(n.row.id, n.branch_start, n.expandable, n.active) for n in branches.nodes] == [
        ("b", True, True, False),
        ("d", True, False, True),
    ]
    assert [node.row.id for node in tree_children(session, "b").nodes] == ["c"]


def test_appended_entries_come_with_the_next_change_and_its_version(tmp_path):
    session = Session.create(tmp_path, str(tmp_path))
    first = session.append_message({"role": "user", "content": "hello", "timestamp": 1})
    changes = TreeChanges(session)
    answer = session.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "timestamp": 2}
    )
    session.append_label(first, "start")
    session.append_session_info("Greeting")
    event = changes.next_event()
    assert event.version == 1 and event.leaf_id == session.leaf_id
    assert event.entries[0].id == answer
    assert [row.type for row in event.entries] == ["message", "label", "session_info"]
    assert all(row.active for row in event.entries)
    assert event.labels == {first: "start"} and event.name == "Greeting"
    session.append_label(first, None)
    session.move_leaf(first)
    cleared = changes.next_event()
    assert cleared.version == 2 and cleared.labels == {first: None}
    assert cleared.leaf_id == first and not cleared.entries[0].active
    nothing = changes.next_event()
    assert nothing.version == 3 and nothing.entries == [] and nothing.labels == {}


def test_search_finds_text_labels_and_names_newest_first(tmp_path):
    session = Session.create(tmp_path, str(tmp_path))
    old = session.append_message({"role": "user", "content": "Fix the PARSER", "timestamp": 1})
    session.append_message(
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": 'say "hi"'},
                {
                    "type": "toolCall",
                    "id": "c1",
                    "name": "read",
                    "arguments": {"path": "parser.py"},
                },
            ],
            "timestamp": 2,
        }
    )
    new = session.append_message({"role": "user", "content": "the parser again", "timestamp": 3})
    session.append_label(old, "Milestone one")
    session.append_session_info("Café work")
    hits = search_tree(session, "parser", 10)
    assert hits.total == 3 and hits.entries[0].id == new and hits.entries[-1].id == old
    assert search_tree(session, "parser", 1).total == 3
    assert len(search_tree(session, "parser", 1).entries) == 1
    labelled = search_tree(session, "milestone", 10)
    assert [entry.id for entry in labelled.entries][-1] == old  # the label entry and its target
    assert [entry.type for entry in search_tree(session, "CAFÉ", 10).entries] == ["session_info"]
    assert search_tree(session, '"hi"', 10).total == 1
    assert search_tree(session, "role", 10).total == 0  # JSON keys are not text


def test_the_active_path_index_follows_navigations_and_appends(tmp_path):
    from pi_lsp.session.path_index import ActivePathIndex, active_path_index

    generator = random.Random(5)
    session = _write(tmp_path / "s.jsonl", _random_forest(generator, 300))
    session.close()
    session = Session.open(tmp_path / "s.jsonl")
    ids = [entry.id for entry in session.entries]
    for step in range(60):
        if step % 3 == 2:
            session.append_message({"role": "user", "content": f"step {step}", "timestamp": 1})
        else:
            session.move_leaf(generator.choice(ids))
        index = active_path_index(session)
        fresh = ActivePathIndex()
        fresh.follow(session)
        assert index.entries == session.branch() == fresh.entries
        assert index.shown == fresh.shown
        positions = {entry_id: index.position_of(entry_id) for entry_id in ids}
        assert positions == {entry_id: fresh.position_of(entry_id) for entry_id in ids}
        on_path = {entry.id: position for position, entry in enumerate(fresh.entries)}
        assert positions == {entry_id: on_path.get(entry_id) for entry_id in ids}


def _varied_forest(generator: random.Random, count: int) -> list[dict]:
    """A random forest of every kind of entry the chat decides on: messages (system-role ones
    written compactly or with spaces, a ``message`` that is no object), summaries, custom messages
    shown or hidden, and bookkeeping."""
    entries = _random_forest(generator, count)
    for index, entry in enumerate(entries):
        kind = index % 9
        if kind == 1:
            entry["message"] = {"role": "system", "content": "You are pi.", "timestamp": 0}
        elif kind == 2:
            entry |= {"type": "compaction", "summary": "s", "firstKeptEntryId": entry["id"]}
        elif kind == 3:
            entry |= {"type": "custom_message", "customType": "x", "content": "c"}
            entry["display"] = generator.choice([True, False, None])
        elif kind == 4:
            entry |= {"type": "label", "targetId": entry["id"], "label": "l"}
        elif kind == 5:
            entry["message"] = generator.choice([None, "text", [1]])
        elif kind == 6:
            entry |= {"type": "branch_summary", "summary": "b", "fromId": entry["id"]}
    return entries


def _reference_shown(entries) -> list[int]:
    """What the chat shows, read from each entry decoded whole."""
    shown = []
    for position, entry in enumerate(entries):
        body = json.loads(entry.raw)
        message = body.get("message")
        if body.get("type") == "message":
            visible = isinstance(message, dict) and message.get("role") != "system"
        else:
            visible = body.get("type") in ("compaction", "branch_summary") or (
                body.get("type") == "custom_message" and body.get("display") is not False
            )
        if visible:
            shown.append(position)
    return shown


def test_the_chat_s_entries_are_found_from_the_index_alone_and_followed(tmp_path):
    from pi_lsp.session.path_index import ActivePathIndex

    generator = random.Random(11)
    entries = _varied_forest(generator, 400)
    path = write_session_file(tmp_path / "s.jsonl", entries)
    spaced = path.read_text().replace('"role":"system"', '"role": "system"', 5)
    path.write_text(spaced)  # a hand-edited line: the role is still read
    session = Session.open(path)
    ids = [entry.id for entry in session.entries]
    following, late = ActivePathIndex(), ActivePathIndex()
    for step in range(80):
        if step % 4 == 3:
            session.append_message({"role": "user", "content": f"step {step}", "timestamp": 1})
        elif step % 4 == 2:
            session.append_raw({"type": "custom_message", "customType": "x", "display": False})
        else:
            session.move_leaf(generator.choice(ids))
        following.follow(session)
        late.follow(session)
        expected = _reference_shown(session.branch())
        assert following.shown == expected  # worked out once, then followed
        if step % 10 == 9:
            assert late.shown == expected  # worked out after the path moved on
            late = ActivePathIndex()
            late.follow(session)
