"""Timestamps read as JavaScript's ``new Date(text).getTime()`` reads them.

What ``toISOString()`` writes takes a fast path (the C parser); it must give what the general
parser gives, for valid dates and for the invalid ones (a 30th of February, hour 24) alike.
"""

from __future__ import annotations

import random

from pi_lsp.session import timestamps
from pi_lsp.session.timestamps import epoch_ms_to_iso, iso_to_epoch_ms


def _digits(generator: random.Random, count: int, high: str = "9") -> str:
    return "".join(generator.choice("0123456789"[: int(high) + 1]) for _ in range(count))


def test_the_to_iso_string_fast_path_reads_what_the_general_parser_reads():
    generator = random.Random(11)
    checked = fast = 0
    for _ in range(20_000):
        date = "-".join(
            [_digits(generator, 4), _digits(generator, 2, "3"), _digits(generator, 2, "3")]
        )
        time = ":".join(
            [_digits(generator, 2, "2"), _digits(generator, 2, "6"), _digits(generator, 2, "6")]
        )
        text = f"{date}T{time}.{_digits(generator, 3)}Z"
        general = timestamps._any_iso_epoch_ms(text)
        assert iso_to_epoch_ms(text) == general, text
        checked += 1
        fast += timestamps._TO_ISO_STRING.match(text) is not None
    assert 1_000 < fast < checked  # both paths were taken


def test_what_to_iso_string_writes_reads_back():
    for epoch_ms in (0, 1, 951_782_400_000, 1_767_225_604_846, 253_402_300_799_999):
        assert iso_to_epoch_ms(epoch_ms_to_iso(epoch_ms)) == epoch_ms
    assert iso_to_epoch_ms("2026-02-30T00:00:00.000Z") is None
    assert iso_to_epoch_ms("0000-01-01T00:00:00.000Z") is None
    assert iso_to_epoch_ms("2024-02-29T12:00:00.000Z") == 1_709_208_000_000
    assert iso_to_epoch_ms("2026-01-01T00:00:00.000+01:00") == 1_767_222_000_000  # the general one
