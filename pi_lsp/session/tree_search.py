"""Search in the session tree: entries whose text, label or name holds a query.

An entry matches when the query (case-insensitive) is part of one of its texts: a message's text
blocks, tool-call names and arguments, a shell command and its output, a summary, a custom
message, a session name, a label entry's text — or of the label the entry carries now. Newest
first, so the recent work a user looks for comes up before the session's early days.

A big session is searched without decoding it: an ASCII query is first looked for in each line's
bytes (as JSON writes it, at C speed), and only the lines that hold it are decoded and checked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from pi_lsp.session.session import Session
from pi_lsp.session.stored_entry import StoredEntry, lines_containing


@attrs.frozen
class SearchHits:
    total: int
    """How many entries match (``entries`` may hold only the newest of them)."""
    entries: list[StoredEntry]


def search_tree(session: Session, query: str, limit: int) -> SearchHits:
    """The entries matching ``query``, newest first, at most ``limit`` of them."""
    needle = query.casefold()
    labelled = {target for target, label in session.labels.items() if needle in label.casefold()}
    entries = session.entries
    candidates = _candidates(entries, query)
    hits: list[StoredEntry] = []
    total = 0
    for entry in reversed(entries):
        matched = entry.id in labelled or (
            (candidates is None or id(entry) in candidates) and _text_matches(entry, needle)
        )
        if matched:
            total += 1
            if len(hits) < limit:
                hits.append(entry)
    return SearchHits(total, hits)


def _candidates(entries: list[StoredEntry], query: str) -> set[int] | None:
    """The ``id()`` of every entry whose line could match (None: every line could)."""
    if not query.isascii():
        return None  # case-folding beyond ASCII: decode and compare
    written = json.dumps(query)[1:-1]  # as the text appears inside a JSON string
    return lines_containing(entries, written.encode(), ignore_case=True)


def _text_matches(entry: StoredEntry, needle: str) -> bool:
    return any(needle in text.casefold() for text in searchable_texts(entry))


def searchable_texts(entry: Mapping[str, Any]) -> Iterator[str]:
    """The texts of an entry a search looks in."""
    entry_type = entry.get("type")
    if entry_type == "message":
        message = entry.get("message")
        if isinstance(message, Mapping):
            yield from _message_texts(message)
    elif entry_type in ("compaction", "branch_summary"):
        yield _text(entry.get("summary"))
    elif entry_type == "custom_message":
        yield from _block_texts(entry.get("content"))
    elif entry_type == "session_info":
        yield _text(entry.get("name"))
    elif entry_type == "label":
        yield _text(entry.get("label"))


def _message_texts(message: Mapping[str, Any]) -> Iterator[str]:
    if message.get("role") == "bashExecution":
        yield _text(message.get("command"))
        yield _text(message.get("output"))
        return
    yield from _block_texts(message.get("content"))
    for block in message.get("content") or []:
        if isinstance(block, Mapping) and block.get("type") == "toolCall":
            yield _text(block.get("name"))
            yield from _strings(block.get("arguments"))


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value (a tool call's arguments)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _block_texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text":
                yield _text(block.get("text"))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
