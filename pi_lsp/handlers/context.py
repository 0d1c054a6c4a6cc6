"""Handlers of the context requests: ``pi/contextEdit`` and ``pi/contextRestore``."""

from __future__ import annotations

from pi_lsp import protocol
from pi_lsp.agent.context_edits import ContextEditOutcome, edit_context, restore_context
from pi_lsp.handlers.base import pi_request
from pi_lsp.services import Services


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
