"""The agent service: runs prompts as turns on sessions, queues and steers them, aborts them.

One turn runs per session at a time. A prompt that arrives while a turn runs is either queued as a
follow-up (it becomes its own turn when the running one ends) or, with ``steer``, handed to the
running turn after its current tool batch; either way its request resolves when the turn that
handled it ends. Without a configured model every other request keeps working and ``pi/prompt``
says how to configure one.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
from pathlib import Path
from typing import Any

import attrs

from pi_lsp.agent.compactor import CompactionResult, Compactor
from pi_lsp.agent.registry import SessionRegistry
from pi_lsp.agent.resources import ResourceService
from pi_lsp.agent.runtime import QueuedPrompt, SessionRuntime
from pi_lsp.agent.system_prompt import agent_dir, build_system_prompt
from pi_lsp.agent.turn import TurnOutcome, TurnSetup, run_turn
from pi_lsp.compaction.file_ops import EDITOR_FILE_OPS_TYPE
from pi_lsp.config import ServerConfig
from pi_lsp.errors import ModelNotConfiguredError, PiError
from pi_lsp.extensions import load_extensions
from pi_lsp.llm.config import ModelConfig, resolve_model
from pi_lsp.session.timestamps import now_ms
from pi_lsp.tools.base import EditorBridge, NoEditor
from pi_lsp.tools.registry import default_tools

logger = logging.getLogger(__name__)

NO_MODEL_MESSAGE = (
    "No model is configured. Set the pi.model setting (a litellm model string such as "
    "openai/gpt-4o or ollama/llama3, plus pi.apiBase for a local server), or the PI_LSP_MODEL "
    "environment variable, or defaultProvider/defaultModel in pi's settings.json."
)


@attrs.frozen
class TurnResult:
    """How a turn ended: what ``pi/prompt`` answers (for a queued prompt too, with its turn's result)."""

    session_id: str
    leaf_id: str | None
    stop_reason: str
    error_message: str | None
    usage: dict[str, Any] | None
    """pi's usage record of the last answer."""
    context_tokens: int | None
    context_window: int


class Agent:
    """Prompts, aborts, compactions and model choice for every session the registry holds."""

    def __init__(
        self,
        config: ServerConfig,
        sessions: SessionRegistry,
        editor: EditorBridge | None = None,
        resources: ResourceService | None = None,
    ) -> None:
        self.config = config
        self.sessions = sessions
        self.resources = resources or ResourceService(
            config.workspace_root, agent_dir(), trusted=config.settings.trusted
        )
        self.editor = editor or NoEditor()
        self._editor_file_ops: dict[str, set[str]] = {"read": set(), "modified": set()}
        self.compactor = Compactor(self)
        self.extensions = load_extensions()

    # ------------------------------------------------------------------ models

    def model_for(self, runtime: SessionRuntime) -> ModelConfig | None:
        settings = self.current.model_settings()
        environ: dict[str, str] = dict(os.environ)
        if runtime.model_override:
            # pi/setModel is the user's latest word: it beats the PI_LSP_MODEL the server started with.
            settings = {**settings, "model": runtime.model_override}
            environ.pop("PI_LSP_MODEL", None)
        return resolve_model(settings, environ)

    def require_model(self, runtime: SessionRuntime) -> ModelConfig:
        model = self.model_for(runtime)
        if model is None:
            raise ModelNotConfiguredError(NO_MODEL_MESSAGE)
        return model

    def reconfigure(self, config: ServerConfig) -> None:
        """Use ``config`` from now on (the client's settings changed); the next turn sees it.

        A new session directory applies to sessions created, listed or opened by id from now on;
        sessions already open stay where their files are.
        """
        self.config = config
        self.sessions.session_dir = config.session_dir

    @property
    def current(self) -> ServerConfig:
        """The configuration with pi's settings files as they are now (they are watched and reloaded)."""
        merged = self.resources.snapshot.settings.settings.merged
        return (
            self.config
            if merged == self.config.pi_settings
            else attrs.evolve(self.config, pi_settings=merged)
        )

    @property
    def tokenizer(self) -> str:
        return self.current.tokenizer()

    def thinking_level(self, runtime: SessionRuntime) -> str:
        for entry in reversed(runtime.session.branch()):
            if entry.type == "thinking_level_change" and isinstance(
                entry.get("thinkingLevel"), str
            ):
                return entry["thinkingLevel"]
        return self.current.thinking_level()

    def preload_in_background(self) -> None:
        """Import litellm on a daemon thread, so the first prompt does not wait for it.

        A daemon thread, because an import cannot be interrupted and a client that exits right
        away must not wait seconds for it.
        """
        from pi_lsp.llm._litellm import load_litellm

        threading.Thread(
            target=_load_quietly, args=(load_litellm,), name="litellm-preload", daemon=True
        ).start()

    # ------------------------------------------------------------------ prompts

    async def prompt(
        self, runtime: SessionRuntime, text: str, images: list[dict], behavior: str | None
    ) -> TurnResult:
        """Run ``text`` as a turn (or queue/steer it into the running one); the result of that turn."""
        runtime.require_writable()
        model = self.require_model(runtime)
        user_message = _user_message(self.resources.expand_prompt(text), images)
        # One prompt at a time gets past here: a second one waits, then finds the turn running and
        # queues itself, instead of starting a turn of its own while the first waits for a compaction.
        async with runtime.starting:
            if runtime.is_streaming:
                queued = QueuedPrompt(text, images, asyncio.get_running_loop().create_future())
                (runtime.steering if behavior == "steer" else runtime.follow_ups).append(queued)
                waiting_for = queued.done
            else:
                waiting_for = None
                await (
                    runtime.compaction_finished.wait()
                )  # a prompt never lands in the middle of a compaction
                await self._compact_before_prompt(runtime, model)
                self._record_editor_file_ops(runtime)
                turn = runtime.turn = asyncio.get_running_loop().create_task(
                    self._run(runtime, model, user_message)
                )
        if waiting_for is not None:
            return await waiting_for
        try:
            return await asyncio.shield(turn)
        except asyncio.CancelledError:
            # $/cancelRequest on pi/prompt: abort the turn, and answer with how it ended.
            self.abort(runtime)
            return await turn

    async def _run(
        self, runtime: SessionRuntime, model: ModelConfig, user_message: dict
    ) -> TurnResult:
        steered: list[QueuedPrompt] = []

        def take_steering() -> list[dict[str, Any]]:
            delivered = list(runtime.steering)
            runtime.steering.clear()
            steered.extend(delivered)
            return [_user_message(item.text, item.images) for item in delivered]

        outcome = await run_turn(runtime, user_message, self._setup(runtime, model, take_steering))
        await self._compact_after_turn(runtime, model, outcome)
        result = self._result(runtime, model, outcome)
        for item in steered:
            item.done.set_result(result)
        self._start_next_follow_up(runtime)
        return result

    def _start_next_follow_up(self, runtime: SessionRuntime) -> None:
        leftover = list(runtime.steering)  # steering that arrived after the last tool batch
        runtime.steering.clear()
        runtime.follow_ups.extendleft(reversed(leftover))
        if not runtime.follow_ups:
            runtime.turn = None
            return
        queued = runtime.follow_ups.popleft()
        model = self.model_for(runtime) or self.require_model(runtime)
        task = asyncio.get_running_loop().create_task(
            self._run(runtime, model, _user_message(queued.text, queued.images))
        )
        runtime.turn = task
        task.add_done_callback(lambda done: _settle(queued.done, done))

    def _setup(self, runtime: SessionRuntime, model: ModelConfig, take_steering) -> TurnSetup:
        tools = default_tools()
        root = self.config.workspace_root
        return TurnSetup(
            model=model,
            system_prompt=build_system_prompt(
                root, [tool.spec() for tool in tools], self.resources.snapshot
            ),
            tools=tools,
            thinking_level=self.thinking_level(runtime),
            cwd=root,
            editor=self.editor,
            retry=self.current.retry_settings(),
            context_window=self.context_window(model),
            take_steering=take_steering,
            compact_if_needed=lambda: self._compact_between_rounds(runtime, model),
            recover_from_overflow=lambda: self._recover_from_overflow(runtime),
        )

    # ------------------------------------------------------------------ automatic compaction

    async def compact(
        self, runtime: SessionRuntime, instructions: str | None, progress=None
    ) -> CompactionResult:
        """``pi/compact``: stop a running turn first (as pi does), then compact now."""
        runtime.require_writable()
        if runtime.turn is not None and not runtime.turn.done():
            turn = runtime.turn
            self.abort(runtime)
            await asyncio.wait({turn})
        return await self.compactor.compact(
            runtime, "manual", instructions=instructions, progress=progress
        )

    async def _compact_before_prompt(self, runtime: SessionRuntime, model: ModelConfig) -> None:
        await self._try_compact(
            runtime, "threshold", lambda: self._last_answer_over_threshold(runtime, model, True)
        )

    async def _compact_after_turn(
        self, runtime: SessionRuntime, model: ModelConfig, outcome: TurnOutcome
    ) -> None:
        if outcome.stop_reason in ("aborted", "error"):
            return
        await self._try_compact(
            runtime, "threshold", lambda: self._last_answer_over_threshold(runtime, model, False)
        )

    async def _compact_between_rounds(self, runtime: SessionRuntime, model: ModelConfig) -> None:
        compactor = self.compactor
        await self._try_compact(
            runtime,
            "threshold",
            lambda: compactor.over_threshold(runtime, model, compactor.context_tokens(runtime)),
        )

    async def _recover_from_overflow(self, runtime: SessionRuntime) -> bool:
        if not self.current.compaction_settings().enabled:
            return False
        try:
            await self.compactor.compact(runtime, "overflow", will_retry=True)
        except PiError as error:
            logger.warning("overflow recovery failed in session %s: %s", runtime.id, error.message)
            return False
        return True

    def _last_answer_over_threshold(
        self, runtime: SessionRuntime, model: ModelConfig, include_aborted: bool
    ) -> bool:
        compactor = self.compactor
        for entry in reversed(runtime.session.branch()):
            if entry.type == "compaction":
                return False  # usage from before the latest compaction is stale
            if entry.type == "message" and entry.role == "assistant":
                message = entry["message"]
                tokens = compactor.answer_tokens(message)
                if tokens is None and include_aborted and message.get("stopReason") == "aborted":
                    continue
                return compactor.over_threshold(runtime, model, tokens)
        return False

    async def _try_compact(self, runtime: SessionRuntime, reason: str, needed) -> None:
        if not self.current.compaction_settings().enabled or runtime.compacting or not needed():
            return
        try:
            await self.compactor.compact(runtime, reason)
        except PiError as error:  # reported in compaction_end; the conversation goes on uncompacted
            logger.warning(
                "automatic compaction failed in session %s: %s", runtime.id, error.message
            )

    def context_window(self, model: ModelConfig | None) -> int:
        from pi_lsp.llm.models import context_window_for

        if model is None:
            return self.config.settings.context_window or 128_000
        return context_window_for(model)

    def _result(
        self, runtime: SessionRuntime, model: ModelConfig, outcome: TurnOutcome
    ) -> TurnResult:
        from pi_lsp.compaction.tokens import calculate_context_tokens

        usage = (outcome.last_assistant or {}).get("usage")
        tokens = calculate_context_tokens(usage) if isinstance(usage, dict) else None
        return TurnResult(
            session_id=runtime.id,
            leaf_id=runtime.session.leaf_id,
            stop_reason=outcome.stop_reason,
            error_message=outcome.error_message,
            usage=usage if isinstance(usage, dict) else None,
            context_tokens=None if tokens is None or math.isnan(tokens) else int(tokens),
            context_window=self.context_window(model),
        )

    # ------------------------------------------------------------------ aborting

    def abort(self, runtime: SessionRuntime) -> bool:
        """Stop the running turn (its request still resolves, with ``stopReason: "aborted"``)."""
        for queued in (*runtime.steering, *runtime.follow_ups):
            queued.done.cancel()
        runtime.steering.clear()
        runtime.follow_ups.clear()
        stopped = False
        if runtime.compaction_task is not None and not runtime.compaction_task.done():
            runtime.compaction_task.cancel()  # a compaction cancels cleanly: nothing is written
            stopped = True
        if runtime.turn is not None and not runtime.turn.done():
            runtime.turn.cancel()
            stopped = True
        return stopped

    def abort_all(self) -> None:
        for runtime in self.sessions.open_runtimes:
            self.abort(runtime)

    # ------------------------------------------------------------------ editor file operations

    def note_editor_file_op(self, path: Path, operation: str) -> None:
        """Remember that the user read or modified ``path`` in the editor (recorded at the next prompt)."""
        root = self.config.workspace_root
        try:
            shown = path.resolve().relative_to(root).as_posix()
        except ValueError:
            shown = str(path)
        self._editor_file_ops[operation].add(shown)

    def _record_editor_file_ops(self, runtime: SessionRuntime) -> None:
        read, modified = self._editor_file_ops["read"], self._editor_file_ops["modified"]
        if not read and not modified:
            return
        runtime.session.append_custom(
            EDITOR_FILE_OPS_TYPE,
            {"readFiles": sorted(read - modified), "modifiedFiles": sorted(modified)},
        )
        read.clear()
        modified.clear()


def _user_message(text: str, images: list[dict]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content.extend(
        {"type": "image", "data": image["data"], "mimeType": image["mimeType"]} for image in images
    )
    return {"role": "user", "content": content, "timestamp": now_ms()}


def _settle(future: asyncio.Future, task: asyncio.Task) -> None:
    if future.done():
        return
    if task.cancelled():
        future.cancel()
    elif task.exception() is not None:
        future.set_exception(task.exception())
    else:
        future.set_result(task.result())


def _load_quietly(load) -> None:
    try:
        load()
    except Exception:
        logger.exception("loading litellm failed")
