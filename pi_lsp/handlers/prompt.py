"""Handlers of ``pi/prompt`` and ``pi/abort``."""

from __future__ import annotations

from typing import Any

from pi_lsp import protocol
from pi_lsp.handlers.base import pi_request
from pi_lsp.handlers.configuration import wait_for_first_answer
from pi_lsp.services import Services


@pi_request(protocol.PROMPT)
async def on_prompt(services: Services, params: protocol.PromptParams) -> dict[str, Any]:
    await wait_for_first_answer(services)
    runtime = services.sessions.get(params.session_id)
    images = [{"data": image.data, "mimeType": image.mime_type} for image in params.images]
    return await services.agent.prompt(runtime, params.text, images, params.streaming_behavior)


@pi_request(protocol.ABORT)
def on_abort(services: Services, params: protocol.SessionParams) -> dict[str, Any]:
    runtime = services.sessions.get(params.session_id)
    return {"sessionId": runtime.id, "aborted": services.agent.abort(runtime)}
