"""The client's live settings: ``workspace/configuration`` and ``workspace/didChangeConfiguration``.

Once the client is initialized the server asks it for the ``pi`` section (when the client says it
can answer ``workspace/configuration``), and asks again whenever the client reports a change.
Clients that cannot be asked may push the section inside ``didChangeConfiguration``'s
``settings`` instead. Every answer is merged over the ``initializationOptions`` and validated
once (``config.py``); the next turn uses it, and only problems that are new are shown.

While a question is out, the requests that use the settings (a prompt, a compaction, a summarized
navigation, ``pi/state``) wait for its answer: a user who changes a setting and prompts at once
(the permissions, the model) gets the new one, though the answer is a round trip to the editor.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

from pi_lsp.handlers.base import to_plain

logger = logging.getLogger(__name__)

SECTION = "pi"
ANSWER_TIMEOUT_SECONDS = 2.0
"""How long a request waits for the client's answer before it runs on the settings in force."""


def start_pulling(ls) -> None:
    """Ask for the ``pi`` section now, if the client can answer; otherwise nothing is coming."""
    if not _can_pull(ls):
        ls.services.client_configuration_ready.set()
        return
    _ask(ls)


def _ask(ls) -> None:
    """Ask for the ``pi`` section; requests that use the settings wait for the answer."""
    ls.services.client_configuration_ready.clear()
    ls.configuration_pull = asyncio.get_running_loop().create_task(pull(ls))


async def pull(ls) -> None:
    services = ls.services
    try:
        answer = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
        )
        apply(ls, to_plain(answer[0]) if answer else None)
    # A client that fails to answer, however it fails, keeps the settings in force.
    except Exception as error:  # noqa: BLE001
        logger.warning("workspace/configuration for %r failed: %s", SECTION, error)
    finally:
        # Only the latest question's answer is the client's current settings.
        if ls.configuration_pull is asyncio.current_task():
            services.client_configuration_ready.set()


def on_did_change_configuration(ls, params: types.DidChangeConfigurationParams) -> None:
    if ls.services is None:
        return
    if _can_pull(ls):
        _ask(ls)
        return
    settings = to_plain(params.settings)
    if isinstance(settings, dict) and isinstance(settings.get(SECTION), dict):
        apply(ls, settings[SECTION])


def apply(ls, section: Any) -> None:
    if section is not None and not isinstance(section, dict):
        logger.warning(
            "the client's %r settings are not an object (%s); ignored",
            SECTION,
            type(section).__name__,
        )
        return
    new_problems = ls.services.reconfigure(section)
    logger.info("client settings applied: %s", sorted((section or {}).keys()))
    if new_problems:
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Warning,
                message="pi-lsp settings: " + "; ".join(new_problems),
            )
        )


async def wait_for_client_settings(services) -> None:
    """Let a request use the client's latest settings (the first ones, or a change it reported),
    without hanging on a client that never answers."""
    try:
        await asyncio.wait_for(services.client_configuration_ready.wait(), ANSWER_TIMEOUT_SECONDS)
    except TimeoutError:
        logger.warning(
            "no workspace/configuration answer within %.0f s; using the settings in force",
            ANSWER_TIMEOUT_SECONDS,
        )
        # One wait per question: the requests after it do not wait again for a client that may
        # never answer. A late answer still applies (``pull``) from the next request on.
        services.client_configuration_ready.set()


def _can_pull(ls) -> bool:
    workspace = ls.client_capabilities.workspace
    return bool(workspace and workspace.configuration)
