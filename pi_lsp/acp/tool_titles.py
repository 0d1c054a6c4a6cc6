"""A finished tool call's ACP title from its card (``protocol.ToolCard``): what it did, in one
line (``Edited app.py +1 −1``, ``bash npm test — exit 1``, ``grep TODO in src — 3 results``,
``Edit app.py — denied: the user denied it``), so ACP clients show the work as the chats do."""

from __future__ import annotations

from pi_lsp.protocol import ToolCard


def card_title(card: ToolCard) -> str:
    title = f"bash {card.title}" if card.kind == "bash" else card.title
    if card.added is not None:
        title += f" +{card.added} −{card.removed or 0}"
    if card.result_count is not None:
        more = "+" if card.more_results else ""
        title += f" — {card.result_count}{more} result{'' if card.result_count == 1 else 's'}"
    if card.status == "denied":
        return f"{title} — denied: {card.status_reason or 'permission not given'}"
    if card.status == "failed":
        return f"{title} — {card.status_reason or 'failed'}"
    if card.kind == "bash" and card.exit_code is not None:
        title += f" — exit {card.exit_code}"
    return title
