"""``pi_lsp/protocol.py`` as JSON Schema: the one description every mirror is generated from.

Each attrs class of the protocol becomes a definition under ``$defs`` (titled with its class name,
fields camelCase as on the wire), each named ``Literal`` alias an ``enum`` definition, and the
event union ``PiEvent``. What the schema says about a field is what a client must know:

- ``required``: the server always sends it (results, events), or a request must carry it (params:
  fields without a default);
- ``null`` among its types: the server may send ``null`` (a result field typed ``X | None``), or
  a request may pass ``null`` (params);
- a field with ``metadata=OMITTED`` is left out of the JSON instead of being ``null``: not
  required, and not nullable.

Descriptions come from the class docstrings and the attribute docstrings under each field, with
reStructuredText's double backquotes turned into Markdown's single ones.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import types
import typing
from typing import Any

import attrs

from pi_lsp import protocol

JsonSchema = dict[str, Any]


def protocol_schema() -> JsonSchema:
    """The whole protocol: every definition, in the order ``protocol.py`` declares them."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "pi-lsp protocol",
        "$defs": ProtocolSchema().definitions(),
    }


def definition_name(reference: str) -> str:
    return reference.removeprefix("#/$defs/")


class ProtocolSchema:
    """Builds the ``$defs`` of ``protocol.py`` (one instance per build: it keeps the docstrings)."""

    def __init__(self) -> None:
        self.docs = _attribute_docstrings()
        self.aliases = _literal_aliases()
        self.params_classes = _reachable(
            [*protocol.PARAMS_BY_METHOD.values(), *protocol.NOTIFICATION_PARAMS.values()]
        )
        self.pi_records: dict[str, JsonSchema] = {}

    def definitions(self) -> dict[str, JsonSchema]:
        definitions: dict[str, JsonSchema] = {}
        for name, values in self.aliases.items():
            definitions[name] = {"title": name, "type": "string", "enum": list(values)}
            if name in self.docs.aliases:
                definitions[name]["description"] = self.docs.aliases[name]
        for cls in _protocol_classes():
            definitions[cls.__name__] = self.class_schema(cls)
        definitions["PiEvent"] = {
            "title": "PiEvent",
            "description": "Any event carried by ``pi/event``, told apart by its ``type``.",
            "anyOf": [{"$ref": f"#/$defs/{cls.__name__}"} for cls in protocol.EVENT_CLASSES],
        }
        definitions.update(self.pi_records)
        return {name: _markdown_quotes(schema) for name, schema in definitions.items()}

    def class_schema(self, cls: type) -> JsonSchema:
        hints = typing.get_type_hints(cls, include_extras=True)
        properties: dict[str, JsonSchema] = {}
        required: list[str] = []
        event_type = getattr(cls, "TYPE", None)
        if event_type is not None:
            properties["type"] = {"const": event_type}
            required.append("type")
        for field in attrs.fields(cls):
            name = protocol.camel_case(field.name)
            omitted = bool(field.metadata.get(protocol.OMITTED_WHEN_NONE))
            annotation = hints[field.name]
            if omitted:
                annotation = _without_none(annotation)
            field_schema = self.type_schema(annotation)
            description = self.docs.fields.get((cls.__name__, field.name))
            if description:
                field_schema = {**field_schema, "description": description}
            properties[name] = field_schema
            has_default = field.default is not attrs.NOTHING
            if not omitted and not (cls in self.params_classes and has_default):
                required.append(name)
        schema: JsonSchema = {"title": cls.__name__, "type": "object"}
        if cls.__doc__ and cls.__name__ in self.docs.classes:
            schema["description"] = self.docs.classes[cls.__name__]
        schema |= {"properties": properties, "required": required, "additionalProperties": False}
        return schema

    def type_schema(self, annotation: Any) -> JsonSchema:
        for name, values in self.aliases.items():
            if _literal_values(annotation) == values:
                return {"$ref": f"#/$defs/{name}"}
        origin = typing.get_origin(annotation)
        arguments = typing.get_args(annotation)
        if origin is typing.Annotated:
            return self.annotated_schema(arguments)
        if annotation is protocol.ProgressToken:
            return {"type": ["string", "integer"]}
        if isinstance(annotation, types.UnionType) or origin is typing.Union:
            return self.union_schema(arguments)
        if origin is typing.Literal:
            return {"type": "string", "enum": list(arguments)}
        if origin is list:
            return {"type": "array", "items": self.type_schema(arguments[0])}
        if origin is dict:
            if arguments[1] is Any:
                return {"type": "object", "tsType": "Record<string, unknown>"}
            return {"type": "object", "additionalProperties": self.type_schema(arguments[1])}
        if attrs.has(annotation):
            return {"$ref": f"#/$defs/{annotation.__name__}"}
        return _scalar_schema(annotation)

    def annotated_schema(self, arguments: tuple[Any, ...]) -> JsonSchema:
        record = next(item for item in arguments[1:] if isinstance(item, protocol.PiRecord))
        self.pi_records[record.name] = {"title": record.name, **record.schema}
        return {"$ref": f"#/$defs/{record.name}"}

    def union_schema(self, arguments: tuple[Any, ...]) -> JsonSchema:
        members = [argument for argument in arguments if argument is not type(None)]
        if set(members) == set(protocol.EVENT_CLASSES):
            schema: JsonSchema = {"$ref": "#/$defs/PiEvent"}
        elif len(members) == 1:
            schema = self.type_schema(members[0])
        else:
            schema = {"anyOf": [self.type_schema(member) for member in members]}
        if len(members) == len(arguments):
            return schema
        if set(schema) == {"type"} and isinstance(schema["type"], str):
            return {"type": [schema["type"], "null"]}
        return {"anyOf": [schema, {"type": "null"}]}


SCALARS: dict[Any, JsonSchema] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    Any: {},
}


def _scalar_schema(annotation: Any) -> JsonSchema:
    try:
        return dict(SCALARS[annotation])
    except KeyError:
        unknown = f"protocol.py uses a type the generator cannot map: {annotation!r}"
        raise TypeError(unknown) from None


def _without_none(annotation: Any) -> Any:
    members = [argument for argument in typing.get_args(annotation) if argument is not type(None)]
    if not members or len(members) == len(typing.get_args(annotation)):
        return annotation
    return members[0] if len(members) == 1 else typing.Union[tuple(members)]  # noqa: UP007


def _literal_values(annotation: Any) -> tuple[Any, ...] | None:
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    return None


def _literal_aliases() -> dict[str, tuple[Any, ...]]:
    """The module-level ``Name = Literal[...]`` aliases: named enums in every mirror."""
    aliases = {}
    for name, value in vars(protocol).items():
        values = _literal_values(value)
        if values is not None:
            aliases[name] = values
    return aliases


def _protocol_classes() -> list[type]:
    """Every attrs class of ``protocol.py`` a message is made of, in declaration order."""
    used = _reachable(
        [
            *protocol.PARAMS_BY_METHOD.values(),
            *protocol.NOTIFICATION_PARAMS.values(),
            *protocol.RESULT_BY_METHOD.values(),
            *protocol.SERVER_NOTIFICATION_PARAMS.values(),
            *protocol.SERVER_REQUEST_PARAMS.values(),
            *protocol.SERVER_REQUEST_RESULTS.values(),
        ]
    )
    declared = [value for value in vars(protocol).values() if attrs.has(value)]
    return [cls for cls in declared if cls in used]


def _reachable(roots: list[type]) -> set[type]:
    seen: set[type] = set()
    pending = list(roots)
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for hint in typing.get_type_hints(cls).values():
            pending.extend(_classes_in(hint))
    return seen


def _classes_in(annotation: Any) -> list[type]:
    if attrs.has(annotation):
        return [annotation]
    found: list[type] = []
    for argument in typing.get_args(annotation):
        found.extend(_classes_in(argument))
    return found


@attrs.frozen
class Docstrings:
    classes: dict[str, str]
    fields: dict[tuple[str, str], str]
    aliases: dict[str, str]


def _attribute_docstrings() -> Docstrings:
    """The docstrings of ``protocol.py``: of classes, of the fields under them, of aliases."""
    tree = ast.parse(inspect.getsource(protocol))
    classes: dict[str, str] = {}
    fields: dict[tuple[str, str], str] = {}
    aliases: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            docstring = ast.get_docstring(node)
            if docstring:
                classes[node.name] = _one_paragraph(docstring)
            fields.update(
                ((node.name, name), text) for name, text in _documented_names(node.body).items()
            )
    aliases.update(_documented_names(tree.body))
    return Docstrings(classes, fields, aliases)


def _documented_names(body: list[ast.stmt]) -> dict[str, str]:
    """``name = …`` or ``name: …`` statements followed by a string: that string, by name."""
    documented = {}
    for statement, following in itertools.pairwise(body):
        target = None
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            target = statement.target.id
        elif isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            target = statement.targets[0].id
        if (
            target
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            documented[target] = _one_paragraph(inspect.cleandoc(following.value.value))
    return documented


def _one_paragraph(text: str) -> str:
    return " ".join(text.split())


def _markdown_quotes(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            key: re.sub(r"``(.+?)``", r"`\1`", value)
            if key == "description" and isinstance(value, str)
            else _markdown_quotes(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [_markdown_quotes(item) for item in schema]
    return schema


if __name__ == "__main__":
    import json

    print(json.dumps(protocol_schema(), indent=2))
