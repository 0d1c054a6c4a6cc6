"""``initialize`` and ``initialized``: configuration, services, logging to the client.

``initialize`` is answered fast: it reads the configuration and builds the services, and never
imports litellm (that takes seconds). Once the client says ``initialized``, litellm is loaded on a
background thread so the first prompt does not wait for it.
"""

from __future__ import annotations

import logging
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from pi_lsp import protocol
from pi_lsp.agent.agent import Agent
from pi_lsp.agent.registry import SessionRegistry
from pi_lsp.config import load_config
from pi_lsp.handlers.base import to_plain
from pi_lsp.handlers.progress import Progress
from pi_lsp.logs import ClientLogHandler
from pi_lsp.services import Services

logger = logging.getLogger(__name__)


def register(server) -> None:
    server.feature(types.INITIALIZE)(on_initialize)
    server.feature(types.INITIALIZED)(on_initialized)
    server.feature(types.SHUTDOWN)(on_shutdown)


def on_initialize(ls, params: types.InitializeParams) -> None:
    root = _workspace_root(params)
    config = load_config(root, to_plain(params.initialization_options))
    sessions = SessionRegistry(
        config.session_dir, str(root), lambda event: ls.protocol.notify(protocol.EVENT, event),
        default_thinking_level=config.settings.thinking_level,
    )
    ls.services = Services(
        config=config,
        sessions=sessions,
        agent=Agent(config, sessions, editor=ls.editor_bridge()),
        progress=lambda token, title: Progress(ls, token, title),
    )
    for problem in config.problems:
        logger.warning("configuration: %s", problem)
    logger.info("pi-lsp serving %s; sessions in %s", root, config.session_dir)


def on_initialized(ls, params: types.InitializedParams) -> None:
    if ls.services is None:
        return
    logging.getLogger("pi_lsp").addHandler(ClientLogHandler(ls))
    problems = ls.services.config.problems
    if problems:
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message="pi-lsp settings: " + "; ".join(problems))
        )
    ls.services.agent.preload_in_background()


def on_shutdown(ls, params: None) -> None:
    if ls.services is not None:
        ls.services.agent.abort_all()
        ls.services.sessions.close_all()


def _workspace_root(params: types.InitializeParams) -> Path:
    if params.workspace_folders:
        return Path(to_fs_path(params.workspace_folders[0].uri) or ".").resolve()
    if params.root_uri:
        return Path(to_fs_path(params.root_uri) or ".").resolve()
    if params.root_path:
        return Path(params.root_path).resolve()
    return Path.cwd()
