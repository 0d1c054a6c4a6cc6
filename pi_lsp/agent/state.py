"""``pi/state``: what a client shows about a session (model, thinking level, context usage, flags).

Context usage is pi's: the last completed answer's reported usage plus estimates of the messages
after it. Right after a compaction nothing reported is trustworthy, so the usage reads unknown
(``tokens: null``) until the model answers again, as in pi.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.compaction.tokens import estimate_context_tokens, get_assistant_usage, get_token_counter

if TYPE_CHECKING:
    from pi_lsp.agent.agent import Agent


def session_state(agent: Agent, runtime: SessionRuntime) -> dict[str, Any]:
    model = agent.model_for(runtime)
    session = runtime.session
    context = session.build_context()
    return {
        "sessionId": runtime.id,
        "path": str(session.path) if session.path else None,
        "name": session.name,
        "leafId": session.leaf_id,
        "model": None
        if model is None
        else {"model": model.model, "provider": model.provider, "modelId": model.model_id},
        "thinkingLevel": agent.thinking_level(runtime),
        "contextUsage": None
        if model is None
        else _context_usage(agent, runtime, context.messages, model),
        "messageCount": len(context.messages),
        "isStreaming": runtime.is_streaming,
        "isCompacting": runtime.compacting,
        "readOnly": runtime.read_only_reason is not None,
    }


def _context_usage(agent: Agent, runtime: SessionRuntime, messages: list, model) -> dict[str, Any]:
    window = agent.context_window(model)
    if _compacted_without_answer_since(runtime):
        return {"tokens": None, "contextWindow": window, "percent": None}
    counter = get_token_counter(agent.tokenizer)
    tokens = estimate_context_tokens(messages, counter).tokens
    return {
        "tokens": tokens,
        "contextWindow": window,
        "percent": round(tokens / window * 100, 1) if window else None,
    }


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
