"""pi's ``parseStreamingJson``: tool-call arguments from JSON that may be malformed or cut short.

Streamed tool-call arguments arrive as JSON text in pieces. pi parses the accumulated text with,
in turn: plain JSON; JSON repaired (raw control characters inside strings escaped, backslashes
before invalid escapes doubled); and a partial parse that closes what is still open, first of the
text as it is, then of the repaired text. Python's non-strict JSON mode accepts raw control
characters in strings, which gives what pi's repair gives.

So an aborted tool call keeps the arguments received so far (``{"path": "src/ma`` →
``{"path": "src/ma"}``), and anything unusable becomes ``{}``. A trailing key without a value or
a cut literal (``tru``) is dropped rather than guessed. Arguments are always an object: JSON that
parses to anything else gives ``{}``.
"""

from __future__ import annotations

import json
from typing import Any

_VALID_ESCAPES = set('"\\/bfnrtu')
_CLOSERS = {"{": "}", "[": "]"}
_MAX_TRIMS = 64


def parse_streaming_json(text: str) -> dict[str, Any]:
    """The arguments object in ``text`` (complete, malformed or cut short), else ``{}``."""
    if not text or not text.strip():
        return {}
    for candidate in (text, repair_json(text)):
        try:
            return _as_object(json.loads(candidate, strict=False))
        except ValueError:
            continue
    for candidate in (text, repair_json(text)):
        parsed = _parse_prefix(candidate)
        if parsed is not None:
            return _as_object(parsed)
    return {}


def repair_json(text: str) -> str:
    """``text`` with raw control characters in strings escaped and invalid escapes doubled."""
    repaired: list[str] = []
    in_string = False
    index = 0
    while index < len(text):
        char = text[index]
        if not in_string:
            in_string = char == '"'
            repaired.append(char)
        elif char == '"':
            in_string = False
            repaired.append(char)
        elif char == "\\":
            following = text[index + 1 : index + 2]
            if following == "u" and _is_hex4(text[index + 2 : index + 6]):
                repaired.append(text[index : index + 6])
                index += 5
            elif following and following in _VALID_ESCAPES and following != "u":
                repaired.append(text[index : index + 2])
                index += 1
            else:
                repaired.append("\\\\")
        else:
            repaired.append(json.dumps(char)[1:-1] if ord(char) < 0x20 else char)
        index += 1
    return "".join(repaired)


def _is_hex4(text: str) -> bool:
    return len(text) == 4 and all(char in "0123456789abcdefABCDEF" for char in text)


def _as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _parse_prefix(text: str) -> Any:
    """Parse the longest usable prefix of ``text``, closing open strings and containers."""
    prefix = text.rstrip()
    for _ in range(_MAX_TRIMS):
        if not prefix:
            return None
        try:
            return json.loads(_close(prefix), strict=False)
        except ValueError:
            prefix = _trim_last_token(prefix)
    return None


def _scan(text: str) -> tuple[list[str], bool, bool, int]:
    """Open containers, whether ``text`` ends inside a string (and right after a backslash
    there), and where the last string starts."""
    stack: list[str] = []
    in_string = False
    escaped = False
    string_start = -1
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            string_start = index
        elif char in _CLOSERS:
            stack.append(char)
        elif char in "]}" and stack:
            stack.pop()
    return stack, in_string, escaped, string_start


def _close(text: str) -> str:
    stack, in_string, escaped, _ = _scan(text)
    if in_string:
        # A cut \uXXXX escape fails to parse and is trimmed a character at a time by the caller.
        text = (text[:-1] if escaped else text) + '"'
    return text + "".join(_CLOSERS[opener] for opener in reversed(stack))


def _trim_last_token(text: str) -> str:
    """``text`` without its last token: a separator, a whole string, or one character."""
    if text[-1] in ",:":
        return text[:-1].rstrip()
    if text[-1] == '"':
        *_, string_start = _scan(text)
        return text[:string_start].rstrip()
    return text[:-1]
