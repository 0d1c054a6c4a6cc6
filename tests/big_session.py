"""A big session for the editor tests, written the way pi writes one (a header, then one JSON entry
per line, each with its 8-hex id and parent) and fast: 100k entries take about a second.

The shape the windowed views are tested on: a long conversation from the root to the leaf (the
last line, so pi's leaf), a side branch of three entries off entry 16 (a collapsed branch), a
label entry on entry 32 (something for the tree search to find), a name, and a compaction 50
entries before the leaf (as a long pi session has), so a turn sends a small context.
"""

from __future__ import annotations

import json
from pathlib import Path

BRANCH_POINT = f"{16:08x}"
BRANCH_IDS = ("b0000001", "b0000002", "b0000003")
BRANCH_TEXT = "the other approach"
LABELLED = f"{32:08x}"
LABEL = "Parser milestone"
LABEL_ENTRY = "1abe1000"
NAME = "Big session"
COMPACTION = "c0000001"


def entry_id(index: int) -> str:
    return f"{index:08x}"


def message_text(index: int) -> str:
    return f"message {index}"


def _timestamp(index: int) -> str:
    seconds = index % 86_400
    return f"2026-01-01T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000Z"


def _message(index: int, parent: str | None, text: str, entry: str | None = None) -> str:
    role = "user" if index % 2 == 0 else "assistant"
    message: dict = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        message |= {"api": "openai-completions", "provider": "openai", "model": "scripted"}
        message |= {"stopReason": "stop"}
    message["timestamp"] = 1_767_225_600_000 + index * 1000
    line = {"type": "message", "id": entry or entry_id(index), "parentId": parent}
    return json.dumps(line | {"timestamp": _timestamp(index), "message": message})


def write_big_session(path: Path, cwd: Path, entries: int) -> str:
    """Writes the session and returns its leaf's id."""
    header = {"type": "session", "version": 3, "id": f"big-{entries}", "timestamp": _timestamp(0)}
    lines = [json.dumps(header | {"cwd": str(cwd)})]
    info = {"type": "session_info", "id": "5e551000", "parentId": None}
    lines.append(json.dumps(info | {"timestamp": _timestamp(0), "name": NAME}))
    parent: str | None = "5e551000"
    for index in range(entries):
        lines.append(_message(index, parent, message_text(index)))
        parent = entry_id(index)
        if index == 16:
            branch_parent = parent
            for offset, branch_id in enumerate(BRANCH_IDS):
                text = BRANCH_TEXT if offset == 0 else f"{BRANCH_TEXT}, step {offset}"
                lines.append(_message(17 + offset, branch_parent, text, branch_id))
                branch_parent = branch_id
        if index == entries - 50:
            compaction = {"type": "compaction", "id": COMPACTION, "parentId": parent}
            compaction |= {"timestamp": _timestamp(index), "summary": "## Goal\nKeep going."}
            compaction |= {"firstKeptEntryId": entry_id(entries - 60), "tokensBefore": 170_000}
            lines.append(json.dumps(compaction))
            parent = COMPACTION
        if index == 40:
            label = {"type": "label", "id": LABEL_ENTRY, "parentId": parent}
            lines.append(
                json.dumps(
                    label | {"timestamp": _timestamp(40), "targetId": LABELLED, "label": LABEL}
                )
            )
            parent = LABEL_ENTRY
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return entry_id(entries - 1)
