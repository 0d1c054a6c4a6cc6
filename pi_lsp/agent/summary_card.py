"""The card the chats show of a compaction or a branch summary, as the wire carries it.

History pages read it from the entry (``session/summary_cards.py``); the live ``compaction_end``
and ``branch_summary_end`` events add what only the moment knows: the model that wrote the
summary (``extension`` when an extension supplied it) and the context's size right after it.
"""

from __future__ import annotations

from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.compaction.tokens import TokenCounter
from pi_lsp.protocol import SummaryCard
from pi_lsp.session.summary_cards import SummaryCardInfo, summary_card


def card_shape(
    card: SummaryCardInfo | None, *, tokens_after: int | None = None, model: str | None = None
) -> SummaryCard | None:
    if card is None:
        return None
    return SummaryCard(
        summary=card.summary,
        read_files=card.read_files,
        modified_files=card.modified_files,
        tokens_before=card.tokens_before,
        tokens_after=tokens_after,
        model=model,
        cost=card.cost,
    )


def live_card(
    runtime: SessionRuntime, entry_id: str | None, model: str | None, counter: TokenCounter
) -> SummaryCard | None:
    """The card of the summary entry just written, with its model and the context after it."""
    entry = runtime.session.get_entry(entry_id) if entry_id else None
    if entry is None:
        return None
    messages = runtime.session.build_context().messages
    tokens_after = sum(counter.estimate_message_tokens(message) for message in messages)
    return card_shape(summary_card(entry), tokens_after=tokens_after, model=model)
