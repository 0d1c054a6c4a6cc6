"""Handlers of the context requests: ``pi/context``, ``pi/contextEdit``, ``pi/contextRestore``."""

from __future__ import annotations

import asyncio

from pi_lsp import protocol
from pi_lsp.agent.context_edits import ContextEditOutcome, edit_context, restore_context
from pi_lsp.agent.context_inspector import ContextBreakdown, inspect_context
from pi_lsp.handlers.base import pi_request
from pi_lsp.handlers.configuration import wait_for_client_settings
from pi_lsp.services import Services


@pi_request(protocol.CONTEXT)
async def on_context(services: Services, params: protocol.SessionParams) -> protocol.ContextResult:
    await wait_for_client_settings(services)  # the model, window and tokenizer are the settings'
    runtime = services.sessions.get(params.session_id)
    live = services.live
    # Looking up the context window may import litellm (seconds): keep the event loop free.
    window = await asyncio.to_thread(live.context_window, live.model_for(runtime))
    breakdown = await inspect_context(live, runtime, services.agent.tools(), window)
    return _context_result(runtime.id, breakdown)


@pi_request(protocol.CONTEXT_EDIT)
def on_context_edit(
    services: Services, params: protocol.ContextEditParams
) -> protocol.ContextEditResult:
    runtime = services.sessions.get(params.session_id)
    return _result(runtime.id, edit_context(runtime, params.target_id, params.replacement))


@pi_request(protocol.CONTEXT_RESTORE)
def on_context_restore(
    services: Services, params: protocol.ContextRestoreParams
) -> protocol.ContextEditResult:
    runtime = services.sessions.get(params.session_id)
    return _result(runtime.id, restore_context(runtime, params.target_id))


def _result(session_id: str, outcome: ContextEditOutcome) -> protocol.ContextEditResult:
    return protocol.ContextEditResult(session_id, outcome.entry_id, outcome.leaf_id, outcome.effect)


def _context_result(session_id: str, breakdown: ContextBreakdown) -> protocol.ContextResult:
    total = breakdown.total
    compact_at = breakdown.compact_at
    return protocol.ContextResult(
        session_id=session_id,
        total=total,
        basis=breakdown.basis,
        context_window=breakdown.context_window,
        compact_at=compact_at,
        free_to_window=breakdown.context_window - total,
        free_to_compaction=None if compact_at is None else compact_at - total,
        parts=breakdown.parts,
    )
