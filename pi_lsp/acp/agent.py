"""The ACP agent: ``pi-lsp acp``'s requests as calls to the same services the LSP handlers call.

An adapter, like ``handlers/``: each ACP method takes its (SDK-validated) params, calls one
service and shapes the answer with the SDK's schema types. A workspace (the ``cwd`` of
``session/new``) gets its service graph from ``Services.create`` once, so sessions are the same
``.pi/sessions`` files the LSP server uses. The agent's events go through ``updates.py`` into
``session/update`` notifications, sent in order by one queue (``outbox.py``); a prompt answers
only once every update of its turn has been sent.

Tool permissions ask the client with ``session/request_permission`` (``permissions.py``), in
the ACP session whose turn asks.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.helpers import update_agent_message_text, update_available_commands
from acp.schema import (
    AgentCapabilities,
    CloseSessionResponse,
    ConfigOptionUpdate,
    Cost,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    UsageUpdate,
)

from pi_lsp import __version__
from pi_lsp.acp import commands, config_options, prompts, session_titles, updates
from pi_lsp.acp.editor import AcpFiles, prompting_session
from pi_lsp.acp.mcp_servers import mcp_servers_of
from pi_lsp.acp.outbox import Outbox
from pi_lsp.acp.permissions import AcpPermissionAsker, AskedSession
from pi_lsp.acp.threads import Threads
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.errors import (
    InvalidParamsError,
    PiError,
    PromptTakenBackError,
    SessionNotFoundError,
    echoed,
)
from pi_lsp.protocol import EventNotification
from pi_lsp.services import Services
from pi_lsp.session.transcript import transcript

logger = logging.getLogger(__name__)


class PiAcpAgent:
    """pi-lsp behind the Agent Client Protocol (implements the SDK's ``acp.interfaces.Agent``)."""

    def __init__(self, options: dict[str, Any] | None = None, client=None) -> None:
        self.options = options or {}
        """The same keys as the LSP ``initializationOptions`` (``pi-lsp acp --options``)."""
        self._model_client = client
        self.connection: Any = None
        self.client_capabilities: Any = None
        """What the client offered at ``initialize`` (``fs`` decides how tools reach files)."""
        self._workspaces: dict[Path, Services] = {}
        self._sessions: dict[str, tuple[Services, SessionRuntime]] = {}
        """ACP session id → its workspace and the pi session it shows now (``/new`` switches)."""
        self._acp_ids: dict[str, str] = {}
        """pi session id → the ACP session it is shown in."""
        self._running_diffs: dict[str, updates.RunningDiffs] = {}
        """pi session id → the diffs of its running ``write``/``edit`` calls."""
        self.outbox = Outbox(lambda: self.connection)
        self._background: set[asyncio.Task] = set()
        self._untold: dict[int, list[str]] = {}
        """What a workspace's MCP servers had to say before it had a session (by ``id``)."""

    def on_connect(self, connection: Any) -> None:
        self.connection = connection

    # ------------------------------------------------------------------ lifecycle

    async def initialize(
        self, protocol_version: int, client_capabilities=None, client_info=None, **kwargs: Any
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        # ACP's negotiation: the requested version if supported, else the latest supported one;
        # pi-lsp (through the SDK) supports exactly one.
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                # Stdio servers (which every agent must take) and streamable-HTTP ones; pi has
                # no legacy SSE transport.
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                ),
            ),
            auth_methods=[],
            agent_info=Implementation(name="pi-lsp", title="pi-lsp", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise _invalid("pi-lsp has no authentication methods")

    # ------------------------------------------------------------------ sessions

    async def new_session(self, cwd: str, mcp_servers=None, **kwargs: Any) -> NewSessionResponse:
        services = self._workspace(cwd)
        self._add_mcp_servers(services, mcp_servers)
        runtime = _call(services.sessions.create)
        self.outbox.unannounced.hold(runtime.id)
        try:
            self._show(runtime.id, services, runtime)
            options = await config_options.config_options(services, runtime)
        except BaseException:
            self.outbox.unannounced.forget(runtime.id)
            raise
        return NewSessionResponse(session_id=runtime.id, config_options=options)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers=None, **kwargs: Any
    ) -> LoadSessionResponse:
        services, runtime = self._open(cwd, session_id)
        self._add_mcp_servers(services, mcp_servers)
        for update in updates.replay(
            transcript(runtime.session).entries, services.config.workspace_root
        ):
            await self.connection.session_update(session_id, update)
        options = await config_options.config_options(services, runtime)
        return LoadSessionResponse(config_options=options)

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers=None, **kwargs: Any
    ) -> ResumeSessionResponse:
        services, runtime = self._open(cwd, session_id)
        self._add_mcp_servers(services, mcp_servers)
        options = await config_options.config_options(services, runtime)
        return ResumeSessionResponse(config_options=options)

    async def list_sessions(self, cwd: str | None = None, cursor=None, **kwargs: Any):
        """The workspace's sessions; one an ACP session moved to (``/new``, ``/fork``) is listed
        under that ACP session's id, in place of the one it left (``threads.py``)."""
        services = self._workspace(cwd or str(Path.cwd()))
        infos = _call(services.sessions.list)
        moves = self._threads(services).moves()
        written = {info.id for info in infos}
        moved = {acp_id: pi_id for acp_id, pi_id in moves.items() if pi_id in written}
        shown_as = {pi_id: acp_id for acp_id, pi_id in moved.items()}
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=shown_as.get(info.id, info.id),
                    cwd=info.cwd or str(services.config.workspace_root),
                    title=session_titles.title_of(info.name, info.first_message),
                    updated_at=info.modified,
                )
                for info in infos
                if info.id not in moved
            ]
        )

    # ------------------------------------------------------------------ prompts

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        services, runtime = self._session(session_id)
        prompting_session.set(session_id)
        try:
            text, images, attached = prompts.prompt_content(prompt)
            for path in attached:  # the user showed the agent these files: an editor read
                services.agent.note_editor_file_op(path, "read")
            command = commands.parse(text.strip())
            if command is not None:
                return await self._run_command(session_id, services, runtime, command)
            title = session_titles.first_prompt_title(runtime, text)
            if title is not None:
                self.outbox.enqueue(session_id, session_titles.title_update(title))
            result = await services.agent.prompt(runtime, text, images)
        except PromptTakenBackError:
            # A queued follow-up session/cancel took out of the queue: it never ran.
            await self._flush(runtime)
            return PromptResponse(stop_reason="cancelled")
        except asyncio.CancelledError:
            # A queued follow-up dropped with its session (the server shuts down);
            # a cancellation of this request itself goes on.
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            await self._flush(runtime)
            return PromptResponse(stop_reason="cancelled")
        except PiError as error:
            await self._flush(runtime)
            raise _request_error(error) from error
        await self._flush(runtime)
        await self._send_turn_end(session_id, runtime, result)
        return PromptResponse(stop_reason=updates.stop_reason(result.stop_reason))

    async def _run_command(
        self,
        session_id: str,
        services: Services,
        runtime: SessionRuntime,
        command: tuple[str, list[str]],
    ) -> PromptResponse:
        outcome = await commands.run(services, runtime, *command)
        if outcome.runtime is not None:
            self._threads(services).move(session_id, outcome.runtime.id)
            self._show(session_id, services, outcome.runtime)
        await self._flush(runtime)
        await self.connection.session_update(session_id, update_agent_message_text(outcome.text))
        if outcome.title is not None:
            await self.connection.session_update(
                session_id, session_titles.title_update(outcome.title)
            )
        if command[0] in commands.CONFIG_COMMANDS:
            await self._send_config_options(session_id)
        return PromptResponse(stop_reason="end_turn")

    async def _send_turn_end(self, session_id: str, runtime: SessionRuntime, result) -> None:
        """A failed answer's error as an agent message, then the context's size and the cost."""
        if result.error_message and result.stop_reason == "error":
            await self.connection.session_update(
                session_id, update_agent_message_text(f"\n\nError: {result.error_message}")
            )
        if result.context_tokens is None:
            return
        cost = runtime.usage.totals(runtime.session.entries).cost
        await self.connection.session_update(
            session_id,
            UsageUpdate(
                session_update="usage_update",
                used=result.context_tokens,
                size=result.context_window,
                cost=Cost(amount=cost, currency="USD"),
            ),
        )

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """The model or the thinking level, as ``pi/setModel`` and ``pi/setThinkingLevel``."""
        services, runtime = self._session(session_id)
        try:
            await config_options.set_config_option(services, runtime, config_id, value)
        except PiError as error:
            raise _request_error(error) from error
        return SetSessionConfigOptionResponse(
            config_options=await config_options.config_options(services, runtime)
        )

    async def _send_config_options(self, session_id: str) -> None:
        services, runtime = self._session(session_id)
        options = await config_options.config_options(services, runtime)
        await self.connection.session_update(
            session_id,
            ConfigOptionUpdate(session_update="config_option_update", config_options=options),
        )

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """``session/cancel``: as ``pi/abort`` (the partial answer is saved, commands killed),
        and the prompts queued behind the turn end as cancelled too, as ACP asks."""
        if session_id in self._sessions:
            services, runtime = self._sessions[session_id]
            services.agent.clear_queue(runtime)
            services.agent.abort(runtime)

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """``session/close``: its turn ends as on ``session/cancel``, then pi-lsp forgets it (its
        file is closed unless another ACP session shows the same pi session)."""
        services, runtime = self._session(session_id)
        services.agent.clear_queue(runtime)
        services.agent.abort(runtime)
        if runtime.turn is not None:
            await asyncio.gather(runtime.turn, return_exceptions=True)
        await runtime.summary_finished.wait()
        await self._flush(runtime)
        del self._sessions[session_id]
        if self._let_go(runtime):
            services.sessions.close(runtime)
        return CloseSessionResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(echoed(method))

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # ------------------------------------------------------------------ shutdown

    async def stop_mcp_servers(self) -> None:
        await asyncio.gather(*(services.mcp.close() for services in self._workspaces.values()))

    def shutdown(self) -> None:
        for services in self._workspaces.values():
            services.resources.stop()
            services.agent.shutdown()
            services.sessions.close_all()
            services.stop_session_index()

    # ------------------------------------------------------------------ helpers

    def _workspace(self, cwd: str) -> Services:
        if not Path(cwd).is_absolute():
            raise _invalid(f"cwd must be an absolute path: {echoed(cwd)}")
        root = Path(cwd).resolve()
        services = self._workspaces.get(root)
        if services is None:
            services = self._workspaces[root] = self._create_services(root)
        return services

    def _create_services(self, root: Path) -> Services:
        from pi_lsp.agent.resource_service import ResourceService
        from pi_lsp.agent.system_prompt import agent_dir
        from pi_lsp.config import load_config

        trusted = load_config(root, self.options).settings.trusted
        resources = ResourceService(
            root,
            agent_dir(),
            trusted=trusted,
            on_change=lambda changes, snapshot: self._resources_changed(root, changes, snapshot),
        )
        config = load_config(
            root, self.options, pi_settings=resources.snapshot.settings.settings.merged
        )
        for problem in config.problems:
            logger.warning("configuration: %s", problem)
        services = Services.create(
            config,
            resources,
            lambda notification: self._on_event(root, notification),
            client=self._model_client,
            editor=AcpFiles(
                lambda: self.connection, lambda: self.client_capabilities, self._flush_session
            ),
            initialization_options=self.options,
            asker=AcpPermissionAsker(lambda: self.connection, self._asked_session, root),
        )
        services.client_configuration_ready.set()  # ACP has no workspace/configuration
        services.agent.client.preload()
        services.mcp.on_failure = lambda message: self._tell_sessions(services, message)
        services.mcp.open_sign_in_page = functools.partial(self._give_sign_in_link, services)
        services.mcp.configure(resources.snapshot.mcp.servers)  # connected in the background
        self._spawn(resources.watch())
        watch = services.start_session_index()
        if watch is not None:
            self._spawn(watch)
        logger.info("pi-lsp acp serving %s; sessions in %s", root, config.session_dir)
        return services

    def _tell_sessions(self, services: Services, text: str) -> None:
        """An agent message in every ACP session of ``services``' workspace (a server that
        failed to start says why once, in the chat)."""
        told = False
        for acp_id, (shown_in, _) in list(self._sessions.items()):
            if shown_in is services:
                self.outbox.enqueue(acp_id, update_agent_message_text(text + "\n"))
                told = True
        if not told:  # no session yet: the first one shown hears it
            self._untold.setdefault(id(services), []).append(text)

    async def _give_sign_in_link(self, services: Services, server: str, url: str) -> None:
        """An MCP server's authorization page, as a link in the chat (ACP cannot open pages)."""
        self._tell_sessions(
            services,
            f"Open this page to sign in to MCP server {server}: [{url}]({url})\n"
            "If the browser cannot come back to this machine, paste the address it ends on: "
            f"`/mcp login {server} <redirected URL>`",
        )

    def _add_mcp_servers(self, services: Services, mcp_servers: Any) -> None:
        """The client's MCP servers join the workspace's (``mcp_servers.py``)."""
        for problem in mcp_servers_of(services, mcp_servers or []):
            logger.warning("%s", problem)

    def _resources_changed(self, root: Path, changes: Any, snapshot: Any) -> None:
        """Skills and prompt templates reloaded: the clients' command lists follow; the MCP
        servers follow mcp.json."""
        services = self._workspaces.get(root)
        if services is not None:
            services.mcp.configure(snapshot.mcp.servers)
        if services is None or changes.is_empty:
            return
        commands_now = update_available_commands(commands.available_commands(services))
        for acp_id, (shown_in, _) in self._sessions.items():
            if shown_in is services:
                self.outbox.enqueue(acp_id, commands_now)

    def _open(self, cwd: str, session_id: str) -> tuple[Services, SessionRuntime]:
        """The pi session ``session_id`` leads to now, shown in it."""
        services = self._workspace(cwd)
        moved_to = self._threads(services).current(session_id)
        try:
            runtime = services.sessions.open(moved_to)
        except SessionNotFoundError as error:
            if moved_to == session_id:
                raise _request_error(error) from error
            # It moved to a session never written (a /new with no prompt): it stayed where it was.
            runtime = _call(services.sessions.open, session_id)
        except PiError as error:
            raise _request_error(error) from error
        self._show(session_id, services, runtime)
        return services, runtime

    def _threads(self, services: Services) -> Threads:
        return Threads(services.sessions.session_dir)

    def _asked_session(self, pi_session_id: str) -> AskedSession | None:
        """Where a permission question of that pi session's turn goes."""
        acp_id = self._acp_ids.get(pi_session_id)
        services, runtime = self._sessions.get(acp_id, (None, None)) if acp_id else (None, None)
        if acp_id is None or services is None or runtime is None or runtime.id != pi_session_id:
            return None
        return AskedSession(
            acp_id, lambda: self._flush(runtime), lambda: services.agent.abort(runtime)
        )

    def _session(self, session_id: str) -> tuple[Services, SessionRuntime]:
        found = self._sessions.get(session_id)
        if found is None:
            raise RequestError(
                RESOURCE_NOT_FOUND,
                f"unknown session {echoed(session_id)}: session/new or session/load it first",
            )
        return found

    def _show(self, acp_id: str, services: Services, runtime: SessionRuntime) -> None:
        # The client holds the session by id from now on: it stays open, never closed as idle.
        services.sessions.pin(runtime)
        previous = self._sessions.get(acp_id)
        self._sessions[acp_id] = (services, runtime)
        self._acp_ids[runtime.id] = acp_id
        # The one /new or /fork left: when no client holds it now, it may close when idle.
        if previous is not None and previous[1] is not runtime and self._let_go(previous[1]):
            previous[0].sessions.unpin(previous[1])
        self.outbox.enqueue(
            acp_id, update_available_commands(commands.available_commands(services))
        )
        for text in self._untold.pop(id(services), []):
            self.outbox.enqueue(acp_id, update_agent_message_text(text + "\n"))

    def _let_go(self, runtime: SessionRuntime) -> bool:
        """Forget what is kept for a pi session no ACP session shows any more; False (nothing
        forgotten) while one still does."""
        if any(shown is runtime for _, shown in self._sessions.values()):
            return False
        self._acp_ids.pop(runtime.id, None)
        self._running_diffs.pop(runtime.id, None)
        return True

    def _on_event(self, root: Path, notification: EventNotification) -> None:
        acp_id = self._acp_ids.get(notification.session_id)
        if acp_id is None:
            return
        running = self._running_diffs.setdefault(notification.session_id, {})
        for update in updates.event_updates(notification.event, root, running):
            self.outbox.enqueue(acp_id, update)

    async def _flush_session(self, acp_id: str) -> None:
        found = self._sessions.get(acp_id)
        if found is not None:
            await self._flush(found[1])

    async def _flush(self, runtime: SessionRuntime) -> None:
        """Wait until every update the session's events became has been sent."""
        runtime.events.flush()
        await self.outbox.join()

    def _spawn(self, coroutine) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


RESOURCE_NOT_FOUND = -32002
"""ACP's code for an unknown session (the TypeScript SDK treats it specially, e.g. an idempotent
``session/close``)."""


def _invalid(message: str) -> RequestError:
    return RequestError(InvalidParamsError.code, message)


def _request_error(error: PiError) -> RequestError:
    """A typed pi-lsp error as ACP's JSON-RPC error: an unknown session is ACP's -32002; the
    others keep their code."""
    code = RESOURCE_NOT_FOUND if isinstance(error, SessionNotFoundError) else error.code
    return RequestError(code, error.message, error.data)


def _call(function, *arguments):
    """Run a service call, turning pi-lsp's typed errors into the JSON-RPC errors they carry."""
    try:
        return function(*arguments)
    except PiError as error:
        raise _request_error(error) from error
