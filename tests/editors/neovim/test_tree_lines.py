"""The tree layout and the windowed model on their own (no server): indentation only where the
tree branches, the marks, labels, label entries hidden with their children shown in their place,
"⋯" and "▸" lines for what is not fetched, and tree_changed events patched in or resynced."""

from __future__ import annotations

LAYOUT = (
    "local window, collapsed = ...; local model = require('pi.tree_window').new(window); "
    "return { require('pi.tree_lines').layout(model, collapsed) }"
)


def row(
    entry_id: str,
    parent: str | None,
    kind: str = "message",
    role: str | None = None,
    preview: str = "",
    label: str | None = None,
    **flags,
) -> dict:
    value = {
        "id": entry_id,
        "parentId": parent,
        "type": kind,
        "preview": preview,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "childCount": 1,
        "branchStart": False,
        "active": True,
        "expandable": False,
    }
    if role:
        value["role"] = role
    if label:
        value["label"] = label
    return value | flags


def level(parent: str | None, rows: list[dict], total: int | None = None, offset: int = 0):
    return {"parentId": parent, "total": len(rows) if total is None else total}, offset, rows


def window(levels, leaf: str, name: str | None = "demo", version: int = 3) -> dict:
    return {
        "sessionId": "s1",
        "version": version,
        "leafId": leaf,
        "name": name,
        "targetId": leaf,
        "levels": [head | {"offset": offset, "rows": rows} for head, offset, rows in levels],
    }


def branching_window() -> dict:
    return window(
        [
            level(
                None,
                [
                    row("0000000a", None, role="user", preview="Fix   the\ntest", label="start"),
                    row("0000000b", "0000000a", role="assistant", preview="Looking", childCount=2)
                    | {"expandable": True},
                ],
            ),
            level(
                "0000000b",
                [
                    row("0000000c", "0000000b", role="user", preview="Other idea", childCount=0)
                    | {"branchStart": True, "active": False},
                    row("0000000d", "0000000b", "branch_summary", preview="Tried the other idea")
                    | {"branchStart": True, "expandable": True},
                ],
            ),
            level(
                "0000000d",
                [
                    row("0000000e", "0000000d", role="user", preview="Go on"),
                    row("0000000f", "0000000e", "label", childCount=0),
                ],
            ),
        ],
        leaf="0000000f",
    )


def test_branches_are_indented_and_label_entries_hidden(editor):
    lines, actions, leaf = editor.lua(LAYOUT, branching_window(), {})
    assert lines == [
        "session demo   leaf 0000000f",
        "",
        "● 0000000a user: Fix the test  [start]",
        "● 0000000b assistant: Looking",
        "  ○ 0000000c user: Other idea",
        "  ● 0000000d branch_summary: Tried the other idea",
        "  ◉ 0000000e user: Go on",
    ]
    # Lines 1 and 2 (the header) have no entry; Lua's holes arrive as None.
    assert [action and action.get("id") for action in actions] == [
        None,
        None,
        "0000000a",
        "0000000b",
        "0000000c",
        "0000000d",
        "0000000e",
    ]
    assert leaf == 7, "the leaf mark goes to the last shown entry when the leaf is a label entry"


def test_what_is_not_fetched_shows_as_lines_to_load(editor):
    big = window(
        [
            level(
                None,
                [row("b", "a", preview="branch point", childCount=2) | {"expandable": True}],
                total=98_210,
                offset=98_209,
            ),
            level(
                "b",
                [row("x", "b", preview="on the path") | {"branchStart": True, "expandable": True}],
                total=2,
                offset=1,
            ),
            level(
                "x", [row("y", "x", preview="the leaf", childCount=0)], total=5_000, offset=4_999
            ),
        ],
        leaf="y",
    )
    lines, actions, _leaf = editor.lua(LAYOUT, big, {})
    assert lines[2:] == [
        "⋯ 98,209 earlier entries",
        "● b message: branch point",
        "  ⋯ 1 other branch",
        "  ● x message: on the path",
        "  ⋯ 4,999 earlier entries",
        "  ◉ y message: the leaf",
    ]
    assert actions[2] == {"more": True, "direction": "before"}
    assert actions[4] == {"more": True, "parent": "b", "direction": "before"}
    # Folded by the user: the rows under x give way to a line that expands them again.
    lines, actions = editor.lua(LAYOUT, big, {"x": True})[:2]
    assert lines[-1] == "    ▸ the rest of this branch" and actions[-1] == {"expand": "x"}


def test_an_empty_session_says_so(editor):
    lines = editor.lua(LAYOUT, window([], leaf=None, name=None), {})[0]
    assert lines[-1] == "(the session is empty)"


PATCH = (
    "local window, events = ...; local tree_window = require('pi.tree_window'); "
    "local model = tree_window.new(window); local outcomes = {}; "
    "for _, event in ipairs(events) do "
    "table.insert(outcomes, tree_window.apply_change(model, event)) end; "
    "return { outcomes, (require('pi.tree_lines').layout(model)) }"
)


def changed(version: int, entries: list[dict], leaf: str, labels: dict | None = None) -> dict:
    return {
        "version": version,
        "entries": entries,
        "leafId": leaf,
        "labels": labels or {"x": None},
        "name": "demo",
    }


def test_a_turn_is_patched_in_and_a_gap_or_a_new_branch_asks_for_a_resync(editor):
    turn = [
        row("0000000g", "0000000f", role="user", preview="Next"),
        row("0000000h", "0000000g", role="assistant", preview="Done", childCount=0),
    ]
    outcomes, lines = editor.lua(
        PATCH,
        branching_window(),
        [changed(4, turn, "0000000h", {"0000000e": "here"}), changed(4, [], "0000000h")],
    )
    assert outcomes == ["patched", "stale"]
    assert lines[-3:] == [
        "  ● 0000000e user: Go on  [here]",
        "  ● 0000000g user: Next",
        "  ◉ 0000000h assistant: Done",
    ]
    missed = [changed(5, turn, "0000000h")]
    assert editor.lua(PATCH, branching_window(), missed)[0] == ["resync"]
    branch = [row("0000000z", "0000000a", role="user", preview="New try") | {"branchStart": True}]
    assert editor.lua(PATCH, branching_window(), [changed(4, branch, "0000000z")])[0] == ["resync"]
    moved = [changed(4, [], "0000000c")]
    assert editor.lua(PATCH, branching_window(), moved)[0] == ["resync"]


def test_entries_a_context_edit_changed_say_so(editor):
    removed = row("0000000a", None, role="user", preview="my key is sk-1", contextEdit="removed")
    replaced = row(
        "0000000b", "0000000a", role="assistant", preview="short", contextEdit="replaced"
    )
    edit = row(
        "0000000c",
        "0000000b",
        "context_edit",
        preview="removed from context: my key…",
        childCount=0,
    )
    lines, _actions, _leaf = editor.lua(
        LAYOUT, window([level(None, [removed, replaced, edit])], leaf="0000000c", name=None), {}
    )
    assert lines[2:] == [
        "● 0000000a user (removed from context): my key is sk-1",
        "● 0000000b assistant (replaced in context): short",
        "◉ 0000000c context_edit: removed from context: my key…",
    ]


def test_a_context_edit_event_marks_its_target_and_a_restore_clears_the_mark(editor):
    edit = row("0000000g", "0000000f", "context_edit", preview="removed from context: Go on")
    restore = row("0000000h", "0000000g", "context_edit", preview="restored in context: Go on")
    first = changed(4, [edit], "0000000g") | {"contextEdits": {"0000000e": "removed"}}
    second = changed(5, [restore], "0000000h") | {"contextEdits": {"0000000e": None}}
    outcomes, lines = editor.lua(PATCH, branching_window(), [first])
    assert outcomes == ["patched"]
    assert any("0000000e user (removed from context): Go on" in line for line in lines), lines
    outcomes, lines = editor.lua(PATCH, branching_window(), [first, second])
    assert outcomes == ["patched", "patched"]
    assert any(line.endswith("0000000e user: Go on") for line in lines), lines
