"""The generated blocks of ``docs/protocol.md``: params, result and event tables, and the types.

The document is hand-written prose with generated blocks in it, each between
``<!-- BEGIN GENERATED <name> … -->`` and ``<!-- END GENERATED <name> -->``: one per method (its
params and result tables), ``pi/event`` (the event table), and ``types`` (every shape the others
refer to). ``fill_blocks`` rewrites their contents and fails when a block is missing, so a new
method cannot go undocumented.
"""

from __future__ import annotations

import re

from pi_lsp import protocol
from tools.protocol.schema import JsonSchema, definition_name

BEGIN = "<!-- BEGIN GENERATED {name} by `make protocol` from pi_lsp/protocol.py: do not edit -->"
END = "<!-- END GENERATED {name} -->"
TYPES_BLOCK = "types"


class MissingBlockError(Exception):
    """docs/protocol.md lacks a generated block the protocol needs."""


def fill_blocks(document: str, schema: JsonSchema) -> str:
    blocks = Blocks(schema["$defs"]).all()
    for name, content in blocks.items():
        end = re.escape(END.format(name=name))
        pattern = re.compile(
            rf"^<!-- BEGIN GENERATED {re.escape(name)} .*?-->\n.*?^{end}$", re.MULTILINE | re.DOTALL
        )
        match = pattern.search(document)
        if match is None:
            raise MissingBlockError(
                f"docs/protocol.md has no generated block {name!r}: add the two lines\n"
                f"{BEGIN.format(name=name)}\n{END.format(name=name)}\nwhere its tables belong."
            )
        replacement = f"{BEGIN.format(name=name)}\n{content}{END.format(name=name)}"
        document = document[: match.start()] + replacement + document[match.end() :]
    stale = set(re.findall(r"^<!-- BEGIN GENERATED (\S+) ", document, re.MULTILINE)) - set(blocks)
    if stale:
        raise MissingBlockError(f"docs/protocol.md has blocks for unknown names: {sorted(stale)}")
    return document


class Blocks:
    def __init__(self, definitions: dict[str, JsonSchema]) -> None:
        self.definitions = definitions

    def all(self) -> dict[str, str]:
        blocks = {}
        for method, params in protocol.PARAMS_BY_METHOD.items():
            result = protocol.RESULT_BY_METHOD[method]
            result_table = self.shape("Result", result.__name__)
            blocks[method] = self.params(params.__name__) + "\n" + result_table
        for method, params in protocol.NOTIFICATION_PARAMS.items():
            blocks[method] = self.params(params.__name__)
        for method, params in protocol.SERVER_REQUEST_PARAMS.items():
            result = protocol.SERVER_REQUEST_RESULTS[method]
            blocks[method] = (
                self.params(params.__name__) + "\n" + self.shape("Result", result.__name__)
            )
        blocks[protocol.RESOURCES_CHANGED] = self.shape(
            "Params", protocol.SERVER_NOTIFICATION_PARAMS[protocol.RESOURCES_CHANGED].__name__
        )
        blocks[protocol.EVENT] = (
            self.shape("Params", protocol.EventNotification.__name__) + "\n" + self.events()
        )
        blocks[TYPES_BLOCK] = self.types()
        return blocks

    def params(self, name: str) -> str:
        if not self.definitions[name]["properties"]:
            return "**Params**: none.\n"
        return self.shape("Params", name)

    def shape(self, title: str, name: str) -> str:
        definition = self.definitions[name]
        lines = [f"**{title}** (`{name}`):", "", "| field | type | description |", "|---|---|---|"]
        required = set(definition["required"])
        for field, schema in definition["properties"].items():
            marker = "" if field in required else "?"
            description = _cell(schema.get("description", ""))
            lines.append(f"| `{field}{marker}` | {_cell(_type(schema))} | {description} |")
        return "\n".join(lines) + "\n"

    def events(self) -> str:
        lines = ["| type | fields | when |", "|---|---|---|"]
        for cls in protocol.EVENT_CLASSES:
            definition = self.definitions[cls.__name__]
            required = set(definition["required"])
            fields = ", ".join(
                f"`{field}{'' if field in required else '?'}`: {_type(schema)}"
                for field, schema in definition["properties"].items()
                if field != "type"
            )
            notes = [
                f"`{field}`: {schema['description']}"
                for field, schema in definition["properties"].items()
                if schema.get("description")
            ]
            when = " ".join([definition.get("description", ""), *notes]).strip()
            lines.append(f"| `{cls.TYPE}` | {_cell(fields)} | {_cell(when)} |")
        return "\n".join(lines) + "\n"

    def types(self) -> str:
        direct = {cls.__name__ for cls in _message_types()}
        events = {cls.__name__ for cls in protocol.EVENT_CLASSES} | {"PiEvent"}
        sections = []
        for name, definition in self.definitions.items():
            if name in direct or name in events:
                continue
            lines = [f"#### `{name}`", ""]
            if definition.get("description"):
                lines += [definition["description"], ""]
            if "enum" in definition:
                values = ", ".join(f'`"{value}"`' for value in definition["enum"])
                lines.append(f"One of {values}.")
            else:
                lines.append(self.shape("Fields", name).split("\n", 2)[2].rstrip("\n"))
            sections.append("\n".join(lines) + "\n")
        return "\n".join(sections)


def _message_types() -> list[type]:
    return [
        *protocol.PARAMS_BY_METHOD.values(),
        *protocol.RESULT_BY_METHOD.values(),
        *protocol.NOTIFICATION_PARAMS.values(),
        *protocol.SERVER_NOTIFICATION_PARAMS.values(),
        *protocol.SERVER_REQUEST_PARAMS.values(),
        *protocol.SERVER_REQUEST_RESULTS.values(),
    ]


def _type(schema: JsonSchema) -> str:
    if "$ref" in schema:
        name = definition_name(schema["$ref"])
        if name == "PiEvent":
            return "an event (below)"
        return f"[{name}](#{name.lower()})"
    if "const" in schema:
        return f'`"{schema["const"]}"`'
    if "enum" in schema:
        return " | ".join(f'`"{value}"`' for value in schema["enum"])
    if "anyOf" in schema:
        return " | ".join(_type(member) for member in schema["anyOf"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(_type({"type": item}) for item in kind)
    if kind == "array":
        item = _type(schema["items"])
        return f"({item})[]" if " | " in item else f"{item}[]"
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, dict):
            value = _type(values)
            return f"object of ({value})" if " | " in value else f"object of {value}"
        return "object"
    return kind or "any JSON"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
