"""Handler of ``pi/compact``: manual compaction, with
``$/progress`` when the client offers a token."""

from __future__ import annotations

from pi_lsp import protocol
from pi_lsp.handlers.base import pi_request
from pi_lsp.handlers.configuration import wait_for_client_settings
from pi_lsp.services import Services


@pi_request(protocol.COMPACT)
async def on_compact(services: Services, params: protocol.CompactParams) -> protocol.CompactResult:
    await wait_for_client_settings(services)  # the summary is written by the client's model
    runtime = services.sessions.get(params.session_id)
    progress = services.progress(params.work_done_token, "Compacting the session")
    try:
        result = await services.agent.compact(
            runtime, params.instructions, progress=progress.report
        )
    finally:
        progress.end()
    return result
