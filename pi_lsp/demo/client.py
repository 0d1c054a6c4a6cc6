"""The demo's editor: pi-lsp's own client (``pi_lsp.client``) on ``python -m pi_lsp`` over stdio,
the model it is configured with, and the printing of each turn's events as they arrive.

Besides ``pi/*`` requests it sends what an editor sends when the user opens, edits and saves a
document (``textDocument/didOpen``, ``didChange``, ``didSave``), so the server sees the user's own
reads and saves as it would in VS Code or Neovim.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import attrs

from pi_lsp.demo.errors import DemoError
from pi_lsp.demo.transcript import Transcript, tool_result_line

if TYPE_CHECKING:
    from pi_lsp.client import PiClient

SCRIPTED_MODEL = "openai/scripted"
SCRIPTED_TIMEOUT_SECONDS = 60.0
REAL_MODEL_TIMEOUT_SECONDS = 600.0
KEEP_RECENT_TOKENS = 30
"""The demo's ``compaction.keepRecentTokens`` (pi's default is 20000): its story is a few hundred
tokens long, and a compaction keeps this much of the most recent conversation verbatim."""


@attrs.frozen
class Backend:
    """Which model the server talks to: its ``initializationOptions``."""

    description: str
    options: dict[str, Any]


def scripted_backend(base_url: str) -> Backend:
    return Backend(
        description=(
            f"scripted (a local OpenAI-compatible server at {base_url} playing the story; "
            "set PI_LSP_MODEL or pass --model to use a real model)"
        ),
        options={
            "model": SCRIPTED_MODEL,
            "apiBase": base_url,
            "compaction": {"keepRecentTokens": KEEP_RECENT_TOKENS},
            # The story scripts every reply; a naming request would take one of them.
            "autoName": False,
        },
    )


def real_backend(model: str) -> Backend:
    return Backend(
        description=f"{model} (a real model: the prompts are the demo's, the answers are its own)",
        options={"model": model, "compaction": {"keepRecentTokens": KEEP_RECENT_TOKENS}},
    )


def server_environment(real_model: str | None) -> dict[str, str]:
    """The server's environment: the user's, with the model the demo runs on."""
    environment = dict(os.environ)
    # The demo's sessions belong in its workspace, wherever the user keeps their own.
    environment.pop("PI_CODING_AGENT_SESSION_DIR", None)
    if real_model is not None:
        # PI_LSP_MODEL outranks the model setting in the server, so --model must go there too.
        environment["PI_LSP_MODEL"] = real_model
        return environment
    # The scripted server must win over whatever model the user configured, and litellm must
    # not fetch its price list from the internet for a model that costs nothing.
    for name in ("PI_LSP_MODEL", "PI_LSP_API_BASE", "PI_LSP_API_KEY"):
        environment.pop(name, None)
    environment["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return environment


class DemoClient:
    """An editor's side of the story: requests, document notifications, the turn transcript.

    Entering starts the server process; ``initialize`` follows once the model is known, so the
    server's start-up overlaps the scripted model's.
    """

    def __init__(self, workspace: Path, transcript: Transcript, real_model: str | None) -> None:
        self._workspace = workspace
        self._real_model = real_model
        self._client: PiClient | None = None
        self._transcript = transcript
        self._printer = TurnPrinter(transcript)
        self._versions: dict[str, int] = {}

    @property
    def _started(self) -> PiClient:
        if self._client is None:
            raise DemoError("the language client has not been started")
        return self._client

    async def __aenter__(self) -> Self:
        import logging

        from lsprotocol import types

        from pi_lsp.client import PiClient

        # pygls warns on stderr about things the demo does not care about.
        logging.getLogger("pygls").setLevel(logging.ERROR)
        timeout = (
            SCRIPTED_TIMEOUT_SECONDS if self._real_model is None else REAL_MODEL_TIMEOUT_SECONDS
        )
        self._client = client = PiClient("pi-lsp-demo", timeout=timeout)
        client.events.listen(self._printer.on_event)
        client.feature(types.WINDOW_SHOW_MESSAGE)(
            lambda params: print(f"[server] {params.message}")
        )
        await client.start_server(env=server_environment(self._real_model))
        return self

    async def initialize(self, backend: Backend) -> None:
        """``initialize`` with the model's options, then ``initialized``."""
        result = await self._started.initialize_workspace(self._workspace, backend.options)
        info = result.server_info
        self._transcript.say(
            f"server: {sys.executable} -m pi_lsp over stdio ({info.name} {info.version})"
            if info
            else "server: started"
        )

    async def __aexit__(self, exc_type, exc, traceback) -> None:
        # Asked before stopping: only a server that ended on its own explains the failure.
        reason = await self._started.exit_reason() if exc is not None else None
        await self._started.close()
        if reason:
            raise DemoError(reason) from None

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a ``pi/*`` request; its JSON result, or ``DemoError`` naming the method."""
        from pi_lsp.client import PiRequestError

        try:
            return await self._started.request(method, params)
        except (PiRequestError, TimeoutError) as error:
            raise DemoError(str(error)) from None

    async def prompt(self, text: str) -> dict[str, Any]:
        """Run a prompt, printing the streamed answer and the tool calls; fails unless the turn
        stops normally. The result gains ``userEntryId``, the prompt's own entry."""
        self._transcript.say(f"> {text}\n")
        first_event = len(self._started.events.notifications)
        self._printer.start()
        try:
            result = await self.request("pi/prompt", {"text": text})
        finally:
            self._printer.stop()
        if result["stopReason"] != "stop":
            reason = (
                result.get("errorMessage")
                or f"the turn ended with stopReason {result['stopReason']}"
            )
            raise DemoError(f"pi/prompt failed: {reason}")
        self._transcript.say(f"\n(turn ended: {result['stopReason']}, leaf {result['leafId']})")
        result["userEntryId"] = next(
            (
                event["entryId"]
                for notification in self._started.events.notifications[first_event:]
                if (event := notification["event"])["type"] == "message_end"
                and event["message"].get("role") == "user"
            ),
            None,
        )
        return result

    # ------------------------------------------------------------------ the user in the editor

    def open_document(self, relative_path: str) -> None:
        """``textDocument/didOpen`` with the file's text, as an editor opening it sends."""
        from lsprotocol import types

        path = self._workspace / relative_path
        uri = path.as_uri()
        self._versions[uri] = 1
        self._started.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri,
                    language_id=_language_of(path),
                    version=1,
                    text=path.read_text(encoding="utf-8"),
                )
            )
        )

    def edit_and_save_document(self, relative_path: str, new_text: str) -> None:
        """The user types (``didChange`` with the whole new text) and saves: the file is written,
        then ``textDocument/didSave``."""
        from lsprotocol import types

        path = self._workspace / relative_path
        uri = path.as_uri()
        self._versions[uri] = self._versions.get(uri, 1) + 1
        self._started.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self._versions[uri]
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)],
            )
        )
        path.write_text(new_text, encoding="utf-8")
        self._started.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )


def _language_of(path: Path) -> str:
    return {".py": "python", ".md": "markdown"}.get(path.suffix, "plaintext")


# ------------------------------------------------------------------------------ the turn transcript


class TurnPrinter:
    """Prints the ``pi/event`` notifications of the
    running prompt: answer text, tool calls, results."""

    def __init__(self, transcript: Transcript) -> None:
        self._transcript = transcript
        self._active = False
        self._mid_line = False

    def start(self) -> None:
        self._active, self._mid_line = True, False

    def stop(self) -> None:
        self._end_line()
        self._active = False

    def on_event(self, params: dict[str, Any]) -> None:
        if not self._active:
            return  # tree_changed after navigations and the like: the steps print their own results
        event = params["event"]
        handler = getattr(self, "_on_" + event["type"], None)
        if handler is not None:
            handler(event)

    def _on_text_delta(self, event: dict[str, Any]) -> None:
        self._transcript.write(event["delta"])
        self._mid_line = not event["delta"].endswith("\n")

    def _on_message_end(self, event: dict[str, Any]) -> None:
        if event["message"].get("role") == "assistant":
            self._end_line()

    def _on_tool_execution_start(self, event: dict[str, Any]) -> None:
        self._end_line()
        arguments = json.dumps(event.get("arguments"), ensure_ascii=False)
        if len(arguments) > 60:
            arguments = arguments[:59] + "…"
        self._transcript.say(f"  [tool call] {event['name']} {arguments}")

    def _on_tool_execution_end(self, event: dict[str, Any]) -> None:
        outcome = "error" if event["isError"] else "ok"
        self._transcript.say(f"  [result]    {outcome}: {tool_result_line(event)}")
        details = event.get("details")
        diff = details.get("diff") if isinstance(details, dict) else None
        for line in (diff or "").splitlines():
            self._transcript.say(f"                {line}")

    def _on_retry(self, event: dict[str, Any]) -> None:
        self._end_line()
        self._transcript.say(
            f"  [retry {event['attempt']}/{event['maxAttempts']}] {event.get('errorMessage')}"
        )

    def _on_error(self, event: dict[str, Any]) -> None:
        self._end_line()
        print(f"  [error] {event['message']}")

    def _end_line(self) -> None:
        if self._mid_line:
            self._transcript.write("\n")
            self._mid_line = False
