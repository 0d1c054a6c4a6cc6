"""The tree layout on its own (no server): indentation only where the tree branches, the marks,
labels, and label entries hidden with their children shown in their place."""

from __future__ import annotations


def entry(
    entry_id: str,
    parent: str | None,
    kind: str = "message",
    role: str | None = None,
    preview: str = "",
    label: str | None = None,
) -> dict:
    value = {
        "id": entry_id,
        "parentId": parent,
        "type": kind,
        "preview": preview,
        "timestamp": "2026-01-01T00:00:00.000Z",
    }
    if role:
        value["role"] = role
    if label:
        value["label"] = label
    return value


def test_branches_are_indented_and_label_entries_hidden(editor):
    tree = {
        "sessionId": "s1",
        "name": "demo",
        "leafId": "0000000f",
        "activePath": ["0000000a", "0000000b", "0000000d", "0000000e", "0000000f"],
        "roots": ["0000000a"],
        "children": {
            "0000000a": ["0000000b"],
            "0000000b": ["0000000c", "0000000d"],
            "0000000d": ["0000000e"],
            "0000000e": ["0000000f"],
        },
        "entries": [
            entry("0000000a", None, role="user", preview="Fix   the\ntest", label="start"),
            entry("0000000b", "0000000a", role="assistant", preview="Looking"),
            entry("0000000c", "0000000b", role="user", preview="Other idea"),
            entry("0000000d", "0000000b", "branch_summary", preview="Tried the other idea"),
            entry("0000000e", "0000000d", role="user", preview="Go on"),
            entry("0000000f", "0000000e", "label"),
        ],
    }
    lines, ids, leaf = editor.lua("return { require('pi.tree_lines').layout(...) }", tree)
    assert lines == [
        "session demo   leaf 0000000f",
        "",
        "● 0000000a user: Fix the test  [start]",
        "● 0000000b assistant: Looking",
        "  ○ 0000000c user: Other idea",
        "  ● 0000000d branch_summary: Tried the other idea",
        "  ◉ 0000000e user: Go on",
    ]
    # Line numbers 1 and 2 (the header) have no entry; Lua's holes arrive as None.
    assert ids == [None, None, "0000000a", "0000000b", "0000000c", "0000000d", "0000000e"]
    assert leaf == 7, "the leaf mark goes to the last shown entry when the leaf is a label entry"


def test_an_empty_session_says_so(editor):
    tree = {
        "sessionId": "s2",
        "leafId": None,
        "activePath": [],
        "roots": [],
        "children": {},
        "entries": [],
    }
    lines = editor.lua("return (require('pi.tree_lines').layout(...))", tree)
    assert lines[-1] == "(the session is empty)"


def test_entries_a_context_edit_changed_say_so(editor):
    removed = entry("0000000a", None, role="user", preview="my key is sk-1")
    removed["contextEdit"] = "removed"
    replaced = entry("0000000b", "0000000a", role="assistant", preview="short")
    replaced["contextEdit"] = "replaced"
    edit = entry("0000000c", "0000000b", "context_edit", preview="removed from context: my key…")
    tree = {
        "sessionId": "s1",
        "name": None,
        "leafId": "0000000c",
        "activePath": ["0000000a", "0000000b", "0000000c"],
        "roots": ["0000000a"],
        "children": {"0000000a": ["0000000b"], "0000000b": ["0000000c"]},
        "entries": [removed, replaced, edit],
    }
    lines, _ids, _leaf = editor.lua("return { require('pi.tree_lines').layout(...) }", tree)
    assert lines[2:] == [
        "● 0000000a user (removed from context): my key is sk-1",
        "● 0000000b assistant (replaced in context): short",
        "◉ 0000000c context_edit: removed from context: my key…",
    ]
