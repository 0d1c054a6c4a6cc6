"""The wire shapes of ``pi_lsp/protocol.py`` as the clients must mirror them, for the drift tests.

Each result and event class becomes its camelCase fields with what a client must know about each:
whether the server may send it as ``null`` (``nullable``), whether it may leave it out
(``optional``), and which other protocol classes its type is made of (``nested``).
"""

from __future__ import annotations

import types
import typing
from typing import Any

import attrs

from pi_lsp import protocol


@attrs.frozen
class WireField:
    name: str
    nullable: bool
    optional: bool
    nested: frozenset[str]


def wire_fields(cls: type) -> dict[str, WireField]:
    hints = typing.get_type_hints(cls)
    fields = {}
    for field in attrs.fields(cls):
        annotation = hints[field.name]
        optional = bool(field.metadata.get(protocol.OMITTED_WHEN_NONE))
        fields[protocol.camel_case(field.name)] = WireField(
            name=protocol.camel_case(field.name),
            nullable=_allows_none(annotation) and not optional,
            optional=optional,
            nested=frozenset(_protocol_classes(annotation)),
        )
    return fields


def result_classes() -> list[type]:
    """Every result class and every class nested in one, each once."""
    seen: dict[str, type] = {}
    pending = list(protocol.RESULT_BY_METHOD.values())
    while pending:
        cls = pending.pop()
        if cls.__name__ in seen:
            continue
        seen[cls.__name__] = cls
        for field in wire_fields(cls).values():
            pending.extend(getattr(protocol, name) for name in field.nested)
    return sorted(seen.values(), key=lambda cls: cls.__name__)


def _allows_none(annotation: Any) -> bool:
    return annotation is type(None) or type(None) in typing.get_args(annotation)


def _protocol_classes(annotation: Any) -> set[str]:
    if attrs.has(annotation) and getattr(protocol, annotation.__name__, None) is annotation:
        return set() if annotation in protocol.EVENT_CLASSES else {annotation.__name__}
    found: set[str] = set()
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        for argument in typing.get_args(annotation):
            found |= _protocol_classes(argument)
    return found
