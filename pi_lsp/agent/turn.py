"""One agent turn: the prompt, then model answers and tool batches until the model stops.

Every finished message is appended to the session as it completes (user prompt, each assistant
answer, each tool result), so a crash loses at most the message in flight. Events go out as the
turn runs. Steering prompts are delivered as pi 1.6's agent loop delivers them (``steeringMode``
decides how many at a time): a turn a new prompt starts takes the steering still queued (left there
by an abort) before its first request, and every answer but a failed or aborted one is followed by
the steering that arrived, so the model answers it before the turn ends. After each tool batch the
compactor compacts if the context grew into the reserve. Before each request, the nested context
files (AGENTS.md below the workspace root) that the tool calls in the context call for and that are
not in it yet, or changed, are appended as entries of their own (``agent/nested_context.py``). A
context overflow, or a ``length`` stop below the model's output limit (pi 1.6's recoverable
length), is answered by compacting and retrying the answer once per turn. Each tool call first
passes ``Permissions.check`` (``agent/permissions.py``): a call the user did not allow gets the
refusal as its result and does not run.

An abort (``pi/abort`` or ``$/cancelRequest``, both cancel the turn's task) stops the stream or
kills the running tool, persists the partial answer with ``stopReason: "aborted"`` and answers
any tool call left open, then ends the turn normally.

Transient provider errors (429, 5xx, connection drops) are retried with pi's backoff, announced by
``retry`` events; failed attempts that are retried are not written to the session.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import attrs

from pi_lsp.agent.checkpoint_recorder import CheckpointRecorder
from pi_lsp.agent.compactor import Compactor
from pi_lsp.agent.context_pipeline import model_messages
from pi_lsp.agent.hooks import changed_tool_result
from pi_lsp.agent.nested_context import NestedContextFiles, injection_message
from pi_lsp.agent.permissions import Permissions
from pi_lsp.agent.prompt_queue import QueuedPrompt
from pi_lsp.agent.runtime import CacheAnchor, SessionRuntime
from pi_lsp.compaction.policy import Moment
from pi_lsp.config import CheckpointOptions
from pi_lsp.extensions import ExtensionHost
from pi_lsp.llm.client import ModelClient, ModelStream
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.converted_history import ConvertedHistory
from pi_lsp.llm.events import Completed, TextDelta, ThinkingDelta, ToolCallStart
from pi_lsp.llm.failed_messages import (
    auth_error_status,
    is_context_overflow,
    is_recoverable_length,
    is_retryable_error,
    refused_key_message,
    retry_delay_ms,
)
from pi_lsp.llm.messages import ToolSpec
from pi_lsp.llm.secrets import redact_secrets
from pi_lsp.llm.stream import CompletionRequest
from pi_lsp.protocol import (
    AgentEndEvent,
    AgentStartEvent,
    AuthErrorEvent,
    ErrorEvent,
    MessageEndEvent,
    MessageStartEvent,
    QueueMode,
    RetryEvent,
    StopReason,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallStartEvent,
    ToolCard,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
)
from pi_lsp.resources.nested_context_files import NESTED_CONTEXT_FILE_TYPE
from pi_lsp.resources.settings import RetrySettings
from pi_lsp.session.message_types import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_lsp.session.system_messages import tools_declaration
from pi_lsp.session.timestamps import now_ms
from pi_lsp.session.tool_cards import ToolOutcome, tool_card
from pi_lsp.tools.base import (
    EditorBridge,
    FileChangeRecorder,
    NoRecorder,
    Tool,
    ToolContext,
    ToolResult,
)

logger = logging.getLogger(__name__)

ABORTED_TOOL_TEXT = "Tool execution was aborted by the user."
YIELD_EVERY_EVENTS = 32


@attrs.define
class TurnSetup:
    """What a turn needs besides the session: the model, the prompt, the tools, the editor."""

    model: ModelConfig
    system_prompt: str
    tools: list[Tool]
    thinking_level: str
    cwd: Path
    editor: EditorBridge
    retry: RetrySettings
    context_window: int
    cache_retention: str = "short"
    max_output_tokens: int | None = None
    """The model's own output limit (pi's ``maxTokens``): a ``length`` stop below it recovers."""
    extensions: ExtensionHost | None = None
    """Whose ``context`` and ``tool_result`` hooks run during the turn."""
    checkpoint_recorder: CheckpointRecorder | None = None
    """Where the files' contents before and after the tools' changes are recorded."""
    checkpoint_options: CheckpointOptions = attrs.Factory(CheckpointOptions)
    context_files: NestedContextFiles | None = None
    """Brings nested AGENTS.md files in; None when the ``nestedContextFiles`` setting is off."""
    permissions: Permissions | None = None
    """Which tool calls ask the user first; None runs every call."""
    load_tools: Callable[[list[str]], list[Tool]] | None = None
    """The tools a result's ``details.loaded`` names (MCP's ``tool_search``), declared from the
    turn's next request on."""
    steering_mode: QueueMode = "one-at-a-time"
    """How many queued steering prompts each delivery hands over (pi's ``steeringMode``)."""


@attrs.define
class TurnOutcome:
    stop_reason: StopReason
    last_assistant: AssistantMessage | None
    error_message: str | None = None
    steered: list[QueuedPrompt] = attrs.Factory(list)
    """The steering prompts this turn delivered (their requests resolve with its result)."""


async def run_turn(
    runtime: SessionRuntime,
    user_messages: list[UserMessage],
    setup: TurnSetup,
    client: ModelClient,
    compactor: Compactor,
    *,
    take_queued_steering: bool = False,
) -> TurnOutcome:
    """Run one turn to its end; cancellation ends it as ``aborted`` instead of propagating.

    ``user_messages`` start it (a prompt, or the follow-ups one delivery hands over);
    ``take_queued_steering`` delivers the steering still queued right after them (a new prompt's
    turn, as pi's agent loop polls steering when a run starts)."""
    runtime.events.emit(AgentStartEvent())
    for user_message in user_messages:
        _append(runtime, user_message)
    turn = _Turn(runtime, setup, client, compactor)
    if take_queued_steering:
        turn.deliver_steering()
    try:
        outcome = await turn.loop()
    except asyncio.CancelledError:
        outcome = turn.finish_aborted()
    except Exception as error:  # a bug must end the turn, not the server
        logger.exception("turn failed in session %s", runtime.id)
        runtime.events.emit(ErrorEvent(redact_secrets(f"The turn failed: {error}")))
        outcome = TurnOutcome("error", turn.last_assistant, redact_secrets(str(error)))
    outcome.steered = turn.steered
    runtime.events.emit(AgentEndEvent(outcome.stop_reason, runtime.session.leaf_id))
    runtime.tree_changed()
    return outcome


class _Turn:
    def __init__(
        self,
        runtime: SessionRuntime,
        setup: TurnSetup,
        client: ModelClient,
        compactor: Compactor,
    ) -> None:
        self.runtime = runtime
        self.setup = setup
        self.client = client
        self.compactor = compactor
        self.last_assistant: AssistantMessage | None = None
        self.steered: list[QueuedPrompt] = []
        self._stream: ModelStream | None = None
        self._open_tool_calls: list[ToolCall] = []
        self._recorder: FileChangeRecorder = NoRecorder()
        """The file changes of the running tool call."""
        self._last_update: ToolResult | None = None
        self._tool_started: dict[str, float] = {}
        """When each call of the running batch started (``time.monotonic``), by call id."""

    async def loop(self) -> TurnOutcome:
        overflow_recovered = False
        while True:
            self._bring_context_files()
            message = await self._answer_with_retries()
            self.last_assistant = message
            entry_id = _append(self.runtime, message)
            stop_reason = message.get("stopReason")
            if stop_reason == "error":
                self._report_refused_key(message)
            if self._recoverable(message):
                retry = await self.compactor.recover_from_overflow(
                    self.runtime, overflow_recovered, entry_id
                )
                overflow_recovered = True
                if retry:
                    continue
            if stop_reason != "toolUse":
                # pi's loop answers steering that arrived during the last answer in this run.
                if stop_reason in ("error", "aborted") or not self.deliver_steering():
                    return TurnOutcome(stop_reason or "stop", message, message.get("errorMessage"))
                continue
            await self._run_tools(
                [block for block in message["content"] if block["type"] == "toolCall"]
            )
            self.deliver_steering()
            await self.compactor.compact_if_needed(
                self.runtime, Moment.BETWEEN_ROUNDS, self.setup.context_window
            )

    def _recoverable(self, message: AssistantMessage) -> bool:
        """Whether compacting may let a retry succeed: a refused context, or (pi 1.6) a ``length``
        stop that ended below the model's own output limit."""
        stop_reason = message.get("stopReason")
        if stop_reason == "error":
            return is_context_overflow(message, self.setup.context_window)
        return is_recoverable_length(message, self.setup.max_output_tokens)

    def _bring_context_files(self) -> None:
        """Append the nested context files the next request needs (none when all are there)."""
        if self.setup.context_files is None:
            return
        session = self.runtime.session
        try:
            injections = self.setup.context_files.due_in_projection(session.projection())
        except Exception:  # a context file must never cost the user the turn
            logger.exception("finding nested context files failed in session %s", self.runtime.id)
            return
        for injection in injections:
            entry_id = session.append_custom_message(
                NESTED_CONTEXT_FILE_TYPE, injection.text(), True, injection.details()
            )
            message = injection_message(injection, session.require_entry(entry_id))
            self.runtime.events.emit(MessageEndEvent(entry_id, _payload(message)))

    def _report_refused_key(self, message: AssistantMessage) -> None:
        """A refused key gets its own event: clients show it once, with how to fix it."""
        status = auth_error_status(message)
        if status is None:
            return
        model = self.setup.model
        credential = model.credential
        self.runtime.events.emit(
            AuthErrorEvent(
                provider=model.provider,
                status=status,
                key_source=credential.source if credential else None,
                message=refused_key_message(model, status, message.get("errorMessage") or ""),
            )
        )

    def deliver_steering(self) -> bool:
        """Append the steering prompts the mode hands over now; whether there were any."""
        taken = self.runtime.queue.take_steering(self.setup.steering_mode)
        for queued in taken:
            _append(self.runtime, queued.message)
            self.steered.append(queued)
        return bool(taken)

    async def _answer_with_retries(self) -> AssistantMessage:
        attempt = 0
        while True:
            message = await self._answer()
            if message.get("stopReason") != "error" or not self._should_retry(message, attempt):
                return message
            attempt += 1
            delay = retry_delay_ms(attempt, self.setup.retry.base_delay_ms)
            self.runtime.events.emit(
                RetryEvent(
                    attempt, self.setup.retry.max_retries, delay, message.get("errorMessage") or ""
                )
            )
            await asyncio.sleep(delay / 1000)

    def _should_retry(self, message: AssistantMessage, attempt: int) -> bool:
        retry = self.setup.retry
        if not retry.enabled or attempt >= retry.max_retries:
            return False
        if is_context_overflow(message, self.setup.context_window):
            return False
        return is_retryable_error(message, self.setup.context_window)

    async def _answer(self) -> AssistantMessage:
        request = CompletionRequest(
            model=self.setup.model,
            system_prompt=self.setup.system_prompt,
            messages=await model_messages(self.runtime, self.setup.extensions),
            tools=[
                ToolSpec(tool.name, tool.description, tool.parameters) for tool in self.setup.tools
            ],
            thinking_level=self.setup.thinking_level,
            session_id=self.runtime.id,
            cache_retention=self.setup.cache_retention,
            history=self._converted_history(),
        )
        sent_at = time.monotonic()
        events = self.runtime.events
        events.emit(MessageStartEvent("assistant"))
        async with self.client.stream(request) as stream:
            self._stream = stream
            events_seen = 0
            async for event in stream.events():
                events_seen += 1
                if events_seen % YIELD_EVERY_EVENTS == 0:
                    # Buffered chunks arrive without yielding; let other requests (pi/abort) run.
                    await asyncio.sleep(0)
                if isinstance(event, TextDelta):
                    events.emit(TextDeltaEvent(event.text))
                elif isinstance(event, ThinkingDelta):
                    events.emit(ThinkingDeltaEvent(event.text))
                elif isinstance(event, ToolCallStart):
                    events.emit(ToolCallStartEvent(event.id, event.name))
                elif isinstance(event, Completed):
                    self._stream = None
                    answer = event.message
                    self._remember_cached(request, sent_at, answer)
                    return answer
        self._stream = None
        return stream.partial_message("error", "the model's stream ended without a final message")

    def _converted_history(self) -> ConvertedHistory | None:
        """The session's previous conversion, unless extensions' ``context`` hooks choose the
        messages: what they hand back may be changed in place afterwards."""
        extensions = self.setup.extensions
        if extensions is not None and extensions.with_hook("context"):
            return None
        return self.runtime.converted_history

    def _remember_cached(
        self, request: CompletionRequest, sent_at: float, message: AssistantMessage
    ) -> None:
        """An answered request is what the provider's prompt cache holds now (summaries use it)."""
        if message.get("stopReason") == "error":
            return
        usage = message.get("usage") or {}
        cached = bool(usage.get("cacheRead") or usage.get("cacheWrite"))
        self.runtime.cache_anchor = CacheAnchor(request, sent_at, cached)

    async def _run_tools(self, calls: list[ToolCall]) -> None:
        by_name = {tool.name: tool for tool in self.setup.tools}
        self._open_tool_calls = list(calls)
        loaded = False
        self._tool_started = {}
        while self._open_tool_calls:
            call = self._open_tool_calls[0]
            self._tool_started[str(call.get("id"))] = time.monotonic()
            self.runtime.events.emit(
                ToolExecutionStartEvent(
                    call["id"],
                    call["name"],
                    call.get("arguments") or {},
                    tool_card=self._card(call, None),
                )
            )
            tool = by_name.get(call["name"])
            if tool is None:
                result = ToolResult(
                    content=[{"type": "text", "text": f"Tool {call.get('name')} not found"}],
                    is_error=True,
                )
            else:
                result = await self._run_permitted(tool, call)
            result = await changed_tool_result(self.runtime, self.setup.extensions, call, result)
            self._open_tool_calls.pop(0)
            self._last_update = None
            self._record_tool_result(call, result)
            loaded = self._load_tools(result) or loaded
        if loaded:
            self._declare_loaded_tools()

    async def _run_permitted(self, tool: Tool, call: ToolCall) -> ToolResult:
        """The tool's result, or the refusal when the user did not allow the call."""
        arguments = call.get("arguments") or {}
        if self.setup.permissions is not None:
            prepared = tool.prepare_arguments(arguments)
            refusal = await self.setup.permissions.check(
                self.runtime.id,
                tool.name,
                prepared if isinstance(prepared, dict) else {},
                tool_call_id=str(call.get("id", "")),
                read_only=tool.read_only_hint,
            )
            if refusal is not None:
                return refusal
        self._recorder = self._new_recorder()
        context = ToolContext(
            cwd=self.setup.cwd,
            editor=self.setup.editor,
            on_update=functools.partial(self._tool_update, call),
            changes=self._recorder,
            session_id=self.runtime.id,
        )
        return await tool.execute(arguments, context)

    def _load_tools(self, result: ToolResult) -> bool:
        """Declare the tools the result loaded from the next request on; whether it loaded any."""
        loaded = (result.details or {}).get("loaded")
        if self.setup.load_tools is None or not loaded or result.is_error:
            return False
        present = {tool.name for tool in self.setup.tools}
        new = [tool for tool in self.setup.load_tools(list(loaded)) if tool.name not in present]
        self.setup.tools += new
        return bool(new)

    def _declare_loaded_tools(self) -> None:
        """Record the loaded tools as pi 1.6 records its declarations (a system message after
        the tool results, before the next request), so pi 1.6 declares them too when it
        continues the session. The model never sees the message: pi-lsp sends its own prompt."""
        branch = self.runtime.session.branch()
        messages = [entry.get("message") for entry in branch if entry.get("type") == "message"]
        declaration = tools_declaration(
            messages, [tool.spec() for tool in self.setup.tools], now_ms()
        )
        if declaration is not None:
            self.runtime.session.append_message(cast("AgentMessage", declaration))

    def _new_recorder(self) -> FileChangeRecorder:
        if self.setup.checkpoint_recorder is None:
            return NoRecorder()
        options = self.setup.checkpoint_options
        return self.setup.checkpoint_recorder.recorder(
            self.runtime, enabled=options.enabled, max_bytes=options.max_file_bytes
        )

    def _tool_update(self, call: ToolCall, partial: ToolResult) -> None:
        """A running tool's output so far; the last one is its result if the turn is aborted."""
        self._last_update = partial
        self.runtime.events.emit(
            ToolExecutionUpdateEvent(
                call["id"],
                call["name"],
                partial.content,
                partial.details,
                tool_card=self._card(call, partial, finished=False),
            )
        )

    def _record_tool_result(self, call: ToolCall, result: ToolResult) -> None:
        # The checkpoint goes right before the result: on every path through the result, so
        # navigating there (or past it) means "after this change", and before it "before".
        recorder, self._recorder = self._recorder, NoRecorder()
        if self.setup.checkpoint_recorder is not None:
            self.setup.checkpoint_recorder.record(
                self.runtime, str(call.get("id")), str(call.get("name")), recorder
            )
        # pi's key order, details before isError (JSON.stringify keeps insertion order)
        message = ToolResultMessage(
            role="toolResult",
            # .get: a malformed call's missing id is stored as null rather than failing the turn
            toolCallId=call.get("id"),
            toolName=call.get("name"),
            content=cast("list[TextContent | ImageContent]", result.content),
            details=result.details,
            isError=result.is_error,
            timestamp=now_ms(),
        )
        if result.details is None:
            del message["details"]
        entry_id = _append(self.runtime, message)
        self.runtime.events.emit(
            ToolExecutionEndEvent(
                call["id"],
                call["name"],
                result.is_error,
                result.content,
                result.details,
                entry_id,
                tool_card=self._card(call, result),
            )
        )

    def _card(
        self, call: ToolCall, result: ToolResult | None, *, finished: bool = True
    ) -> ToolCard | None:
        """The call's card for its events; a card that cannot be built leaves the event
        without one rather than failing the turn."""
        outcome = None
        if result is not None:
            outcome = ToolOutcome(result.content, result.details, result.is_error, finished)
        started = self._tool_started.get(str(call.get("id")))
        duration = None
        if finished and result is not None and started is not None:
            duration = round((time.monotonic() - started) * 1000)
        try:
            return tool_card(
                str(call.get("name")), call.get("arguments"), outcome, self.setup.cwd, duration
            )
        except Exception:
            logger.exception("the card of tool call %s could not be built", call.get("id"))
            return None

    def finish_aborted(self) -> TurnOutcome:
        """Persist what the abort interrupted: the partial answer, or open tool calls' results."""
        if self._stream is not None:
            message = self._stream.partial_message("aborted")
            self._stream = None
            _append(self.runtime, message)
            self.last_assistant = message
        for position, call in enumerate(self._open_tool_calls):
            # The running tool's last update says what it did before the abort (a command's
            # output and "Command aborted"); the calls after it never started.
            interrupted = self._last_update if position == 0 else None
            aborted = ToolResult(
                content=[{"type": "text", "text": ABORTED_TOOL_TEXT}], is_error=True
            )
            if interrupted is not None:
                aborted = attrs.evolve(interrupted, is_error=True)
            self._record_tool_result(call, aborted)
        self._open_tool_calls = []
        self._last_update = None
        return TurnOutcome("aborted", self.last_assistant)


def _append(runtime: SessionRuntime, message: AgentMessage) -> str:
    entry_id = runtime.session.append_message(message)
    runtime.events.emit(MessageEndEvent(entry_id, _payload(message)))
    return entry_id


def _payload(message: AgentMessage) -> dict[str, Any]:
    """A message as ``protocol.py``'s events carry it: the same object, as plain JSON."""
    return cast("dict[str, Any]", message)
