"""Handlers of ``pi/resources`` and ``pi/reload``."""

from __future__ import annotations

from pi_lsp import protocol
from pi_lsp.handlers import shapes
from pi_lsp.handlers.base import pi_request
from pi_lsp.services import Services


@pi_request(protocol.RESOURCES)
def on_resources(services: Services, params: protocol.SessionParams) -> protocol.ResourcesResult:
    runtime = services.sessions.get(params.session_id)
    loaded = services.agent.nested_context.loaded(runtime.session.branch())
    return shapes.resources_result(services.resources.snapshot, loaded)


@pi_request(protocol.RELOAD)
def on_reload(services: Services, params: protocol.NoParams) -> protocol.ResourcesChanged:
    return services.resources.reload()
