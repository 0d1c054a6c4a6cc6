"""JavaScript value semantics that pi's algorithms rely on, for JSON-like Python values.

pi's code tests fields for truthiness, compares them with ``===``, builds strings with template
literals and ``Array.join``, and leaves fields ``undefined`` (which ``JSON.stringify`` drops).
Session files are parsed without validation, so these rules decide what happens with odd values
(an empty ``summary``, a ``null`` exit code, a missing ``display``). Porting them once here keeps
the algorithm modules a line-by-line match of the JavaScript.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from pi_lsp.session.js_json import UNDEFINED, format_number

__all__ = ["UNDEFINED", "is_truthy", "join", "strict_equals", "to_string", "without_undefined"]


def is_truthy(value: Any) -> bool:
    """JavaScript truthiness: empty objects and arrays are truthy, ``""``, ``0`` and NaN are not."""
    if value is None or value is UNDEFINED or value is False:
        return False
    if value is True:
        return True
    if isinstance(value, str):
        return value != ""
    if isinstance(value, (int, float)):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    return True


def strict_equals(left: Any, right: Any) -> bool:
    """``left === right`` for JSON values (objects by identity; a missing field is undefined)."""
    if left is UNDEFINED or right is UNDEFINED or left is None or right is None:
        return left is right
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if isinstance(left, str) and isinstance(right, str):
        return left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    return left is right


def to_string(value: Any) -> str:
    """``String(value)``, as a template literal `${value}` or string concatenation applies it."""
    if isinstance(value, str):
        return value
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return "NaN"
        if isinstance(value, float) and math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return format_number(value)
    if isinstance(value, (list, tuple)):
        return join(value, ",")
    return "[object Object]"


def join(values: Iterable[Any], separator: str) -> str:
    """``Array.prototype.join``: ``null`` and ``undefined`` elements become empty strings."""
    return separator.join(
        "" if value is None or value is UNDEFINED else to_string(value) for value in values
    )


def without_undefined(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The object as ``JSON.stringify`` sees it: keys whose value is ``undefined`` left out."""
    return {key: value for key, value in mapping.items() if value is not UNDEFINED}
