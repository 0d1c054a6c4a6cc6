"""The agent service: runs prompts as turns on sessions, queues and steers them, aborts them.

One turn runs per session at a time. A prompt that arrives while a turn runs is expanded
(``/skill:name``, ``/template``) like any other, then waits in the session's queue
(``prompt_queue.py``): as a follow-up (the follow-ups ``followUpMode`` hands over start a turn of
their own when the agent would stop) or, with ``steer``, for the running turn to take it after its
current tool batch or answer; either way its request resolves when the turn that handled it ends.
Queued prompts can be listed, edited and taken back until the agent takes them. ``pi/abort`` keeps
the queue, as pi 1.6's RPC ``abort`` does: the prompts wait for the next prompt's turn (the editors
take them back into the input first, pi's interactive Esc). Without a
configured model every other request keeps working and ``pi/prompt`` says how to configure one.

Compaction around turns is the compactor's (``compaction/policy.py`` decides when); the turn loop
itself is ``turn.py``. The agent only orders them: wait for a running compaction, compact before
the prompt if the last answer filled the window, run the turn, compact after it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from pi_lsp.agent.checkpoint_recorder import CheckpointRecorder
from pi_lsp.agent.compactor import Compactor
from pi_lsp.agent.hooks import start_session, turn_system_prompt
from pi_lsp.agent.live_config import LiveConfig
from pi_lsp.agent.nested_context import NestedContextFiles
from pi_lsp.agent.permissions import Permissions
from pi_lsp.agent.prompt_queue import QueuedPrompt, QueueKind
from pi_lsp.agent.registry import SessionRegistry
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.agent.session_names import name_session, wants_a_name
from pi_lsp.agent.system_prompt import build_system_prompt
from pi_lsp.agent.turn import TurnOutcome, TurnSetup, run_turn
from pi_lsp.compaction.file_ops import EDITOR_FILE_OPS_TYPE, EditorFileOps
from pi_lsp.compaction.policy import Moment
from pi_lsp.compaction.tokens import calculate_context_tokens
from pi_lsp.llm.client import ModelClient
from pi_lsp.llm.config import ModelConfig
from pi_lsp.protocol import ClearQueueResult, CompactResult, PromptResult, QueueResult
from pi_lsp.session.message_types import ImageContent, TextContent, UserMessage
from pi_lsp.session.timestamps import now_ms
from pi_lsp.tools.base import EditorBridge, NoEditor, Tool
from pi_lsp.tools.bash import kill_running_commands
from pi_lsp.tools.registry import default_tools

logger = logging.getLogger(__name__)


class Agent:
    """Prompts, aborts, manual compactions and model choice for every session the registry holds."""

    def __init__(
        self,
        live: LiveConfig,
        sessions: SessionRegistry,
        compactor: Compactor,
        client: ModelClient,
        *,
        editor: EditorBridge | None = None,
        tools: Callable[[], list[Tool]] | None = None,
        checkpoint_recorder: CheckpointRecorder | None = None,
        permissions: Permissions | None = None,
        before_turn: Callable[[], Awaitable[None]] | None = None,
        branch_tools: Callable[[SessionRuntime], list[Tool]] | None = None,
        load_tools: Callable[[list[str]], list[Tool]] | None = None,
    ) -> None:
        self.live = live
        self.sessions = sessions
        self.compactor = compactor
        self.client = client
        self.editor = editor or NoEditor()
        self.tools = tools or default_tools
        self._named: set[str] = set()
        """Sessions whose name the model was asked for (once per session)."""
        self._naming: set[asyncio.Task] = set()
        self.checkpoint_recorder = checkpoint_recorder
        """Where the tools' file changes are recorded (None: not recorded)."""
        self.permissions = permissions
        """Which tool calls ask the user first (None: every call runs)."""
        self.before_turn = before_turn
        """Awaited before each turn takes its tools (the MCP servers with direct tools that are
        still connecting, for at most 10 s)."""
        self.branch_tools = branch_tools
        """Tools a session's branch adds (MCP's ``tool_search`` and the tools it loaded there)."""
        self.load_tools = load_tools
        """The tools of these names, declared from the next request of a turn on (a load)."""
        self._editor_file_ops: dict[str, set[str]] = {"read": set(), "modified": set()}
        self.nested_context = NestedContextFiles(live.config.workspace_root)

    # ------------------------------------------------------------------ prompts

    async def prompt(
        self,
        runtime: SessionRuntime,
        text: str,
        images: list[dict[str, str]],
        behavior: str | None = None,
    ) -> PromptResult:
        """Run ``text`` as a turn (or queue/steer it into the running one); that turn's result."""
        runtime.require_writable()
        model = self.live.callable_model(runtime)
        expanded = self.live.resources.expand_prompt(text)
        user_message = _user_message(expanded, images)
        # One prompt at a time gets past here: a second one waits, then finds the turn running and
        # queues itself, instead of starting a turn of its own while the first waits to compact.
        async with runtime.starting:
            if runtime.is_streaming:
                future = asyncio.get_running_loop().create_future()
                queued = QueuedPrompt(expanded, user_message, future)
                kind: QueueKind = "steer" if behavior == "steer" else "followUp"
                runtime.queue.add(kind, queued)
                waiting_for = queued.done
            else:
                waiting_for = None
                # A prompt never lands in the middle of a compaction.
                await runtime.summary_finished.wait()
                await start_session(runtime, self.live.resources.extensions)
                await self.compactor.compact_if_needed(
                    runtime, Moment.BEFORE_PROMPT, self.live.context_window(model)
                )
                self._record_editor_file_ops(runtime)
                turn = runtime.turn = asyncio.get_running_loop().create_task(
                    self._run(runtime, model, [user_message], take_queued_steering=True)
                )
        if waiting_for is not None:
            try:
                return await waiting_for
            except asyncio.CancelledError:
                runtime.queue.discard(queued)  # $/cancelRequest takes a waiting prompt back
                raise
        try:
            return await asyncio.shield(turn)
        except asyncio.CancelledError:
            # $/cancelRequest on pi/prompt: abort the turn, and answer with how it ended.
            self.abort(runtime)
            return await turn

    async def _run(
        self,
        runtime: SessionRuntime,
        model: ModelConfig,
        user_messages: list[UserMessage],
        *,
        take_queued_steering: bool = False,
    ) -> PromptResult:
        if self.before_turn is not None:
            await self.before_turn()
        setup = self._setup(runtime, model)
        base_prompt = setup.system_prompt
        setup.system_prompt = await turn_system_prompt(
            runtime, self.live.resources.extensions, base_prompt, user_messages[0]
        )
        runtime.extension_prompt_addition = prompt_addition(base_prompt, setup.system_prompt)
        outcome = await run_turn(
            runtime,
            user_messages,
            setup,
            self.client,
            self.compactor,
            take_queued_steering=take_queued_steering,
        )
        if outcome.stop_reason not in ("aborted", "error"):
            await self.compactor.compact_if_needed(runtime, Moment.AFTER_TURN, setup.context_window)
            self._name_after_first_answer(runtime)
        result = self._result(runtime, setup.context_window, outcome)
        for queued in outcome.steered:
            if not queued.done.done():
                queued.done.set_result(result)
        if outcome.stop_reason == "aborted":
            runtime.turn = None  # the queue waits for the next prompt, as after pi 1.6's abort
        else:
            self._start_next_delivery(runtime)
        return result

    def _name_after_first_answer(self, runtime: SessionRuntime) -> None:
        """Name a session nobody named after its first answer (``autoName``), in the background."""
        if not self.live.config.settings.auto_name or runtime.id in self._named:
            return
        if runtime.read_only_reason or not wants_a_name(runtime):
            return
        self._named.add(runtime.id)
        task = asyncio.get_running_loop().create_task(
            name_session(runtime, self.compactor.summaries)
        )
        self._naming.add(task)
        task.add_done_callback(self._naming.discard)

    def _start_next_delivery(self, runtime: SessionRuntime) -> None:
        """Start the turn of what the queue hands over now the agent would stop: steering that
        arrived after the last answer was read (pi continues with it first), else follow-ups."""
        current = self.live.current
        batch = runtime.queue.take_steering(
            current.steering_mode()
        ) or runtime.queue.take_follow_ups(current.follow_up_mode())
        if not batch:
            runtime.turn = None
            return
        model = self.live.require_model(runtime)
        task = asyncio.get_running_loop().create_task(
            self._run(runtime, model, [queued.message for queued in batch])
        )
        runtime.turn = task
        task.add_done_callback(functools.partial(_settle_all, [queued.done for queued in batch]))

    # ------------------------------------------------------------------ the queue

    def queue(self, runtime: SessionRuntime) -> QueueResult:
        """``pi/queue``: the prompts waiting, oldest first, and the modes that deliver them."""
        steering, follow_up = runtime.queue.infos()
        current = self.live.current
        return QueueResult(
            runtime.id, steering, follow_up, current.steering_mode(), current.follow_up_mode()
        )

    def clear_queue(self, runtime: SessionRuntime) -> ClearQueueResult:
        """``pi/clearQueue``: take every waiting prompt back, their texts (pi's ``clear_queue``)."""
        steering, follow_ups = runtime.queue.clear()
        return ClearQueueResult(
            [queued.text for queued in steering], [queued.text for queued in follow_ups]
        )

    def remove_queued(self, runtime: SessionRuntime, prompt_id: str) -> QueueResult:
        runtime.queue.remove(prompt_id)
        return self.queue(runtime)

    def edit_queued(self, runtime: SessionRuntime, prompt_id: str, text: str) -> QueueResult:
        """Give a waiting prompt a new text, expanded as a prompt's; it keeps its images."""
        queued = runtime.queue.find(prompt_id)
        expanded = self.live.resources.expand_prompt(text)
        content = queued.message["content"]
        images = [
            block for block in content if not isinstance(block, str) and block["type"] == "image"
        ]
        message = UserMessage(
            role="user",
            content=[TextContent(type="text", text=expanded), *images],
            timestamp=queued.message["timestamp"],
        )
        runtime.queue.replace(prompt_id, expanded, message)
        return self.queue(runtime)

    def _setup(self, runtime: SessionRuntime, model: ModelConfig) -> TurnSetup:
        tools = self.tools()
        if self.branch_tools is not None:
            present = {tool.name for tool in tools}
            tools += [tool for tool in self.branch_tools(runtime) if tool.name not in present]
        root = self.live.config.workspace_root
        current = self.live.current
        return TurnSetup(
            model=model,
            system_prompt=build_system_prompt(
                root, [tool.spec() for tool in tools], self.live.resources.snapshot
            ),
            tools=tools,
            thinking_level=self.live.thinking_level(runtime),
            cwd=root,
            editor=self.editor,
            retry=current.retry_settings(),
            context_window=self.live.context_window(model),
            cache_retention=self.live.cache_retention(),
            max_output_tokens=self.live.max_output_tokens(model),
            extensions=self.live.resources.extensions,
            checkpoint_recorder=self.checkpoint_recorder,
            checkpoint_options=current.settings.checkpoints,
            context_files=self.nested_context if current.settings.nested_context_files else None,
            permissions=self.permissions,
            load_tools=self.load_tools,
            steering_mode=current.steering_mode(),
        )

    def _result(
        self, runtime: SessionRuntime, context_window: int, outcome: TurnOutcome
    ) -> PromptResult:
        answer = outcome.last_assistant
        usage = cast("dict[str, Any] | None", answer.get("usage") if answer else None)
        usage = usage if isinstance(usage, dict) else None
        tokens = calculate_context_tokens(usage) if usage is not None else None
        return PromptResult(
            session_id=runtime.id,
            leaf_id=runtime.session.leaf_id,
            stop_reason=outcome.stop_reason,
            error_message=outcome.error_message,
            usage=usage,
            context_tokens=None if tokens is None or math.isnan(tokens) else int(tokens),
            context_window=context_window,
        )

    # ------------------------------------------------------------------ compaction, model, level

    async def compact(
        self, runtime: SessionRuntime, instructions: str | None, progress=None
    ) -> CompactResult:
        """``pi/compact``: stop a running turn first (as pi does), then compact now.

        The editor's file operations since the last prompt join the summary's lists, and are
        recorded after the compaction entry (only when it was written: a failure changes nothing).
        """
        runtime.require_writable()
        if runtime.turn is not None and not runtime.turn.done():
            turn = runtime.turn
            self.abort(runtime)
            await asyncio.wait({turn})
        result = await self.compactor.compact(
            runtime,
            "manual",
            instructions=instructions,
            progress=progress,
            unrecorded_editor_file_ops=self._unrecorded_editor_file_ops(),
        )
        if self._record_editor_file_ops(runtime):
            runtime.tree_changed()
        return result

    def set_model(self, runtime: SessionRuntime, model: str) -> ModelConfig:
        """``pi/setModel``: the session uses ``model`` from now on (recorded with it)."""
        runtime.require_idle("change the model")
        previous = runtime.model_override
        runtime.model_override = model
        try:
            chosen = self.live.require_model(runtime)
        except Exception:
            runtime.model_override = previous
            raise
        runtime.session.append_model_change(chosen.provider, chosen.model_id)
        runtime.tree_changed()
        return chosen

    def set_thinking_level(self, runtime: SessionRuntime, level: str) -> None:
        """``pi/setThinkingLevel``: recorded when it changes the session's level."""
        runtime.require_idle("change the thinking level")
        if self.live.thinking_level(runtime) != level:
            runtime.session.append_thinking_level_change(level)
            runtime.tree_changed()

    # ------------------------------------------------------------------ aborting

    def abort(self, runtime: SessionRuntime) -> bool:
        """Stop the running turn (its request still resolves, with ``stopReason: "aborted"``).

        The queue stays as it is (pi 1.6's RPC ``abort``): its prompts wait for the next prompt's
        turn; ``clear_queue`` first takes them back."""
        stopped = False
        if runtime.summary_task is not None and not runtime.summary_task.done():
            runtime.summary_task.cancel()  # a summary cancels cleanly: nothing is written
            stopped = True
        if runtime.turn is not None and not runtime.turn.done():
            runtime.turn.cancel()
            stopped = True
        return stopped

    def abort_all(self) -> None:
        for runtime in self.sessions.open_runtimes:
            runtime.queue.cancel_all()
            self.abort(runtime)

    def shutdown(self) -> None:
        """Stop everything now: abort every turn, and kill every command still running with its
        process group at once (an aborted turn ends its command too, but only once the event loop
        runs it, which a server that is exiting may never do)."""
        self.abort_all()
        kill_running_commands()

    # ------------------------------------------------------------------ editor file operations

    def note_editor_file_op(self, path: Path, operation: str) -> None:
        """Remember that the user read or modified ``path`` in the editor (recorded next prompt)."""
        root = self.live.config.workspace_root
        try:
            shown = path.resolve().relative_to(root).as_posix()
        except ValueError:
            shown = str(path)
        self._editor_file_ops[operation].add(shown)

    def _unrecorded_editor_file_ops(self) -> list[EditorFileOps]:
        read, modified = self._editor_file_ops["read"], self._editor_file_ops["modified"]
        if not read and not modified:
            return []
        return [EditorFileOps(sorted(read - modified), sorted(modified), float(now_ms()))]

    def _record_editor_file_ops(self, runtime: SessionRuntime) -> bool:
        """Append the editor's file operations noted since the last record; whether there were."""
        read, modified = self._editor_file_ops["read"], self._editor_file_ops["modified"]
        if not read and not modified:
            return False
        runtime.session.append_custom(
            EDITOR_FILE_OPS_TYPE,
            {"readFiles": sorted(read - modified), "modifiedFiles": sorted(modified)},
        )
        read.clear()
        modified.clear()
        return True


def prompt_addition(base: str, final: str) -> str:
    """What hooks changed in the system prompt: the text around ``base`` when they kept it, the
    whole prompt when they replaced it, nothing when they left it alone."""
    if final == base:
        return ""
    start = final.find(base)
    if start < 0:
        return final
    return final[:start] + final[start + len(base) :]


def _user_message(text: str, images: list[dict[str, str]]) -> UserMessage:
    content: list[TextContent | ImageContent] = [TextContent(type="text", text=text)]
    content.extend(
        ImageContent(type="image", data=image["data"], mimeType=image["mimeType"])
        for image in images
    )
    return UserMessage(role="user", content=content, timestamp=now_ms())


def _settle_all(futures: list[asyncio.Future], task: asyncio.Task) -> None:
    for future in futures:
        _settle(future, task)


def _settle(future: asyncio.Future, task: asyncio.Task) -> None:
    if future.done():
        return
    if task.cancelled():
        future.cancel()
    elif (error := task.exception()) is not None:
        future.set_exception(error)
    else:
        future.set_result(task.result())
