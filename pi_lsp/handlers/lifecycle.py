"""``initialize`` and ``initialized``: configuration, services, logging to the client.

``initialize`` is answered fast: it reads the configuration and builds the services, and never
imports litellm (that takes seconds). Once the client says ``initialized``, litellm is loaded on a
background thread so the first prompt does not wait for it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Generator
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from pi_lsp import protocol
from pi_lsp.agent.resource_service import ResourceService
from pi_lsp.agent.system_prompt import agent_dir
from pi_lsp.config import load_config
from pi_lsp.handlers import configuration, language_models
from pi_lsp.handlers.base import to_plain
from pi_lsp.handlers.permissions import LspPermissionAsker
from pi_lsp.handlers.progress import Progress
from pi_lsp.logs import ClientLogHandler
from pi_lsp.services import Services
from pi_lsp.startup import RESUME_AFTER_SECONDS, resume_collection
from pi_lsp.transport.client_gone import watch_the_client

logger = logging.getLogger(__name__)


def register(server) -> None:
    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(on_did_change_watched_files)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(
        configuration.on_did_change_configuration
    )
    server.feature(types.INITIALIZE)(on_initialize)
    server.feature(types.INITIALIZED)(on_initialized)
    server.feature(types.SHUTDOWN)(on_shutdown)


def on_initialize(ls, params: types.InitializeParams) -> None:
    root = _workspace_root(params, ls.working_directory)
    options = to_plain(params.initialization_options)
    publisher = ResourcePublisher(ls)
    trusted = load_config(root, options).settings.trusted
    resources = ResourceService(root, agent_dir(), trusted=trusted, on_change=publisher.publish)
    config = load_config(root, options, pi_settings=resources.snapshot.settings.settings.merged)
    ls.services = Services.create(
        config,
        resources,
        lambda notification: ls.protocol.notify(protocol.EVENT, protocol.to_json(notification)),
        editor=ls.editor_bridge(),
        progress=lambda token, title: Progress(ls, token, title),
        initialization_options=options,
        asker=LspPermissionAsker(ls),
    )
    language_models.connect(ls, params.capabilities)
    watch_the_client(ls, params.process_id)
    for problem in config.problems:
        logger.warning("configuration: %s", problem)
    logger.info("pi-lsp serving %s; sessions in %s", root, config.session_dir)


def on_initialized(ls, params: types.InitializedParams) -> None:
    if ls.services is None:
        return
    ls.log_handler = ClientLogHandler(ls)
    logging.getLogger("pi_lsp").addHandler(ls.log_handler)
    problems = ls.services.config.problems
    if problems:
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Warning, message="pi-lsp settings: " + "; ".join(problems)
            )
        )
    configuration.start_pulling(ls)
    ls.services.agent.client.preload()
    asyncio.get_running_loop().call_later(RESUME_AFTER_SECONDS, resume_collection)
    ls.services.mcp.on_failure = lambda message: ls.window_show_message(
        types.ShowMessageParams(type=types.MessageType.Warning, message=message)
    )
    ls.services.mcp.open_sign_in_page = functools.partial(_show_sign_in_page, ls)
    resources = ls.services.resources
    resources.publish_current()  # the first diagnostics, and the MCP servers start
    ls.resource_watch = asyncio.get_running_loop().create_task(resources.watch())
    _start_session_index(ls)


async def _show_sign_in_page(ls, server: str, url: str) -> None:
    """An MCP server's authorization page, in the user's browser (``window/showDocument``), or
    as a link in a message when the client cannot show it."""
    window = ls.client_capabilities.window if ls.client_capabilities else None
    shown = None
    if window is not None and window.show_document is not None and window.show_document.support:
        try:
            shown = await ls.window_show_document_async(
                types.ShowDocumentParams(uri=url, external=True, take_focus=True)
            )
        except Exception as refused:  # noqa: BLE001 - the link in a message does instead
            logger.info("window/showDocument of a sign-in page failed: %s", refused)
    if shown is None or not shown.success:
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Info,
                message=f'Open this page to sign in to MCP server "{server}": {url}',
            )
        )


def _start_session_index(ls) -> None:
    """Index the workspace's sessions in the background, and watch their directories."""
    watch = ls.services.start_session_index()
    if watch is not None:
        ls.session_watch = asyncio.get_running_loop().create_task(watch)


def on_shutdown(ls, params: None) -> Generator[Any, Any, None]:
    """A generator, as pygls's own lifecycle handlers are: it answers at once (before an `exit`
    read right behind the request, a file as stdin, ends the process) unless MCP servers are
    running, whose stop it then hands to pygls to await before answering."""
    if ls.services is None:
        return
    ls.services.resources.stop()
    if ls.connection_ended is None:
        ls.services.agent.shutdown()
    else:
        # The shared server: other clients' commands run in this process too, and the loop
        # goes on, so each aborted turn ends its own command.
        ls.services.agent.abort_all()
    ls.services.sessions.close_all()
    if ls.session_watch is not None:
        ls.session_watch.cancel()
    ls.services.stop_session_index()
    if ls.services.mcp.running:
        yield ls.services.mcp.close, (), {}


def on_did_change_watched_files(ls, params: types.DidChangeWatchedFilesParams) -> None:
    """Clients that watch files for the server are honoured too: any change reloads resources."""
    if ls.services is not None:
        ls.services.resources.reload()


class ResourcePublisher:
    """Sends ``pi/resourcesChanged`` and publishes
    resource problems as diagnostics on their files."""

    def __init__(self, server) -> None:
        self._server = server
        self._published: set[str] = set()

    def publish(self, changes, snapshot) -> None:
        services = self._server.services
        if services is not None:  # the MCP servers follow mcp.json (connected in the background)
            services.mcp.configure(snapshot.mcp.servers)
        if not changes.is_empty:
            self._server.protocol.notify(protocol.RESOURCES_CHANGED, protocol.to_json(changes))
        by_path: dict[str, list[types.Diagnostic]] = {}
        for problem in snapshot.diagnostics:
            line = max(problem.line - 1, 0)
            by_path.setdefault(problem.path, []).append(
                types.Diagnostic(
                    range=types.Range(
                        start=types.Position(line=line, character=0),
                        end=types.Position(line=line + 1, character=0),
                    ),
                    message=problem.message,
                    severity=types.DiagnosticSeverity.Error
                    if problem.severity == "error"
                    else types.DiagnosticSeverity.Warning,
                    source="pi",
                )
            )
        for path in self._published - set(by_path):
            by_path[path] = []  # clear what was fixed
        for path, diagnostics in by_path.items():
            self._server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=from_fs_path(path) or path, diagnostics=diagnostics
                )
            )
        self._published = {path for path, diagnostics in by_path.items() if diagnostics}


def _workspace_root(params: types.InitializeParams, working_directory: str | None) -> Path:
    if params.workspace_folders:
        return Path(to_fs_path(params.workspace_folders[0].uri) or ".").resolve()
    if params.root_uri:
        return Path(to_fs_path(params.root_uri) or ".").resolve()
    if params.root_path:
        return Path(params.root_path).resolve()
    return Path(working_directory).resolve() if working_directory else Path.cwd()
