"""What of an entry the index holds: its searchable text (capped), role and time.

The texts are the tree search's (``session/search_index.py``): user and assistant text, tool-call
names and arguments, tool results, bash executions, summaries, custom messages, names and labels.
A tool result can be megabytes of output; only its beginning is worth finding again.
"""

from __future__ import annotations

from typing import Any

from pi_lsp.session.search_index import entry_texts
from pi_lsp.session.stored_entry import StoredEntry
from pi_lsp.session.timestamps import iso_to_epoch_ms

TOOL_RESULT_CHARS = 2_000
"""How much of one tool result (or bash output) is indexed."""
ENTRY_CHARS = 20_000
"""How much of any other entry is indexed."""

_CAPPED_ROLES = frozenset({"toolResult", "bashExecution"})


def indexed_text(entry: StoredEntry) -> str:
    """The text ``entry`` is found by, empty when it has none."""
    text = "\n".join(text for text in entry_texts(entry) if text)
    limit = TOOL_RESULT_CHARS if entry_role(entry) in _CAPPED_ROLES else ENTRY_CHARS
    return text[:limit]


def entry_role(entry: StoredEntry) -> str | None:
    role = entry.role if entry.type == "message" else None
    return role if isinstance(role, str) else None


def entry_time_ms(entry: StoredEntry) -> int | None:
    return iso_to_epoch_ms(entry.get("timestamp"))


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
