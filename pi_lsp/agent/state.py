"""``pi/state``: what a client shows about a session (model, thinking level, context usage, cost,
flags).

Context usage is pi's: the last completed answer's reported usage plus estimates of the messages
after it; when no answer reported one, every message is estimated and, as pi 1.6 counts its system
message, the system prompt and tool declarations too (the context inspector's total, one
computation: ``context_inspector.meter_tokens``). Right after a compaction nothing reported is
trustworthy, so the usage reads unknown (``tokens: null``) until the model answers again, as in
pi (``compaction/policy.py``). ``compact_at`` is where automatic compaction starts (the policy's
``compaction_start``), for the editors' meters to mark.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from pi_lsp.agent.context_inspector import meter_tokens
from pi_lsp.agent.live_config import LiveConfig
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.compaction.policy import compaction_start, shown_context_tokens
from pi_lsp.llm.config import ModelConfig
from pi_lsp.session.usage_totals import UsageTotals
from pi_lsp.tools.base import Tool


@attrs.frozen
class ContextUsage:
    tokens: int | None
    """Unknown (None) right after a compaction, until the model answers again."""
    context_window: int
    percent: float | None
    compact_at: int | None = None
    """The context size past which automatic compaction starts; None when it is turned off."""


@attrs.frozen
class SessionState:
    session_id: str
    path: str | None
    name: str | None
    leaf_id: str | None
    model: ModelConfig | None
    thinking_level: str
    context_usage: ContextUsage | None
    message_count: int
    is_streaming: bool
    is_compacting: bool
    read_only: bool
    cost: UsageTotals = attrs.Factory(UsageTotals)
    """Every model call recorded in the session file (all branches, summaries included)."""
    read_only_reason: str | None = None


def session_state(
    live: LiveConfig, runtime: SessionRuntime, tools: Sequence[Tool] = ()
) -> SessionState:
    model = live.model_for(runtime)
    session = runtime.session
    messages = session.build_context().messages
    usage = None
    if model is not None:
        window = live.context_window(model)
        tokens = shown_context_tokens(session.branch(), messages, live.token_counter())
        if tokens is not None:
            tokens = meter_tokens(live, runtime, tools, tokens)
        percent = round(tokens / window * 100, 1) if tokens is not None and window else None
        settings = live.compaction_settings(runtime)
        compact_at = int(compaction_start(window, settings)) if settings.enabled else None
        usage = ContextUsage(tokens, window, percent, compact_at)
    return SessionState(
        session_id=runtime.id,
        path=runtime.path,
        name=session.name,
        leaf_id=session.leaf_id,
        model=model,
        thinking_level=live.thinking_level(runtime),
        context_usage=usage,
        message_count=len(messages),
        is_streaming=runtime.is_streaming,
        is_compacting=runtime.compacting,
        read_only=runtime.read_only_reason is not None,
        cost=runtime.usage.totals(session.entries),
        read_only_reason=runtime.read_only_reason,
    )
