"""``pi/state``: what a client shows about a session (model, thinking level, context usage, cost,
the queue's modes and length, flags).

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
from typing import cast

from pi_lsp.agent.context_inspector import meter_tokens
from pi_lsp.agent.live_config import LiveConfig
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.compaction.policy import compaction_start, shown_context_tokens
from pi_lsp.llm.config import ModelConfig
from pi_lsp.protocol import ContextUsage, ModelRef, SessionCost, StateResult, ThinkingLevel
from pi_lsp.session.usage_totals import UsageTotals
from pi_lsp.tools.base import Tool


def session_state(
    live: LiveConfig, runtime: SessionRuntime, tools: Sequence[Tool] = ()
) -> StateResult:
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
    return StateResult(
        session_id=runtime.id,
        path=runtime.path,
        name=session.name,
        leaf_id=session.leaf_id,
        model=None if model is None else model_ref(model),
        # pi writes only its six levels; a level a hand-edited file names is sent as it is.
        thinking_level=cast(ThinkingLevel, live.thinking_level(runtime)),
        context_usage=usage,
        message_count=len(messages),
        is_streaming=runtime.is_streaming,
        is_compacting=runtime.compacting,
        read_only=runtime.read_only_reason is not None,
        cost=session_cost(runtime.usage.totals(session.entries)),
        steering_mode=live.current.steering_mode(),
        follow_up_mode=live.current.follow_up_mode(),
        pending_message_count=sum(map(len, runtime.queue.infos())),
        read_only_reason=runtime.read_only_reason,
    )


def model_ref(model: ModelConfig) -> ModelRef:
    """The model as ``pi/state`` names it; where its key comes from only when it has one."""
    credential = model.credential if model.key_status == "key" else None
    return ModelRef(
        model=model.model,
        provider=model.provider,
        model_id=model.model_id,
        key_status=model.key_status,
        key_source=credential.source if credential else None,
        source=model.source,
    )


def session_cost(totals: UsageTotals) -> SessionCost:
    """What every model call recorded in the session file cost (all branches, summaries
    included)."""
    return SessionCost(
        total=totals.cost,
        input=totals.input,
        output=totals.output,
        cache_read=totals.cache_read,
        cache_write=totals.cache_write,
        cached_percent=totals.cached_percent,
    )
