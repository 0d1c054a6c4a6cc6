"""Handlers of the state and model requests.

``pi/state``, ``pi/models``, ``pi/setModel``, ``pi/setThinkingLevel``.
"""

from __future__ import annotations

import asyncio

from pi_lsp import protocol
from pi_lsp.agent.state import session_state
from pi_lsp.handlers.base import pi_request
from pi_lsp.handlers.configuration import wait_for_client_settings
from pi_lsp.services import Services

MODELS_LISTED = 500


@pi_request(protocol.STATE)
async def on_state(services: Services, params: protocol.SessionParams) -> protocol.StateResult:
    await wait_for_client_settings(services)  # the model and window it reports are the settings'
    runtime = services.sessions.get(params.session_id)
    # Looking up the context window may import litellm (seconds): keep the event loop free.
    tools = services.agent.tools()
    return await asyncio.to_thread(session_state, services.live, runtime, tools)


@pi_request(protocol.MODELS)
async def on_models(services: Services, params: protocol.ModelsParams) -> protocol.ModelsResult:
    """The usable models first (a key, or local), each with where it and its key come from."""
    from pi_lsp.llm.models import list_known_models

    catalog = services.live.catalog()
    configured = services.live.configured_model
    entries = await asyncio.to_thread(lambda: catalog.entries(list_known_models(""), configured()))
    wanted = (params.filter or "").lower()
    listed = [
        entry
        for entry in entries
        if (wanted in entry.model.lower() or wanted in (entry.name or "").lower())
        and params.provider in (None, entry.provider)
    ]
    return protocol.ModelsResult(listed[:MODELS_LISTED], catalog.providers())


@pi_request(protocol.SET_MODEL)
def on_set_model(services: Services, params: protocol.SetModelParams) -> protocol.SetModelResult:
    runtime = services.sessions.get(params.session_id)
    model = services.agent.set_model(runtime, params.model)
    return protocol.SetModelResult(runtime.id, model.model, model.provider, model.model_id)


@pi_request(protocol.SET_THINKING_LEVEL)
def on_set_thinking_level(
    services: Services, params: protocol.SetThinkingLevelParams
) -> protocol.SetThinkingLevelResult:
    runtime = services.sessions.get(params.session_id)
    services.agent.set_thinking_level(runtime, params.level)
    return protocol.SetThinkingLevelResult(runtime.id, params.level)
