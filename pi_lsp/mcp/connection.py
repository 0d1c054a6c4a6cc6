"""One MCP server's connection, on the official SDK's ``ClientSession`` and stdio transport.

A connection lives in a task of its own, which holds the SDK's transport and session contexts
open until ``stop`` (the SDK's stdio transport then closes the server's stdin, waits, and sends
SIGTERM, then SIGKILL, to its process group, so ``npx``/``uvx`` wrappers go too). Its state is
``connecting``, ``connected``, ``failed``, ``disconnected`` or ``disabled``; a failure keeps its
message and the tail of the server's stderr. A call on a dropped connection reconnects first; a
changed tool list (``notifications/tools/list_changed``) is listed again. Calls time out after
the server's ``timeout`` seconds, and every progress notification starts that time over.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any, Literal, cast

from pi_lsp.llm.config_values import COMMANDS, resolve_value
from pi_lsp.mcp.oauth_documents import offers_document
from pi_lsp.mcp.oauth_store import McpAuthFile, ServerTokenStorage
from pi_lsp.mcp.server_log import ServerLog
from pi_lsp.resources.mcp_config import McpServerConfig

logger = logging.getLogger(__name__)

State = Literal["connecting", "connected", "failed", "needs-auth", "disconnected", "disabled"]
NEEDS_SIGN_IN = (
    "the server answered 401 and needs a sign-in: choose Sign in in Pi: MCP Servers… (VS Code) "
    "or :PiMcp (Neovim), or run /mcp login {name} (ACP)"
)
HEADER_AUTHORIZED = (
    'the server answered 401 to the "Authorization" header of its mcp.json entry: check the '
    "token (OAuth sign-in applies to servers without that header)"
)
STDERR_TAIL_BYTES = 2_000
Progress = Callable[[float, float | None, str | None], None]


class McpCallError(Exception):
    """A call that did not reach a result: the message says why, for the model."""


class ServerConnection:
    """One configured server; ``on_change`` is called whenever its state or tools change."""

    def __init__(
        self,
        config: McpServerConfig,
        cwd: Path,
        on_change: Callable[[], None] = lambda: None,
        log: ServerLog | None = None,
        auth_file: McpAuthFile | None = None,
    ) -> None:
        self.config = config
        self._auth_file = auth_file
        """pi's ``mcp-auth.json``, where OAuth sign-ins are kept (None: no OAuth)."""
        self.cwd = cwd
        self._on_change = on_change
        self._log = log
        """Where the server's ``notifications/message`` go (pi's ``mcp.log``)."""
        self.state: State = "disconnected" if config.enabled else "disabled"
        self.tools: list[dict[str, Any]] = []
        """The server's tools as it lists them (``name``, ``description``, ``inputSchema``…)."""
        self.instructions: str | None = None
        self.has_resources = False
        self.last_error: str | None = None
        self._stderr: IO[bytes] | None = None
        self._unauthorized = False
        self._sign_in_callback: Any = None
        """The loopback listener of the sign-in under way, which also takes a pasted URL."""
        self._sign_in_done: asyncio.Future[None] | None = None
        self._session: Any = None
        self._task: asyncio.Task | None = None
        self._settled = asyncio.Event()
        self._stop = asyncio.Event()

    @property
    def name(self) -> str:
        return self.config.name

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Connect in the background (no-op when disabled or already running)."""
        if not self.config.enabled or (self._task is not None and not self._task.done()):
            return
        self._settled.clear()
        self._stop.clear()
        self._set_state("connecting")
        self._task = asyncio.get_running_loop().create_task(self._serve())

    async def wait_settled(self, timeout: float) -> bool:
        """Wait until the connection is up or failed; whether it settled within ``timeout``."""
        if self._task is None:
            return True
        try:
            await asyncio.wait_for(asyncio.shield(self._settled.wait()), timeout)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        self._stop.set()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        self._session = None

    async def reconnect(self) -> None:
        await self.stop()
        self.start()
        await self.wait_settled(self.config.timeout)

    def begin_reconnect(self) -> asyncio.Task:
        """Reconnect in the background; the state says ``connecting`` from now on."""
        if self.config.enabled:
            self._set_state("connecting")
        return asyncio.get_running_loop().create_task(self.reconnect())

    def stderr_tail(self, limit: int = STDERR_TAIL_BYTES) -> str:
        """The last ``limit`` bytes the server wrote to stderr."""
        if self._stderr is None:
            return ""
        try:
            size = os.fstat(self._stderr.fileno()).st_size
            with open(self._stderr.fileno(), "rb", closefd=False) as file:
                file.seek(max(0, size - limit))
                return file.read().decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return ""

    # ------------------------------------------------------------------ calls

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], progress: Progress | None = None
    ) -> dict[str, Any]:
        """The server's ``CallToolResult`` as JSON; :class:`McpCallError` when there is none."""
        session = await self._connected_session()
        return await self._request(
            lambda on_progress: session.call_tool(tool, arguments, progress_callback=on_progress),
            f"calling {tool}",
            progress,
        )

    async def list_resources(self, cursor: str | None) -> dict[str, Any]:
        from mcp import types

        session = await self._connected_session()
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        return await self._request(
            lambda _: session.list_resources(params=params), "listing resources"
        )

    async def list_resource_templates(self, cursor: str | None) -> dict[str, Any]:
        from mcp import types

        session = await self._connected_session()
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        return await self._request(
            lambda _: session.list_resource_templates(params=params),
            "listing resource templates",
        )

    async def read_resource(self, uri: str) -> dict[str, Any]:
        session = await self._connected_session()
        return await self._request(lambda _: session.read_resource(uri), f"reading {uri}")

    async def _connected_session(self) -> Any:
        if not self.config.enabled:
            raise McpCallError(f'MCP server "{self.name}" is disabled')
        if self.state in ("disconnected", "failed", "needs-auth") or self._task is None:
            await self.stop()
            self.start()
        await self.wait_settled(self.config.timeout)
        if self._session is None:
            raise McpCallError(
                f'MCP server "{self.name}" is not connected: {self.last_error or self.state}'
            )
        return self._session

    async def _request(
        self, send: Callable[[Any], Any], what: str, progress: Progress | None = None
    ) -> dict[str, Any]:
        from mcp import MCPError
        from mcp.types import CONNECTION_CLOSED
        from pydantic import ValidationError

        timeout = self.config.timeout
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout) as deadline:

                async def on_progress(done: float, total: float | None, message: str | None):
                    deadline.reschedule(loop.time() + timeout)
                    if progress is not None:
                        progress(done, total, message)

                result = await send(on_progress)
        except TimeoutError:
            raise McpCallError(
                f'MCP server "{self.name}" did not answer within {timeout:g} s ({what})'
            ) from None
        except MCPError as error:
            if error.code == CONNECTION_CLOSED:
                self._dropped("the connection closed")
                raise McpCallError(
                    f'MCP server "{self.name}" disconnected ({what}); '
                    "it reconnects on the next call"
                ) from None
            raise McpCallError(f'MCP server "{self.name}": {error.message}') from None
        except ValidationError as error:
            raise McpCallError(
                f'MCP server "{self.name}" sent an invalid result ({what}): {_invalid(error)}'
            ) from None
        except (OSError, RuntimeError, ValueError) as error:
            raise McpCallError(f'MCP server "{self.name}" failed {what}: {error}') from None
        return cast(
            dict[str, Any], result.model_dump(by_alias=True, exclude_none=True, mode="json")
        )

    # ------------------------------------------------------------------ the connection task

    async def _serve(self) -> None:
        try:
            # The SDK (pydantic models, HTTP stack) loads off the event loop, once.
            transport = "streamable_http" if self.config.transport == "http" else "stdio"
            await asyncio.to_thread(importlib.import_module, f"mcp.client.{transport}")
            await self._connect_and_hold()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - a server's failure is its state, never ours
            if self.state == "connected":
                self._dropped(_describe(error))
            elif self._unauthorized:
                self.last_error = (
                    HEADER_AUTHORIZED
                    if self._has_authorization_header()
                    else NEEDS_SIGN_IN.format(name=self.name)
                )
                self._set_state("needs-auth")
                logger.warning("MCP server %s: %s", self.name, self.last_error)
            else:
                self.last_error = _describe(error)
                self._set_state("failed")
                logger.warning("MCP server %s failed to start: %s", self.name, self.last_error)
        else:
            if self.state == "connected":
                self._set_state("disconnected")
        finally:
            self._session = None
            self._settled.set()

    async def _connect_and_hold(self) -> None:
        from mcp import ClientSession, Implementation

        from pi_lsp import __version__

        client_info = Implementation(name="pi-lsp", version=__version__)
        # The headers may run ``!command``s and the stored sign-in waits for pi's lock on
        # mcp-auth.json: neither may hold up the server's event loop.
        http_options = (
            await asyncio.to_thread(lambda: (self._resolved_headers(), self._stored_sign_in()))
            if self.config.transport == "http"
            else ({}, None)
        )
        async with (
            self._transport(*http_options) as (read, write),
            ClientSession(
                read,
                write,
                message_handler=self._on_message,
                logging_callback=self._on_log,
                client_info=client_info,
            ) as session,
        ):
            async with asyncio.timeout(self.config.timeout):
                initialized = await session.initialize()
            self.instructions = initialized.instructions
            capabilities = initialized.capabilities
            self.has_resources = capabilities.resources is not None
            self._session = session
            await self._list_tools()
            self.last_error = None
            self._set_state("connected")
            self._settled.set()
            await self._stop.wait()

    def _transport(self, headers: dict[str, str], auth: Any) -> Any:
        """The SDK's transport for the server: stdio, or streamable HTTP with its headers and
        stored sign-in."""
        if self.config.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = create_mcp_http_client(headers=headers, auth=auth)
            self._unauthorized = False

            async def note_unauthorized(response: Any) -> None:
                # 401, or 403 asking for more scope (pi asks for a sign-in again then too).
                challenge = response.headers.get("www-authenticate", "")
                if response.status_code == 401 or (
                    response.status_code == 403 and "insufficient_scope" in challenge
                ):
                    self._unauthorized = True

            http.event_hooks["response"].append(note_unauthorized)
            return streamable_http_client(self.config.url or "", http_client=http)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=_expand_home(self.config.command or ""),
            args=[_expand_home(arg) for arg in self.config.args],
            env=self._resolved_env(),
            cwd=self._cwd(),
        )
        if self._stderr is None:
            self._stderr = tempfile.TemporaryFile(prefix=f"pi-mcp-{self.name}-")  # noqa: SIM115
        return stdio_client(params, errlog=cast(Any, self._stderr))

    # ------------------------------------------------------------------ OAuth

    async def sign_in(self, open_page: Callable[[str], Any]) -> None:
        """Sign in (the authorization page goes to ``open_page``), then connect with the tokens;
        :class:`McpCallError` says why not. While it waits for the browser, the redirected URL
        can also be pasted (:meth:`finish_sign_in`)."""
        from pi_lsp.mcp.oauth import LoopbackCallback, SignInFailed, sign_in

        storage = self._token_storage(for_sign_in=True)
        settings = self._oauth_settings()
        callback = LoopbackCallback.for_settings(settings)
        self._sign_in_callback = callback
        self._sign_in_done = asyncio.get_running_loop().create_future()
        try:
            await sign_in(
                self.config.url or "",
                storage,
                settings,
                await asyncio.to_thread(self._resolved_headers),
                open_page,
                callback,
            )
            await self.reconnect()
        except SignInFailed as failure:
            error = McpCallError(f'signing in to MCP server "{self.name}" failed: {failure}')
            self._sign_in_done.set_exception(error)
            self._sign_in_done.exception()  # retrieved: nobody else may be waiting
            raise error from None
        else:
            self._sign_in_done.set_result(None)
        finally:
            self._sign_in_callback = None

    async def signed_in(self) -> None:
        """The end of the sign-in under way (or the last one): :class:`McpCallError` if failed."""
        if self._sign_in_done is not None:
            await asyncio.shield(self._sign_in_done)

    def finish_sign_in(self, redirected_url: str) -> None:
        """Hand the sign-in under way the URL the browser was redirected to, pasted by the user
        (the browser could not reach the loopback listener); :class:`McpCallError` when no
        sign-in waits or the URL is not its redirect."""
        from pi_lsp.mcp.oauth import SignInFailed

        callback = self._sign_in_callback
        if callback is None:
            raise McpCallError(
                f'no sign-in to MCP server "{self.name}" is waiting for its redirect; sign in first'
            )
        try:
            callback.paste(redirected_url)
        except SignInFailed as wrong:
            raise McpCallError(f'MCP server "{self.name}": {wrong}') from None

    def sign_out(self) -> bool:
        """Forget the server's tokens and client (pi's ``mcp-auth.json`` entry); whether there
        were any. The connection goes on until the server refuses it."""
        storage = self._token_storage(for_sign_in=True)
        return storage.file.remove(self.name, storage.url)

    def _token_storage(self, *, for_sign_in: bool = False) -> ServerTokenStorage:
        if self.config.transport != "http" or self._auth_file is None:
            raise McpCallError(f'MCP server "{self.name}" is not an HTTP server: no sign-in')
        if for_sign_in and self._has_authorization_header():
            raise McpCallError(
                f'MCP server "{self.name}" sends an "Authorization" header from mcp.json; '
                "OAuth sign-in applies to servers without one"
            )
        settings = self._oauth_settings()
        return ServerTokenStorage(
            self._auth_file,
            self.name,
            self.config.url or "",
            client_id=settings.get("clientId") or None,
            client_secret=settings.get("clientSecret") or None,
            documents=offers_document(settings),
        )

    def _oauth_settings(self) -> dict[str, Any]:
        """``oauth`` of ``mcp.json`` with its ``clientSecret`` resolved (``${VAR}``, ``!cmd``)."""
        settings = dict(self.config.oauth or {})
        secret = settings.get("clientSecret")
        if isinstance(secret, str):
            settings["clientSecret"] = self._resolved({"clientSecret": secret}, "oauth")[
                "clientSecret"
            ]
        return settings

    def _stored_sign_in(self) -> Any:
        """The SDK's OAuth client over the stored sign-in, when there is one to send."""
        if self._auth_file is None or self._has_authorization_header():
            return None
        storage = self._token_storage()
        if not storage.state().get("tokens"):
            return None
        from pi_lsp.mcp.oauth import oauth_provider

        return oauth_provider(self.config.url or "", storage, self._oauth_settings())

    def _has_authorization_header(self) -> bool:
        return any(key.lower() == "authorization" for key in self.config.headers)

    async def _list_tools(self) -> None:
        from mcp import types

        session = self._session
        if session is None:
            return
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            async with asyncio.timeout(self.config.timeout):
                page = await session.list_tools(params=params)
            tools += [tool.model_dump(by_alias=True, exclude_none=True) for tool in page.tools]
            cursor = page.next_cursor
            if not cursor:
                break
        self.tools = tools
        self._on_change()

    async def _on_message(self, message: Any) -> None:
        from mcp import types

        if isinstance(message, types.ToolListChangedNotification):
            try:
                await self._list_tools()
            except Exception as error:  # noqa: BLE001 - the old list stays; the next change retries
                logger.warning("MCP server %s: listing changed tools failed: %s", self.name, error)
        elif isinstance(message, Exception):
            logger.warning("MCP server %s sent something unreadable: %s", self.name, message)

    async def _on_log(self, params: Any) -> None:
        if self._log is not None:
            self._log.write(self.name, params.model_dump(by_alias=True, exclude_none=True))

    def _dropped(self, why: str) -> None:
        self.last_error = why
        self._session = None
        self._stop.set()
        self._set_state("disconnected")

    def _set_state(self, state: State) -> None:
        if self.state != state:
            self.state = state
            self._on_change()

    def _resolved_env(self) -> dict[str, str]:
        if self.config.scope == "acp":  # an ACP client's values are the values
            return dict(self.config.env)
        return self._resolved(self.config.env, "env")

    def _resolved_headers(self) -> dict[str, str]:
        if self.config.scope == "acp":
            return dict(self.config.headers)
        return self._resolved(self.config.headers, "header")

    def _resolved(self, values: Mapping[str, str], what: str) -> dict[str, str]:
        """``${VAR}`` and ``!command`` values resolved as pi resolves them."""
        resolved = {}
        for key, value in values.items():
            text = resolve_value(value, {}, os.environ, COMMANDS)
            if text is None:
                raise McpCallError(f"{what} {key}: {value!r} did not resolve (unset variable?)")
            resolved[key] = text
        return resolved

    def _cwd(self) -> str:
        if not self.config.cwd:
            return str(self.cwd)
        cwd = Path(_expand_home(self.config.cwd))
        return str(cwd if cwd.is_absolute() else self.cwd / cwd)


CONTENT_TYPES = ("text", "image", "audio", "resource_link", "resource")


def _invalid(error: Any) -> str:
    """What is wrong with a result the SDK could not read, in one line."""
    problems = error.errors()
    for problem in problems:
        value = problem.get("input")
        if (
            problem.get("loc", ())[:1] == ("content",)
            and isinstance(value, dict)
            and value.get("type") not in CONTENT_TYPES
        ):
            return f"a content block of the unknown type {str(value.get('type'))[:40]!r}"
    first = problems[0] if problems else {"loc": (), "msg": str(error)}
    where = ".".join(str(part) for part in first.get("loc", ()))
    return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))


def _expand_home(value: str) -> str:
    return str(Path.home() / value[2:]) if value.startswith("~/") else value


def _describe(error: BaseException) -> str:
    """The innermost message of an error the SDK's task groups may have wrapped."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in error.exceptions)
    if isinstance(error, TimeoutError):
        return "the server did not answer in time"
    if isinstance(error, FileNotFoundError):
        return f"command not found: {error.filename or error}"
    text = str(error) or type(error).__name__
    return text
