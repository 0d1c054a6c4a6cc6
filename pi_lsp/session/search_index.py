"""The text a tree search looks in, case-folded and kept in memory, so a big session is searched
in milliseconds instead of decoding its lines on every keystroke.

Each entry's searchable texts (``searchable_texts``) are case-folded (``str.casefold``, what the
search compares) and encoded as UTF-8; the texts of an entry are separated by ``TEXT_SEPARATOR``
and each entry ends with ``ENTRY_END``. Neither byte occurs in UTF-8, so a query (encoded the
same way) is found in the index exactly when it is part of one of an entry's texts: it can
neither start in one text and end in the next nor match a separator. Lone surrogates, which a
JSON line may hold, are encoded with ``surrogatepass`` on both sides, so they match as code points.

The index is built on the first search (decoding each line once, only the fields a search reads)
and extended with the entries appended since at the next one. Entries are grouped in chunks of
``CHUNK_ENTRIES``; only the last, growing chunk is rebuilt when entries are appended. A chunk's
bytes are searched with StringZilla's SIMD substring search (several GB/s, where ``bytes.find``
manages about one on the same text; ``bytes.find`` does it if StringZilla cannot be loaded).
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import msgspec

try:
    import stringzilla
except ImportError:  # a compiled module that failed to load: search on, slower (``bytes.find``)
    stringzilla = None

from pi_lsp.session.message_types import MessageRecord
from pi_lsp.session.store import paused_garbage_collection
from pi_lsp.session.stored_entry import StoredEntry

TEXT_SEPARATOR = b"\xfe"
ENTRY_END = b"\xff"
CHUNK_ENTRIES = 4096


class _Block(msgspec.Struct):
    """What a search reads of a content block (a thinking block's text is skipped unread)."""

    type: Any = None
    text: Any = None
    name: Any = None
    arguments: Any = None


class _Message(msgspec.Struct):
    role: Any = None
    content: list[_Block] | str | None = None
    command: Any = None
    output: Any = None


class _SearchedFields(msgspec.Struct):
    """The fields of an entry a search reads. A line of another shape (a block that is not an
    object, content that is a number…) fails to decode into it and is decoded whole instead."""

    type: Any = None
    message: _Message | None = None
    summary: Any = None
    content: list[_Block] | str | None = None
    name: Any = None
    label: Any = None


_fields_decoder = msgspec.json.Decoder(_SearchedFields)


def searchable_texts(entry: Mapping[str, Any]) -> Iterator[str]:
    """The texts of an entry a search looks in (``entry`` a decoded entry or a StoredEntry)."""
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


def _message_texts(message: MessageRecord) -> Iterator[str]:
    if message.get("role") == "bashExecution":
        yield _text(message.get("command"))
        yield _text(message.get("output"))
        return
    content = message.get("content")
    yield from _block_texts(content)
    if isinstance(content, list):
        for block in content:
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


def _decoded_texts(fields: _SearchedFields) -> list[str]:
    """``searchable_texts`` of an entry decoded into ``_SearchedFields``."""
    entry_type = fields.type
    if entry_type == "message":
        message = fields.message
        if message is None:
            return []
        if message.role == "bashExecution":
            return [_text(message.command), _text(message.output)]
        return _decoded_block_texts(message.content, with_tool_calls=True)
    if entry_type in ("compaction", "branch_summary"):
        return [_text(fields.summary)]
    if entry_type == "custom_message":
        return _decoded_block_texts(fields.content, with_tool_calls=False)
    if entry_type == "session_info":
        return [_text(fields.name)]
    if entry_type == "label":
        return [_text(fields.label)]
    return []


def _decoded_block_texts(content: list[_Block] | str | None, *, with_tool_calls: bool) -> list[str]:
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for block in content or ():
        kind = block.type
        if kind == "text":
            texts.append(_text(block.text))
        elif kind == "toolCall" and with_tool_calls:
            texts.append(_text(block.name))
            _collect_strings(block.arguments, texts)
    return texts


def _collect_strings(value: Any, texts: list[str]) -> None:
    """Add every string in a decoded JSON value to ``texts`` (``_strings`` without generators)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


def entry_texts(entry: StoredEntry) -> list[str]:
    """The searchable texts of ``entry``, decoding only what a search reads (nothing is cached
    on the entry: indexing a big session must not keep every line decoded)."""
    if entry.is_decoded or entry.source_ is None:
        return list(searchable_texts(entry.peek()))
    try:
        fields = _fields_decoder.decode(memoryview(entry.source_)[entry.start_ : entry.end_])
    except msgspec.DecodeError:  # another shape, or a line only JSON.parse accepts
        return list(searchable_texts(entry.peek()))
    return _decoded_texts(fields)


def folded(text: str) -> bytes:
    """``text`` as the index holds it (and a query is looked for): case-folded UTF-8."""
    return text.casefold().encode("utf-8", "surrogatepass")


# Placeholders for the separators while a chunk is still text: one case-folding and one encoding
# for the whole chunk cost far less than one per entry. No text may hold them (checked).
_TEXT_PLACEHOLDER = "\x00"
_END_PLACEHOLDER = "\x01"
_SEPARATORS = bytes.maketrans(b"\x00\x01", TEXT_SEPARATOR + ENTRY_END)


def _indexed_chunk(entry_texts: Sequence[list[str]]) -> bytes:
    """The index of consecutive entries, given the searchable texts of each."""
    joined = _END_PLACEHOLDER.join(map(_TEXT_PLACEHOLDER.join, entry_texts)) + _END_PLACEHOLDER
    data = folded(joined)
    found = searchable(data)
    separators = sum(len(texts) - 1 for texts in entry_texts if texts)
    if found.count(b"\x00") == separators and found.count(b"\x01") == len(entry_texts):
        return data.translate(_SEPARATORS)
    return b"".join(TEXT_SEPARATOR.join(map(folded, texts)) + ENTRY_END for texts in entry_texts)


def searchable(data: bytes) -> Any:
    """``data`` with the fastest substring search at hand: a StringZilla view of it (which keeps
    the bytes alive), else the bytes themselves; both ``find`` and ``count`` as ``bytes`` do."""
    return data if stringzilla is None else stringzilla.Str(data)


class _Chunk:
    """The index of ``CHUNK_ENTRIES`` consecutive entries (fewer in the last chunk)."""

    __slots__ = ("_ends", "first", "text")

    def __init__(self, first: int, entry_texts: Sequence[list[str]]) -> None:
        self.first = first
        """The position in the session's entries of this chunk's first entry."""
        self.text = searchable(_indexed_chunk(entry_texts))
        self._ends: array | None = None

    @property
    def ends(self) -> array:
        """The offset of each entry's ``ENTRY_END``, in order (found when first needed: most
        searches take their newest matches from one or two chunks)."""
        if self._ends is None:
            ends = self._ends = array("q")
            find = self.text.find
            end = find(ENTRY_END)
            while end != -1:
                ends.append(end)
                end = find(ENTRY_END, end + 1)
        return self._ends

    def matches(self, needle: bytes) -> list[int]:
        """The offset of ``ENTRY_END`` of each entry holding ``needle``, in order."""
        find = self.text.find
        found: list[int] = []
        offset = find(needle)
        while offset != -1:
            end = find(ENTRY_END, offset)
            found.append(end)
            offset = find(needle, end)
        return found

    def position(self, end: int) -> int:
        """The session position of the entry whose ``ENTRY_END`` is at ``end``."""
        return self.first + bisect.bisect_left(self.ends, end)

    def holds(self, position: int, needle: bytes) -> bool:
        """Whether the entry at ``position`` (in this chunk) holds ``needle``."""
        index = position - self.first
        start = self.ends[index - 1] + 1 if index else 0
        return self.text.find(needle, start, self.ends[index]) != -1


class SearchIndex:
    """The folded texts of a session's entries, in file order, extended as the session grows."""

    def __init__(self) -> None:
        self._entries: list[StoredEntry] | None = None
        self._reset()

    def _reset(self) -> None:
        self._chunks: list[_Chunk] = []
        self._open_texts: list[list[str]] = []
        """The texts of the last chunk's entries while it has fewer than ``CHUNK_ENTRIES``."""
        self._last_indexed: StoredEntry | None = None
        self._count = 0

    def update(self, entries: list[StoredEntry]) -> None:
        """Index the entries appended since the last call; start over on another list."""
        if (
            entries is not self._entries
            or len(entries) < self._count
            or (self._count and entries[self._count - 1] is not self._last_indexed)
        ):
            self._reset()
            self._entries = entries
        if len(entries) == self._count:
            return
        pending = self._open_texts
        if pending:
            self._chunks.pop()  # rebuilt below with the new entries
        with paused_garbage_collection():  # the decoded fields are many objects, none cyclic
            for position in range(self._count, len(entries)):
                pending.append(entry_texts(entries[position]))
                if len(pending) == CHUNK_ENTRIES:
                    self._chunks.append(_Chunk(position + 1 - CHUNK_ENTRIES, pending))
                    pending = self._open_texts = []
        if pending:
            self._chunks.append(_Chunk(len(entries) - len(pending), pending))
        self._count = len(entries)
        self._last_indexed = entries[-1]

    def matching(self, needle: bytes, newest: int) -> tuple[int, list[int]]:
        """How many entries hold ``needle`` (folded, not empty), and the positions of the
        ``newest`` last of them, newest first."""
        total = 0
        positions: list[int] = []
        for chunk in reversed(self._chunks):
            ends = chunk.matches(needle)
            total += len(ends)
            wanted = newest - len(positions)
            if wanted > 0:
                positions.extend(chunk.position(end) for end in reversed(ends[-wanted:]))
        return total, positions

    def holds(self, position: int, needle: bytes) -> bool:
        """Whether the entry at ``position`` holds ``needle``."""
        chunk = self._chunks[position // CHUNK_ENTRIES]
        return chunk.holds(position, needle)
