"""``pi/state``: what a client shows about a session (model, thinking level, context usage, flags).

Context usage is pi's: the last completed answer's reported usage plus estimates of the messages
after it. Right after a compaction nothing reported is trustworthy, so the usage reads unknown
(``tokens: null``) until the model answers again, as in pi.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.compaction.tokens import estimate_context_tokens, get_assistant_usage, get_token_counter
from pi_lsp.llm.config import ModelConfig

if TYPE_CHECKING:
    from pi_lsp.agent.agent import Agent


@attrs.frozen
class ContextUsage:
    tokens: int | None
    """Unknown (None) right after a compaction, until the model answers again."""
    context_window: int
    percent: float | None


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


def session_state(agent: Agent, runtime: SessionRuntime) -> SessionState:
    model = agent.model_for(runtime)
    session = runtime.session
    context = session.build_context()
    return SessionState(
        session_id=runtime.id,
        path=runtime.path,
        name=session.name,
        leaf_id=session.leaf_id,
        model=model,
        thinking_level=agent.thinking_level(runtime),
        context_usage=None
        if model is None
        else _context_usage(agent, runtime, context.messages, model),
        message_count=len(context.messages),
        is_streaming=runtime.is_streaming,
        is_compacting=runtime.compacting,
        read_only=runtime.read_only_reason is not None,
    )


def _context_usage(agent: Agent, runtime: SessionRuntime, messages: list, model) -> ContextUsage:
    window = agent.context_window(model)
    if _compacted_without_answer_since(runtime):
        return ContextUsage(None, window, None)
    counter = get_token_counter(agent.tokenizer)
    tokens = estimate_context_tokens(messages, counter).tokens
    return ContextUsage(int(tokens), window, round(tokens / window * 100, 1) if window else None)


def _compacted_without_answer_since(runtime: SessionRuntime) -> bool:
    for entry in reversed(runtime.session.branch()):
        if entry.type == "compaction":
            return True
        if (
            entry.type == "message"
            and entry.role == "assistant"
            and get_assistant_usage(entry["message"]) is not None
        ):
            return False
    return False
