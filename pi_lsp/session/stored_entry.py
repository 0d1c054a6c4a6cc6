"""One line of a session file, indexed cheaply and decoded lazily.

Opening a 100k-entry session must not decode 100 MB of JSON: only ``type``, ``id``, ``parentId`` and
the role of a message are read when the file is indexed (msgspec skips everything else at C speed).
The full body is decoded the first time any other field is asked for. A ``StoredEntry`` is a
read-only ``Mapping``, so the pure algorithms that take entry dicts work on it unchanged.

The original line bytes are kept, so an entry is written back byte for byte, whatever it holds
(entry types from newer pi versions, unknown fields, numbers JavaScript would print differently).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import msgspec

from pi_lsp.session import js_json


class _Missing:
    """Marks an indexed field that is absent from the line (as opposed to ``null``)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _MessageRole(msgspec.Struct):
    role: Any = MISSING


class _IndexedMessageFields(msgspec.Struct):
    type: Any = MISSING
    id: Any = MISSING
    parentId: Any = MISSING
    timestamp: Any = MISSING
    message: _MessageRole | None = None


_index_decoder = msgspec.json.Decoder(_IndexedMessageFields)
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
        return json.loads(bytes(raw).decode("utf-8", errors="replace"), parse_constant=_reject_constant)


class StoredEntry(Mapping):
    """A session line: indexed fields up front, the rest decoded on first use."""

    __slots__ = ("type", "id", "parent_id", "timestamp", "role", "raw", "_body")

    def __init__(
        self,
        raw: bytes | memoryview,
        entry_type: Any,
        entry_id: Any,
        parent_id: Any,
        timestamp: Any,
        role: Any,
        body: dict | None = None,
    ) -> None:
        self.raw = raw
        self.type = entry_type
        self.id = entry_id
        self.parent_id = parent_id
        self.timestamp = timestamp
        self.role = role
        self._body = body

    @classmethod
    def parse(cls, raw: bytes | memoryview) -> StoredEntry | None:
        """Index one line; ``None`` when it is not a JSON object (pi skips such lines)."""
        try:
            fields = _index_decoder.decode(raw)
            role = MISSING if fields.message is None else fields.message.role
            return cls(raw, fields.type, fields.id, fields.parentId, fields.timestamp, role)
        except msgspec.ValidationError:
            pass  # valid JSON of an unexpected shape: decode it fully below
        except msgspec.DecodeError:
            pass
        try:
            body = decode_json_line(raw)
        except ValueError:
            return None
        if not isinstance(body, dict):
            return None
        return cls.from_dict(body, raw)

    @classmethod
    def from_dict(cls, body: dict, raw: bytes | None = None) -> StoredEntry:
        """Wrap an entry built in memory (``raw`` defaults to its ``JSON.stringify`` text)."""
        if raw is None:
            raw = js_json.dumps_utf8(body)
        message = body.get("message")
        role = message.get("role", MISSING) if isinstance(message, dict) else MISSING
        return cls(
            raw,
            body.get("type", MISSING),
            body.get("id", MISSING),
            body.get("parentId", MISSING),
            body.get("timestamp", MISSING),
            role,
            body,
        )

    @property
    def body(self) -> dict:
        """The whole entry as a dict (decoded on first use, then cached)."""
        if self._body is None:
            self._body = decode_json_line(self.raw)
        return self._body

    @property
    def is_decoded(self) -> bool:
        return self._body is not None

    @property
    def parent(self) -> str | None:
        """The parent id as tree walks use it: missing, null and non-string all mean "no parent"."""
        parent_id = self.parent_id
        return parent_id if isinstance(parent_id, str) and parent_id else None

    def __getitem__(self, key: str) -> Any:
        if self._body is None:
            if key == "type":
                value = self.type
            elif key == "id":
                value = self.id
            elif key == "parentId":
                value = self.parent_id
            elif key == "timestamp":
                value = self.timestamp
            else:
                return self.body[key]
            if value is MISSING:
                raise KeyError(key)
            return value
        return self._body[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.body)

    def __len__(self) -> int:
        return len(self.body)

    def __repr__(self) -> str:
        return f"StoredEntry(type={self.type!r}, id={self.id!r}, parentId={self.parent_id!r})"
