"""pi's ``parseStreamingJson``: tool-call arguments from JSON that may be malformed or cut short.

Streamed tool-call arguments arrive as JSON text in pieces. Like pi, the accumulated text is parsed
as it is and, failing that, repaired (raw control characters inside strings escaped, backslashes
before invalid escapes doubled, as pi's ``repairJson`` does); jiter parses either as complete or
partial JSON (``partial_mode="trailing-strings"``).

So an aborted tool call keeps the arguments received so far (``{"path": "src/ma`` →
``{"path": "src/ma"}``), and anything unusable becomes ``{}``. A trailing key without a value, a
cut number or a cut literal (``tru``) is dropped rather than guessed. Arguments are always an
object: JSON that parses to anything else gives ``{}``.
"""

from __future__ import annotations

import json
from typing import Any

import jiter

_VALID_ESCAPES = set('"\\/bfnrtu')


def parse_streaming_json(text: str) -> dict[str, Any]:
    """The arguments object in ``text`` (complete, malformed or cut short), else ``{}``."""
    if not text or not text.strip():
        return {}
    for candidate in (text, repair_json(text)):
        try:
            parsed = jiter.from_json(
                candidate.encode(), partial_mode="trailing-strings", allow_inf_nan=False
            )
        except ValueError:
            continue
        return parsed if isinstance(parsed, dict) else {}
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
