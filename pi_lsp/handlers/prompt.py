"""Handlers of ``pi/prompt`` and ``pi/abort``."""

from __future__ import annotations

from pi_lsp import protocol
from pi_lsp.handlers.base import pi_request
from pi_lsp.handlers.configuration import wait_for_client_settings
from pi_lsp.services import Services


@pi_request(protocol.PROMPT)
async def on_prompt(services: Services, params: protocol.PromptParams) -> protocol.PromptResult:
    await wait_for_client_settings(services)
    runtime = services.sessions.get(params.session_id)
    images = [{"data": image.data, "mimeType": image.mime_type} for image in params.images]
    return await services.agent.prompt(runtime, params.text, images, params.streaming_behavior)


@pi_request(protocol.ABORT)
def on_abort(services: Services, params: protocol.SessionParams) -> protocol.AbortResult:
    runtime = services.sessions.get(params.session_id)
    return protocol.AbortResult(runtime.id, services.agent.abort(runtime))
