"""JSON text exactly as JavaScript's ``JSON.stringify`` writes it.

pi writes every session line with ``JSON.stringify``; pi-lsp must produce the same bytes so that
files stay byte-compatible and token estimates that measure ``JSON.stringify(...)`` lengths agree.
Python's ``json`` differs in three places, all handled here:

- numbers: JavaScript prints ``1`` for ``1.0``, ``0.000003`` for ``3e-06`` and ``1e+21`` for
  ``1e21``;
- key order: JavaScript objects enumerate integer-like keys ("0", "42") first, in ascending order;
- strings: a lone UTF-16 surrogate is written as a ``\\udxxx`` escape (Python would fail to encode
  it).

NaN and infinities become ``null``, as in JavaScript.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

import msgspec

_encode_string = json.encoder.encode_basestring
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_fast_encode = msgspec.json.Encoder().encode
_SMALLEST_PLAIN = 1e-4  # below this msgspec switches to exponent notation earlier than JavaScript
_ARRAY_INDEX_LIMIT = 2**32 - 1
_SAFE_INTEGER = 2**53


def dumps(value: Any) -> str:
    """Return ``JSON.stringify(value)`` for a JSON-like
    Python value (dict, list, str, number, bool, None)."""
    return dumps_utf8(value).decode("utf-8")


def dumps_utf8(value: Any) -> bytes:
    """``dumps(value)`` encoded as UTF-8: the bytes of a session line."""
    if _fast_encoder_matches(value):
        try:
            return _fast_encode(value)
        except UnicodeEncodeError:
            pass  # a lone surrogate, which JavaScript escapes
    return _exact_dumps(value).encode("utf-8")


_DIGITS = frozenset("0123456789")


def _fast_encoder_matches(value: Any) -> bool:
    """True when msgspec's encoder writes what JavaScript would, lone surrogates aside (the common
    case).

    msgspec escapes strings exactly as ``JSON.stringify`` does; it differs only for integral floats
    ("1.0"), floats below 1e-5 (exponent notation), integers beyond 2**53 and integer-like keys.
    """
    pending = [value]
    pop = pending.pop
    push = pending.append
    while pending:
        item = pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is dict:
            for key, child in item.items():
                if type(key) is not str or (key and key[0] in _DIGITS):
                    return False
                push(child)
        elif kind is list:
            pending.extend(item)
        elif kind is int:
            if not -_SAFE_INTEGER <= item <= _SAFE_INTEGER:
                return False
        elif kind is float:
            if (
                item.is_integer()
                or not math.isfinite(item)
                or -_SMALLEST_PLAIN < item < _SMALLEST_PLAIN
            ):
                return False
        else:
            return False
    return True


def _exact_dumps(value: Any) -> str:
    parts: list[str] = []
    _encode(value, parts)
    return "".join(parts)


def utf16_length(text: str) -> int:
    """Length of ``text`` in UTF-16 code units, which is
    what JavaScript's ``String.length`` counts."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for character in text if ord(character) > 0xFFFF)


def format_number(number: float) -> str:
    """Format a number the way ECMAScript's ``Number::toString`` does."""
    if isinstance(number, bool):
        return "true" if number else "false"
    if isinstance(number, int):
        if abs(number) <= _SAFE_INTEGER:
            return str(number)
        number = float(number)  # JavaScript parsed it into a double, so print that double.
    if math.isnan(number) or math.isinf(number):
        return "null"
    if number == 0:
        return "0"
    if number.is_integer() and abs(number) <= _SAFE_INTEGER:
        return str(int(number))
    return _format_float(number)


def _format_float(number: float) -> str:
    shortest = repr(number)
    if "e" not in shortest:
        return shortest  # Plain decimal notation is the same in both languages.
    sign, digit_tuple, exponent = Decimal(shortest).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    trailing_zeros_removed = len(digit_tuple) - len(digits)
    # value = 0.<digits> * 10**point, in ECMAScript's notation (k digits, n = point).
    point = int(exponent) + trailing_zeros_removed + len(digits)
    count = len(digits)
    prefix = "-" if sign else ""
    if count <= point <= 21:
        return prefix + digits + "0" * (point - count)
    if 0 < point <= 21:
        return prefix + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return prefix + "0." + "0" * (-point) + digits
    exponent_text = f"e{'+' if point - 1 >= 0 else '-'}{abs(point - 1)}"
    mantissa = digits if count == 1 else digits[0] + "." + digits[1:]
    return prefix + mantissa + exponent_text


def _encode_str(text: str) -> str:
    encoded = _encode_string(text)
    if not text.isascii() and _LONE_SURROGATE.search(encoded):
        encoded = _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", encoded)
    return encoded


def _is_array_index(key: str) -> bool:
    return (
        key.isdigit()
        and key.isascii()
        and (key == "0" or key[0] != "0")
        and int(key) < _ARRAY_INDEX_LIMIT
    )


def _ordered_items(mapping: dict) -> list:
    items = list(mapping.items())
    if any(_is_array_index(key) for key in mapping):
        index_items = sorted(
            (item for item in items if _is_array_index(item[0])), key=lambda item: int(item[0])
        )
        items = index_items + [item for item in items if not _is_array_index(item[0])]
    return items


def _encode(value: Any, parts: list[str]) -> None:
    kind = type(value)
    if kind is str:
        parts.append(_encode_string(value) if value.isascii() else _encode_str(value))
    elif kind is dict:
        _encode_object(value, parts)
    elif kind is list or kind is tuple:
        parts.append("[")
        for position, item in enumerate(value):
            if position:
                parts.append(",")
            _encode(None if item is _OMIT else item, parts)
        parts.append("]")
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, (int, float)):
        parts.append(format_number(value))
    elif isinstance(value, str):
        parts.append(_encode_str(value))
    elif isinstance(value, dict):
        _encode_object(value, parts)
    elif isinstance(value, (list, tuple)):
        _encode(list(value), parts)
    else:
        raise TypeError(f"value of type {type(value).__name__} is not JSON serializable")


def _encode_object(mapping: dict, parts: list[str]) -> None:
    parts.append("{")
    first = True
    items = (
        _ordered_items(mapping) if any(key[:1].isdigit() for key in mapping) else mapping.items()
    )
    for key, item in items:
        if item is _OMIT:
            continue
        if not first:
            parts.append(",")
        first = False
        parts.append(_encode_string(key) if key.isascii() else _encode_str(key))
        parts.append(":")
        _encode(item, parts)
    parts.append("}")


class _Omit:
    """Marker for a key whose value JavaScript would leave out (``undefined``)."""

    def __repr__(self) -> str:
        return "OMIT"


_OMIT = _Omit()
UNDEFINED = _OMIT
"""Use as a dict value to leave the key out, as ``JSON.stringify`` does for ``undefined``."""
