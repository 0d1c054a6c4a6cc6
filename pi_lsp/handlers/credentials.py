"""Handlers of the API-key requests and notification.

``pi/login`` and ``pi/logout`` write pi's ``auth.json`` (Neovim's ``:PiLogin``/``:PiLogout``);
``pi/setCredentials`` hands over the keys an editor keeps in its own secret storage (VS Code),
which never reach a file. A malformed notification cannot be answered: it is logged, without
its values, and ignored.
"""

from __future__ import annotations

import logging

from pi_lsp import protocol
from pi_lsp.errors import InvalidParamsError
from pi_lsp.handlers.base import pi_request, to_plain
from pi_lsp.services import Services

logger = logging.getLogger(__name__)


@pi_request(protocol.LOGIN)
def on_login(services: Services, params: protocol.LoginParams) -> protocol.LoginResult:
    path = services.live.login(
        params.provider, params.key, replace_subscription=params.replace_subscription
    )
    return protocol.LoginResult(params.provider.strip(), path)


@pi_request(protocol.LOGOUT)
def on_logout(services: Services, params: protocol.LogoutParams) -> protocol.LogoutResult:
    removed, path = services.live.logout(params.provider)
    return protocol.LogoutResult(params.provider.strip(), removed, path)


def on_set_credentials(ls, raw) -> None:
    if ls.services is None:
        return
    try:
        params = protocol.parse_params(protocol.SET_CREDENTIALS, to_plain(raw))
    except InvalidParamsError as problem:
        logger.warning("ignored %s: %s", protocol.SET_CREDENTIALS, problem.message)
        return
    ls.services.live.set_editor_keys(params.credentials)
    logger.info("the editor's API keys: %s", ", ".join(sorted(params.credentials)) or "none")


def register(server) -> None:
    server.feature(protocol.SET_CREDENTIALS)(on_set_credentials)
