"""A reader for the part of YAML that skill and template frontmatter uses.

Supported: ``key: value`` mappings (nested by indentation), plain/quoted scalars typed like YAML
1.2's core schema (booleans, null, numbers, strings), ``|`` and ``>`` block scalars with chomping
indicators, block lists (``- item``, including lists of mappings) and one-line flow lists/maps.
Anything else is a ``YamlSubsetError`` carrying the 1-based file line, because pi rejects a file
whose YAML does not parse and we must say where.
"""

from __future__ import annotations

import re
from typing import Any

KEY_LINE = re.compile(
    r"^(?P<key>\"[^\"]*\"|'[^']*'|[^\s#:\-?\[\]{},&*!|>'\"%@`][^:#]*?|-[^\s:][^:#]*?)\s*:(?:\s+(?P<rest>.*))?$"
)
BLOCK_HEADER = re.compile(r"^(?P<style>[|>])(?P<chomp>[+-]?)(?P<indent>[1-9]?)\s*(?:#.*)?$")
INTEGER = re.compile(r"^[-+]?[0-9]+$")
FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
DOUBLE_QUOTE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "0": "\0",
    "\\": "\\",
    '"': '"',
    "/": "/",
    " ": " ",
}
# Characters that cannot start a plain scalar in YAML (anchors, tags, aliases, reserved ones).
UNSUPPORTED_STARTS = ("&", "*", "!", "%", "@", "`")


class YamlSubsetError(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


def parse_yaml_mapping(text: str, *, first_line: int = 1) -> tuple[dict[str, Any], dict[str, int]]:
    """The top-level mapping of ``text`` and the file line of each of its keys."""
    reader = _Reader(text.split("\n"), first_line)
    mapping, key_lines = reader.mapping(0)
    reader.expect_end()
    return mapping, key_lines


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_blank(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _is_sequence_item(content: str) -> bool:
    return content == "-" or content.startswith("- ")


class _Reader:
    """A cursor over the lines; each method consumes the lines of one YAML node."""

    def __init__(self, lines: list[str], first_line: int) -> None:
        self.lines = lines
        self.first_line = first_line
        self.index = 0

    def file_line(self, index: int | None = None) -> int:
        return self.first_line + (self.index if index is None else index)

    def fail(self, message: str, index: int | None = None) -> YamlSubsetError:
        return YamlSubsetError(self.file_line(index), message)

    def next_content_index(self) -> int | None:
        """The index of the next line that is neither blank nor a comment."""
        for index in range(self.index, len(self.lines)):
            line = self.lines[index]
            if "\t" in line[: _indent_of(line) + 1] and line.strip():
                raise self.fail("tabs are not allowed for indentation", index)
            if not _is_blank(line):
                return index
        return None

    def expect_end(self) -> None:
        index = self.next_content_index()
        if index is not None:
            raise self.fail("unexpected indentation", index)

    def mapping(self, indent: int) -> tuple[dict[str, Any], dict[str, int]]:
        result: dict[str, Any] = {}
        key_lines: dict[str, int] = {}
        while (index := self.next_content_index()) is not None:
            line = self.lines[index]
            line_indent = _indent_of(line)
            if line_indent < indent:
                break
            if line_indent > indent:
                raise self.fail("unexpected indentation", index)
            content = line[line_indent:]
            if _is_sequence_item(content):
                if indent == 0 and not result:
                    raise self.fail("expected 'key: value', found a list item", index)
                break
            match = KEY_LINE.match(content)
            if not match:
                raise self.fail(f"expected 'key: value', got {content.strip()!r}", index)
            key = match["key"].strip()
            if key[:1] in "\"'":
                key = key[1:-1]
            if key in result:
                raise self.fail(f"duplicate key {key!r}", index)
            self.index = index + 1
            key_lines[key] = self.file_line(index)
            result[key] = self.value(match["rest"], indent, index)
        return result, key_lines

    def sequence(self, indent: int) -> list[Any]:
        items: list[Any] = []
        while (index := self.next_content_index()) is not None:
            line = self.lines[index]
            content = line[_indent_of(line) :]
            if _indent_of(line) != indent or not _is_sequence_item(content):
                if _indent_of(line) > indent:
                    raise self.fail("unexpected indentation", index)
                break
            rest = content[1:].strip()
            if KEY_LINE.match(rest) and not rest.startswith(("'", '"')):
                # "- key: value" opens a mapping whose keys line up after the dash.
                self.lines[index] = " " * (indent + 2) + content[2:].lstrip()
                items.append(self.mapping(_indent_of(self.lines[index]))[0])
                continue
            self.index = index + 1
            items.append(self.value(rest or None, indent, index))
        return items

    def value(self, rest: str | None, indent: int, index: int) -> Any:
        """The value after ``key:`` (or ``-``) on line ``index``, consuming any lines it spans."""
        rest = _strip_comment(rest.strip()) if rest else ""
        if not rest:
            return self.nested(indent)
        header = BLOCK_HEADER.match(rest)
        if header:
            return self.block_scalar(indent, header)
        if rest[0] == '"':
            return _double_quoted(rest, lambda message: self.fail(message, index))
        if rest[0] == "'":
            return _single_quoted(rest, lambda message: self.fail(message, index))
        if rest[0] in "[{":
            return _flow(rest, lambda message: self.fail(message, index))
        if rest.startswith(UNSUPPORTED_STARTS):
            raise self.fail(f"unsupported YAML syntax {rest[0]!r}", index)
        return self.plain_scalar(rest, indent, index)

    def nested(self, indent: int) -> Any:
        index = self.next_content_index()
        if index is None:
            return None
        line = self.lines[index]
        content = line[_indent_of(line) :]
        if _is_sequence_item(content) and _indent_of(line) >= indent:
            return self.sequence(_indent_of(line))
        if _indent_of(line) > indent:
            return self.mapping(_indent_of(line))[0]
        return None

    def plain_scalar(self, first: str, indent: int, index: int) -> Any:
        parts = [first]
        # Indented lines after a plain scalar continue it, folded with spaces.
        while self.index < len(self.lines):
            line = self.lines[self.index]
            if line.strip() and _indent_of(line) <= indent:
                break
            if line.strip().startswith("#"):
                break
            parts.append(line.strip())
            self.index += 1
        text = _fold_plain(parts)
        if re.search(r":(\s|$)", text):
            raise self.fail(
                "a ':' followed by a space is not allowed in an unquoted value; quote it", index
            )
        return _typed_scalar(text) if len(parts) == 1 else text

    def block_scalar(self, indent: int, header: re.Match[str]) -> str:
        start = self.index
        block: list[str] = []
        while self.index < len(self.lines):
            line = self.lines[self.index]
            if line.strip() and _indent_of(line) <= indent:
                break
            block.append(line)
            self.index += 1
        content_lines = [line for line in block if line.strip()]
        if header["indent"]:
            block_indent = indent + int(header["indent"])
        else:
            block_indent = _indent_of(content_lines[0]) if content_lines else indent + 1
        for offset, line in enumerate(block):
            if line.strip() and _indent_of(line) < block_indent:
                raise self.fail(
                    "block scalar line is less indented than its first line", start + offset
                )
        texts = [line[block_indent:] for line in block]
        body = "\n".join(texts) if header["style"] == "|" else _fold_block(texts)
        return _chomp(body, header["chomp"])


def _strip_comment(text: str) -> str:
    if text[:1] in "\"'":
        return text
    match = re.search(r"\s#", text)
    return text[: match.start()].rstrip() if match else text


def _fold_plain(parts: list[str]) -> str:
    folded = parts[0]
    for part in parts[1:]:
        if not part:
            folded += "\n"
        elif folded.endswith("\n"):
            folded += part
        else:
            folded += " " + part
    return folded.strip(" ")


def _fold_block(lines: list[str]) -> str:
    """``>`` folding: a break between two ordinary lines
    becomes a space; blank lines stay breaks."""
    result = ""
    blank_run = 0
    previous: str | None = None
    for line in lines:
        if not line:
            blank_run += 1
            continue
        if previous is None:
            result += "\n" * blank_run + line
        elif _is_ordinary(previous) and _is_ordinary(line):
            result += ("\n" * blank_run if blank_run else " ") + line
        else:
            # More-indented lines keep their line breaks.
            result += "\n" * (blank_run + 1) + line
        blank_run = 0
        previous = line
    return result + "\n" * blank_run


def _is_ordinary(line: str) -> bool:
    return not line[0].isspace()


def _chomp(body: str, indicator: str) -> str:
    stripped = body.rstrip("\n")
    if indicator == "-":
        return stripped
    if indicator == "+":
        return body + "\n" if body else body
    return stripped + "\n" if stripped else ""


def _typed_scalar(text: str) -> Any:
    if text in ("null", "Null", "NULL", "~"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if INTEGER.match(text):
        return int(text)
    if FLOAT.match(text) and any(ch.isdigit() for ch in text):
        return float(text)
    return text


def _double_quoted(text: str, fail: Any) -> str:
    result = []
    position = 1
    while position < len(text):
        char = text[position]
        if char == "\\":
            escape = text[position + 1 : position + 2]
            if escape not in DOUBLE_QUOTE_ESCAPES:
                raise fail(f"unknown escape '\\{escape}' in a double-quoted string")
            result.append(DOUBLE_QUOTE_ESCAPES[escape])
            position += 2
            continue
        if char == '"':
            _expect_nothing_after(text[position + 1 :], fail)
            return "".join(result)
        result.append(char)
        position += 1
    raise fail("unterminated double-quoted string")


def _single_quoted(text: str, fail: Any) -> str:
    result = []
    position = 1
    while position < len(text):
        char = text[position]
        if char == "'":
            if text[position + 1 : position + 2] == "'":
                result.append("'")
                position += 2
                continue
            _expect_nothing_after(text[position + 1 :], fail)
            return "".join(result)
        result.append(char)
        position += 1
    raise fail("unterminated single-quoted string")


def _expect_nothing_after(tail: str, fail: Any) -> None:
    tail = tail.strip()
    if tail and not tail.startswith("#"):
        raise fail(f"unexpected text after a quoted string: {tail!r}")


def _flow(text: str, fail: Any) -> Any:
    closing = "]" if text[0] == "[" else "}"
    if not text.endswith(closing):
        raise fail(f"unterminated flow collection (missing {closing!r})")
    items = [item.strip() for item in _split_flow_items(text[1:-1], fail) if item.strip()]
    if closing == "]":
        return [_flow_scalar(item, fail) for item in items]
    mapping: dict[str, Any] = {}
    for item in items:
        key, separator, value = item.partition(":")
        if not separator:
            raise fail(f"expected 'key: value' in a flow mapping, got {item!r}")
        mapping[_flow_scalar(key.strip(), fail)] = _flow_scalar(value.strip(), fail)
    return mapping


def _split_flow_items(inner: str, fail: Any) -> list[str]:
    items, current, quote = [], "", ""
    for char in inner:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[]{}":
            raise fail("nested flow collections are not supported")
        elif char == ",":
            items.append(current)
            current = ""
            continue
        current += char
    if quote:
        raise fail("unterminated quoted string in a flow collection")
    items.append(current)
    return items


def _flow_scalar(item: str, fail: Any) -> Any:
    if item.startswith('"'):
        return _double_quoted(item, fail)
    if item.startswith("'"):
        return _single_quoted(item, fail)
    return _typed_scalar(item)
