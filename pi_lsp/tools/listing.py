"""The result of a tool that lists what it found (``find``, ``grep``, ``ls``): the lines, cut at
the byte limit, then one bracketed line of notices saying what was left out and how to get it."""

from __future__ import annotations

from typing import Any

import attrs

from pi_lsp.tools.base import ToolResult, text_result
from pi_lsp.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head, truncation_details


@attrs.frozen
class Notice:
    """Something left out: the sentence the model reads and the ``details`` field it sets."""

    text: str
    detail: str
    value: Any


def listing_result(
    lines: list[str], limit: Notice | None, after_cut: tuple[Notice, ...] = ()
) -> ToolResult:
    """``lines`` as a tool result; ``limit`` says the tool stopped at its count limit, and the
    ``after_cut`` notices follow the one about the byte limit."""
    truncation = truncate_head("\n".join(lines), max_lines=1 << 62)
    cut = None
    if truncation["truncated"]:
        cut = Notice(
            f"Output cut at the {format_size(DEFAULT_MAX_BYTES)} limit",
            "truncation",
            truncation_details(truncation),
        )
    notices = [notice for notice in (limit, cut, *after_cut) if notice is not None]
    output = truncation["content"]
    if notices:
        output += "\n\n[" + ". ".join(notice.text for notice in notices) + "]"
    details = {notice.detail: notice.value for notice in notices}
    return text_result(output, details or None)
