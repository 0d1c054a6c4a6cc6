"""The session's model and thinking level as ACP session config options (the clients' pickers).

The same calls as ``pi/setModel`` and ``pi/setThinkingLevel``: a change is recorded in the
session file, as pi records ``/model`` and ``/thinking``. The model picker lists the session's
current model, the configured one and pi's ``models.json`` models first, then the chat models of
the provider table for the providers that have a key (``catalog.entries``: never a cloud
catalogue whose models would go to the user's own endpoint).
"""

from __future__ import annotations

import asyncio

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.errors import InvalidParamsError, echoed
from pi_lsp.protocol import THINKING_LEVELS
from pi_lsp.services import Services

MODEL = "model"
THINKING_LEVEL = "thinking_level"
MODELS_LISTED = 60


async def config_options(services: Services, runtime: SessionRuntime) -> list:
    return [await _model_option(services, runtime), _thinking_option(services, runtime)]


async def set_config_option(
    services: Services, runtime: SessionRuntime, config_id: str, value: str | bool
) -> None:
    """Set an option to one of the values it offers; anything else is InvalidParams."""
    offered = {option.id: option for option in await config_options(services, runtime)}
    option = offered.get(config_id)
    if option is None:
        raise InvalidParamsError(
            f"unknown configId {echoed(repr(config_id))}: the options are {', '.join(offered)}"
        )
    if value not in {choice.value for choice in option.options}:
        raise InvalidParamsError(
            f"{config_id} does not take the value {echoed(repr(value))}: not one of its options"
        )
    if config_id == MODEL:
        services.agent.set_model(runtime, str(value))
    else:
        services.agent.set_thinking_level(runtime, str(value))


async def _model_option(services: Services, runtime: SessionRuntime) -> SessionConfigOptionSelect:
    from pi_lsp.llm.models import list_known_models

    catalog = services.live.catalog()

    def listed() -> tuple[list[str], str]:
        current = services.live.model_for(runtime)
        configured = services.live.configured_model()
        entries = catalog.entries(list_known_models(""), configured)
        models = [entry.model for entry in entries if entry.available][:MODELS_LISTED]
        # The configured model stays listed (first) whatever the session switched to.
        for model in (configured, current):
            if model is not None and model.model not in models:
                models.insert(0, model.model)
        current_value = current.model if current is not None else ""
        if current_value not in models:
            models.insert(0, current_value)
        return models, current_value

    models, current_value = await asyncio.to_thread(listed)
    return SessionConfigOptionSelect(
        id=MODEL,
        name="Model",
        category="model",
        type="select",
        current_value=current_value,
        options=[
            SessionConfigSelectOption(value=model, name=model or "(none configured)")
            for model in models
        ],
    )


def _thinking_option(services: Services, runtime: SessionRuntime) -> SessionConfigOptionSelect:
    return SessionConfigOptionSelect(
        id=THINKING_LEVEL,
        name="Thinking",
        category="thought_level",
        type="select",
        current_value=services.live.thinking_level(runtime),
        options=[SessionConfigSelectOption(value=level, name=level) for level in THINKING_LEVELS],
    )
