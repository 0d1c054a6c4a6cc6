"""Handlers of ``pi/prompt``, ``pi/abort`` and the queue of prompts waiting for a turn."""

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


@pi_request(protocol.QUEUE)
def on_queue(services: Services, params: protocol.SessionParams) -> protocol.QueueResult:
    return services.agent.queue(services.sessions.get(params.session_id))


@pi_request(protocol.CLEAR_QUEUE)
def on_clear_queue(services: Services, params: protocol.SessionParams) -> protocol.ClearQueueResult:
    return services.agent.clear_queue(services.sessions.get(params.session_id))


@pi_request(protocol.REMOVE_QUEUED)
def on_remove_queued(
    services: Services, params: protocol.QueuedPromptParams
) -> protocol.QueueResult:
    runtime = services.sessions.get(params.session_id)
    return services.agent.remove_queued(runtime, params.id)


@pi_request(protocol.EDIT_QUEUED)
def on_edit_queued(services: Services, params: protocol.EditQueuedParams) -> protocol.QueueResult:
    runtime = services.sessions.get(params.session_id)
    return services.agent.edit_queued(runtime, params.id, params.text)
