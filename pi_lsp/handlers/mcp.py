"""Handlers of the MCP status and control requests: ``pi/mcp``, ``pi/mcpReconnect``,
``pi/mcpSetEnabled``, ``pi/mcpLogin``, ``pi/mcpLogout`` (the servers themselves are
``pi_lsp/mcp``'s)."""

from __future__ import annotations

from typing import Any

from pi_lsp import protocol
from pi_lsp.errors import InvalidParamsError, McpSignInError
from pi_lsp.handlers.base import pi_request
from pi_lsp.services import Services


@pi_request(protocol.MCP)
def on_mcp(services: Services, params: protocol.NoParams) -> protocol.McpResult:
    return protocol.McpResult([_status(status) for status in services.mcp.statuses()])


@pi_request(protocol.MCP_RECONNECT)
def on_mcp_reconnect(
    services: Services, params: protocol.McpServerParams
) -> protocol.McpServerStatus:
    try:
        return _status(services.mcp.reconnect(params.name))
    except KeyError as unknown:
        raise InvalidParamsError(str(unknown.args[0])) from None


@pi_request(protocol.MCP_SET_ENABLED)
def on_mcp_set_enabled(
    services: Services, params: protocol.McpSetEnabledParams
) -> protocol.McpServerStatus:
    try:
        return _status(services.mcp.set_enabled(params.name, params.enabled))
    except KeyError as unknown:
        raise InvalidParamsError(str(unknown.args[0])) from None


@pi_request(protocol.MCP_LOGIN)
async def on_mcp_login(
    services: Services, params: protocol.McpLoginParams
) -> protocol.McpServerStatus:
    from pi_lsp.mcp.connection import McpCallError

    try:
        if params.redirect_url is not None:
            return _status(await _finish_sign_in(services, params.name, params.redirect_url))
        return _status(await services.mcp.sign_in(params.name))
    except KeyError as unknown:
        raise InvalidParamsError(str(unknown.args[0])) from None
    except McpCallError as failure:
        raise McpSignInError(str(failure)) from None


async def _finish_sign_in(services: Services, name: str, redirect_url: str) -> dict[str, Any]:
    """A pasted URL that is not the waiting sign-in's redirect is the caller's mistake."""
    from pi_lsp.mcp.connection import McpCallError

    try:
        services.mcp.paste_redirect(name, redirect_url)
    except McpCallError as wrong:
        raise InvalidParamsError(str(wrong)) from None
    return await services.mcp.signed_in(name)


@pi_request(protocol.MCP_LOGOUT)
def on_mcp_logout(services: Services, params: protocol.McpServerParams) -> protocol.McpLogoutResult:
    from pi_lsp.mcp.connection import McpCallError

    try:
        removed, status = services.mcp.sign_out(params.name)
    except KeyError as unknown:
        raise InvalidParamsError(str(unknown.args[0])) from None
    except McpCallError as failure:
        raise InvalidParamsError(str(failure)) from None
    return protocol.McpLogoutResult(removed=removed, server=_status(status))


def _status(status: dict[str, Any]) -> protocol.McpServerStatus:
    return protocol.McpServerStatus(
        name=status["name"],
        source=status["source"],
        scope=status["scope"],
        transport=status["transport"],
        state=status["state"],
        exposure=status["exposure"],
        tool_count=status["toolCount"],
        tool_exposures=status["toolExposures"],
        last_error=status["lastError"],
        stderr_tail=status["stderrTail"],
    )
