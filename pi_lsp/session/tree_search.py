"""Search in the session tree: entries whose text, label or name holds a query.

An entry matches when the query (case-insensitive) is part of one of its texts: a message's text
blocks, tool-call names and arguments, a shell command and its output, a summary, a custom
message, a session name, a label entry's text — or of the label the entry carries now. Newest
first, so the recent work a user looks for comes up before the session's early days.

The texts are looked for in the session's search index (``search_index.py``), built at the first
search and extended with the entries appended since at each next one; labels change without new
entries of their own, so the labels an entry carries now are compared here, a handful of strings.
"""

from __future__ import annotations

import heapq
import itertools
import operator
import weakref

import attrs

from pi_lsp.session.search_index import SearchIndex, folded
from pi_lsp.session.session import Session
from pi_lsp.session.stored_entry import StoredEntry


@attrs.frozen
class SearchHits:
    total: int
    """How many entries match (``entries`` may hold only the newest of them)."""
    entries: list[StoredEntry]


_indexes: weakref.WeakKeyDictionary[Session, SearchIndex] = weakref.WeakKeyDictionary()
"""Each open session's search index, dropped with the session (kept beside it rather than in it:
only a search needs it, and most sessions are never searched)."""


def search_tree(session: Session, query: str, limit: int) -> SearchHits:
    """The entries matching ``query`` (not empty), newest first, at most ``limit`` of them."""
    needle = query.casefold()
    if not needle:
        raise ValueError("a tree search needs a query")
    index = _indexes.get(session)
    if index is None:
        index = _indexes[session] = SearchIndex()
    entries = session.entries
    index.update(entries)
    text_needle = folded(query)
    total, newest = index.matching(text_needle, limit)
    labelled = [
        position
        for position in _labelled_positions(session, needle)
        if not index.holds(position, text_needle)
    ]
    if labelled:
        total += len(labelled)
        newest = list(
            itertools.islice(heapq.merge(newest, reversed(labelled), reverse=True), limit)
        )
    return SearchHits(total, [entries[position] for position in newest])


_id_of = operator.attrgetter("id")


def _labelled_positions(session: Session, needle: str) -> list[int]:
    """The positions of the entries whose current label holds ``needle`` (folded), in order."""
    targets = {target for target, label in session.labels.items() if needle in label.casefold()}
    if not targets:
        return []
    holds_label = map(targets.__contains__, map(_id_of, session.entries))
    return list(itertools.compress(itertools.count(), holds_label))
