"""The card of a summary just written, for the live ``compaction_end`` and
``branch_summary_end`` events: the entry's card (``session/summary_cards.py``) plus what only the
moment knows, the model that wrote it (``extension`` when an extension supplied it) and the
context's size right after it.
"""

from __future__ import annotations

from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.compaction.tokens import TokenCounter
from pi_lsp.protocol import SummaryCard
from pi_lsp.session.summary_cards import summary_card


def live_card(
    runtime: SessionRuntime, entry_id: str | None, model: str | None, counter: TokenCounter
) -> SummaryCard | None:
    """The card of the summary entry ``entry_id``, with its model and the context after it."""
    entry = runtime.session.get_entry(entry_id) if entry_id else None
    if entry is None:
        return None
    messages = runtime.session.build_context().messages
    tokens_after = sum(counter.estimate_message_tokens(message) for message in messages)
    return summary_card(entry, tokens_after=tokens_after, model=model)
