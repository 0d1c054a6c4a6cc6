"""One line of a session file, indexed cheaply and decoded lazily.

Opening a 100k-entry session must not build 100 MB of Python objects: only ``type``, ``id``,
``parentId`` and a message's ``role`` are read when the file is indexed (msgspec decodes the whole
file into these small structs in one call, skipping everything else at C speed). The full entry
is decoded the first time any other field is asked for. A ``StoredEntry`` behaves as a read-only
``Mapping``, so the pure algorithms that take entry dicts work on it unchanged.

The line's original bytes stay available (a slice of the file's bytes, never copied at load), so
an entry is written back byte for byte whatever it holds: entry types from newer pi versions,
unknown fields, numbers JavaScript would print differently.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from pi_lsp.session import js_json

# A field absent from the line (as opposed to ``null``) reads as JavaScript's ``undefined``.
MISSING: Any = js_json.UNDEFINED

# Fields that hold pi-lsp's own bookkeeping are renamed to keys no session line uses; their type
# (``None``) makes msgspec reject a line that has such a key anyway, which then takes the slow path.
_PRIVATE_FIELDS = {
    "source_": "\u2063pi-lsp source",
    "start_": "\u2063pi-lsp start",
    "end_": "\u2063pi-lsp end",
    "body_": "\u2063pi-lsp body",
}


if TYPE_CHECKING:
    # For type checkers the bookkeeping fields hold anything, and a StoredEntry is the read-only
    # Mapping it is registered as below; at run time the fields stay typed ``None`` (see above).
    _Private = Any
    _ReadOnlyMapping = Mapping[str, Any]
else:
    _Private = None

    class _ReadOnlyMapping:
        __slots__ = ()


class MessageHead(msgspec.Struct, gc=False, frozen=True):
    """What the index reads of a ``message`` field that is an object: its ``role`` (the chat
    view leaves system-role messages out without decoding every message of the path)."""

    role: Any = MISSING


# Any JSON value but an object is kept as it is (a damaged line), so no line leaves the fast path.
_MessageField = MessageHead | list | str | int | float | bool | None


_FIELD_NAMES = {"message_head": "message", **_PRIVATE_FIELDS}


class StoredEntry(msgspec.Struct, _ReadOnlyMapping, gc=False, eq=False, rename=_FIELD_NAMES):
    """A session line: ``type``, ``id``, ``parentId`` and a message's role up front, the rest
    decoded on first use."""

    type: Any = MISSING
    id: Any = MISSING
    parentId: Any = MISSING
    message_head: _MessageField = MISSING
    """The ``message`` field: a ``MessageHead`` when it is an object, else the value itself."""
    source_: _Private = None  # bytes holding the line: the whole file's bytes, or the line's own
    start_: _Private = None
    end_: _Private = None
    body_: _Private = None  # the decoded entry, once something asked for it

    @classmethod
    def from_dict(cls, body: dict, raw: bytes | None = None) -> StoredEntry:
        """Wrap an entry built in memory (``raw`` defaults to its ``JSON.stringify`` bytes)."""
        if raw is None:
            raw = js_json.dumps_utf8(body)
        entry = _indexed_from_body(body)
        entry.attach(raw, 0, len(raw))
        return entry

    def attach(self, source: bytes, start: int, end: int) -> None:
        """Record where the line's bytes are: ``source[start:end]``."""
        self.source_ = source
        self.start_ = start
        self.end_ = end

    @property
    def raw(self) -> bytes:
        """The line exactly as stored, without its newline."""
        source = self.source_
        if self.start_ == 0 and self.end_ == len(source):
            return source
        return source[self.start_ : self.end_]

    @property
    def parent_id(self) -> Any:
        return self.parentId

    @property
    def body(self) -> dict:
        """The whole entry as a dict (decoded on first use, then cached)."""
        body = self.body_
        if body is None:
            body = self.body_ = decode_json_line(memoryview(self.source_)[self.start_ : self.end_])
        return body

    def peek(self) -> dict:
        """The whole entry, decoded for one use without caching it (the cached one if there is
        one): a pass over every entry of a big session holds one decoded entry at a time."""
        if self.body_ is not None:
            return self.body_
        return decode_json_line(memoryview(self.source_)[self.start_ : self.end_])

    @property
    def is_decoded(self) -> bool:
        return self.body_ is not None

    @property
    def role(self) -> Any:
        """The role of a ``message`` entry's message (read when the line was indexed);
        ``MISSING`` otherwise."""
        if self.type != "message":
            return MISSING
        head = self.message_head
        return head.role if type(head) is MessageHead else MISSING

    def get(self, key: str, default: Any = None) -> Any:
        if self.body_ is None:
            if key == "type":
                value = self.type
            elif key == "id":
                value = self.id
            elif key == "parentId":
                value = self.parentId
            else:
                return self.body.get(key, default)
            return default if value is MISSING else value
        return self.body_.get(key, default)

    def __getitem__(self, key: str) -> Any:
        value = self.get(key, MISSING)
        if value is MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return self.get(key, MISSING) is not MISSING  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[str]:
        return iter(self.body)

    def __len__(self) -> int:
        return len(self.body)

    def keys(self):
        return self.body.keys()

    def items(self):
        return self.body.items()

    def values(self):
        return self.body.values()


Mapping.register(StoredEntry)

_index_decoder = msgspec.json.Decoder(StoredEntry)
_body_decoder = msgspec.json.Decoder()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # JavaScript's JSON.parse refuses NaN and Infinity.


def decode_json_line(raw: bytes | memoryview) -> Any:
    """Decode one line the way ``JSON.parse`` would; raises ``ValueError`` if it would throw."""
    try:
        return _body_decoder.decode(raw)
    except msgspec.DecodeError:
        # msgspec refuses a few inputs JavaScript accepts (lone surrogate escapes, invalid UTF-8
        # that Node's decoder replaces); the standard library decides those.
        return json.loads(
            bytes(raw).decode("utf-8", errors="replace"), parse_constant=_reject_constant
        )


def index_lines(data: bytes) -> list[StoredEntry] | None:
    """Index every non-blank line of ``data`` in one
    call; ``None`` if any line needs a closer look."""
    try:
        return _index_decoder.decode_lines(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def index_line(data: bytes, start: int, end: int) -> StoredEntry | None:
    """Index one line, ``data[start:end]``; ``None`` when it is not a JSON object (pi skips it)."""
    view = memoryview(data)[start:end]
    try:
        entry = _index_decoder.decode(view)
    except (msgspec.DecodeError, msgspec.ValidationError):
        try:
            body = decode_json_line(view)
        except ValueError:
            return None
        if not isinstance(body, dict):
            return None
        entry = _indexed_from_body(body)
    entry.attach(data, start, end)
    return entry


def _indexed_from_body(body: dict) -> StoredEntry:
    """An entry indexed from its decoded ``body`` (what msgspec would have read from its line)."""
    message = body.get("message", MISSING)
    if isinstance(message, dict):
        message = MessageHead(message.get("role", MISSING))
    entry = StoredEntry(
        body.get("type", MISSING), body.get("id", MISSING), body.get("parentId", MISSING), message
    )
    entry.body_ = body
    return entry
