"""Compaction and branch summaries with the model, applied to a session without ever losing it.

Manual (``pi/compact``), automatic (the context grew into the reserve: after a turn, between the
tool rounds of a long turn, before a new prompt) and overflow recovery all go through
``Compactor.compact``: plan (pure, see ``compaction/prepare.py``), summarize with the model
(``compaction/summarize.py``), and only then append one ``compaction`` entry. Any failure —
provider error, truncated summary, abort — leaves the session file exactly as it was and is
reported in ``compaction_end``. While a compaction runs the session refuses navigation and a
second compaction, and prompts wait for it, so nothing lands on the wrong branch.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.compaction.prepare import prepare_compaction
from pi_lsp.compaction.tokens import (
    calculate_context_tokens,
    estimate_context_tokens,
    get_token_counter,
)
from pi_lsp.errors import (
    CompactionCancelledError,
    NothingToCompactError,
    PiError,
    TurnInProgressError,
)
from pi_lsp.extensions import BeforeCompactEvent, run_before_compact
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.protocol import CompactionEndEvent, CompactionStartEvent

if TYPE_CHECKING:
    from pi_lsp.agent.navigation import NavigationResult

logger = logging.getLogger(__name__)

Progress = Callable[[str], None]


@attrs.frozen
class CompactionResult:
    """The compaction entry that was appended, and what its summary says."""

    entry_id: str
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    read_files: list[str]
    modified_files: list[str]
    reason: str


class Compactor:
    """Runs compactions and branch summaries for the agent."""

    def __init__(self, agent) -> None:
        self.agent = agent

    @property
    def settings(self):
        return self.agent.current.compaction_settings()

    def summary_model(self, runtime: SessionRuntime) -> ModelConfig:
        model = self.agent.require_model(runtime)
        cheaper = self.agent.current.compaction_model()
        if cheaper:
            from pi_lsp.llm.config import resolve_model

            return (
                resolve_model({**self.agent.current.model_settings(), "model": cheaper}, {})
                or model
            )
        return model

    # ------------------------------------------------------------------ compaction

    async def compact(
        self,
        runtime: SessionRuntime,
        reason: str,
        *,
        instructions: str | None = None,
        will_retry: bool = False,
        progress: Progress | None = None,
    ) -> CompactionResult:
        """Summarize the branch up to the kept tail and append the compaction entry."""
        if runtime.compacting:
            raise TurnInProgressError(f"session {runtime.id} is already being compacted")
        runtime.require_writable()
        runtime.compacting = True
        runtime.compaction_task = asyncio.current_task()
        runtime.events.emit(CompactionStartEvent(reason))
        try:
            result = await self._compact(runtime, reason, instructions, progress)
        except asyncio.CancelledError:
            runtime.events.emit(
                CompactionEndEvent(
                    reason,
                    aborted=True,
                    will_retry=False,
                    error_message="Compaction was cancelled.",
                )
            )
            raise
        except Exception as error:
            message = error.message if isinstance(error, PiError) else f"Compaction failed: {error}"
            if not isinstance(error, PiError):
                logger.exception("compaction failed in session %s", runtime.id)
            runtime.events.emit(
                CompactionEndEvent(reason, aborted=False, will_retry=False, error_message=message)
            )
            raise
        finally:
            runtime.compacting = False
            runtime.compaction_task = None
            runtime.compaction_finished.set()
        runtime.events.emit(
            CompactionEndEvent(
                reason,
                aborted=False,
                will_retry=will_retry,
                entry_id=result.entry_id,
                tokens_before=result.tokens_before,
            )
        )
        runtime.tree_changed()
        return result

    async def _compact(
        self,
        runtime: SessionRuntime,
        reason: str,
        instructions: str | None,
        progress: Progress | None,
    ):
        from pi_lsp.compaction.summarize import (
            editor_file_ops_in,
            entries_to_summarize,
            summarize_compaction,
        )

        runtime.compaction_finished.clear()
        session = runtime.session
        path = session.branch()
        if path and path[-1].type == "compaction":
            raise NothingToCompactError("Already compacted: nothing new since the last compaction")
        counter = get_token_counter(self.agent.tokenizer)
        preparation = prepare_compaction(path, self.settings, counter)
        if preparation is None:
            raise NothingToCompactError("Nothing to compact: the session is too small")
        leaf_before = session.leaf_id
        decision = await run_before_compact(
            self.agent.extensions,
            BeforeCompactEvent(
                preparation,
                [dict(entry) for entry in path],
                instructions,
                reason,
                reason == "overflow",
            ),
        )
        if decision.cancelled_by:
            raise CompactionCancelledError(
                f"Compaction cancelled by the extension {decision.cancelled_by}"
            )
        if decision.compaction is not None:
            summary = _extension_summary(decision.compaction)
        else:
            model = self.summary_model(runtime)
            if progress:
                progress(f"Summarizing {len(preparation.messages_to_summarize)} messages")
            summary = await summarize_compaction(
                preparation,
                self._complete(model, runtime),
                max_output_tokens=self._output_limit(model),
                instructions=instructions,
                editor_file_ops=editor_file_ops_in(
                    entries_to_summarize(path, preparation.first_kept_entry_id)
                ),
            )
        if session.leaf_id != leaf_before:
            raise TurnInProgressError(
                "the session moved while it was being compacted; nothing was changed"
            )
        entry_id = session.append_compaction(
            summary.summary,
            summary.first_kept_entry_id,
            summary.tokens_before,
            summary.details,
            from_hook=True if decision.compaction is not None else None,
            usage=summary.usage,
        )
        return CompactionResult(
            entry_id=entry_id,
            summary=summary.summary,
            first_kept_entry_id=summary.first_kept_entry_id,
            tokens_before=summary.tokens_before,
            read_files=_file_list(summary.details, "readFiles"),
            modified_files=_file_list(summary.details, "modifiedFiles"),
            reason=reason,
        )

    # ------------------------------------------------------------------ branch summaries

    async def navigate(
        self, runtime: SessionRuntime, target_id: str, summarize: bool, instructions: str | None
    ) -> NavigationResult:
        """pi's ``/tree``: move the leaf, optionally summarizing the branch being left first.

        The session is marked busy while the summary is written, so no prompt, navigation or
        compaction can move the leaf meanwhile; a failed summary leaves the leaf where it was.
        """
        from pi_lsp.agent.navigation import navigate

        runtime.require_idle("navigate the session tree")
        session = runtime.session
        session.require_entry(target_id)
        if not summarize or target_id == session.leaf_id:
            return navigate(runtime, target_id)
        runtime.require_writable()
        runtime.compacting = True
        runtime.compaction_task = asyncio.current_task()
        runtime.compaction_finished.clear()
        try:
            summary = await self._summarize_branch(runtime, target_id, instructions)
        finally:
            runtime.compacting = False
            runtime.compaction_task = None
            runtime.compaction_finished.set()
        return navigate(runtime, target_id, summary=summary)

    async def _summarize_branch(
        self, runtime: SessionRuntime, target_id: str, instructions: str | None
    ):
        from pi_lsp.compaction.branch import plan_branch_summary
        from pi_lsp.compaction.branch_summary import summarize_branch

        model = self.summary_model(runtime)
        budget = self.agent.current.branch_summary_settings().token_budget(
            self.agent.context_window(model)
        )
        counter = get_token_counter(self.agent.tokenizer)
        plan = plan_branch_summary(
            runtime.session.by_id, runtime.session.leaf_id, target_id, budget, counter
        )
        if not plan.entries:
            return None  # the target is on the current path: nothing is being left behind
        return await summarize_branch(
            plan,
            self._complete(model, runtime),
            max_output_tokens=self._output_limit(model),
            instructions=instructions,
        )

    # ------------------------------------------------------------------ when to compact

    def context_tokens(self, runtime: SessionRuntime) -> int | None:
        """The context size at the leaf: the last answer's usage plus estimates of what came after.

        Usage reported before the latest compaction describes a context that no longer exists, so
        then every message is estimated instead (pi #1860: stale usage re-triggered compactions).
        """
        counter = get_token_counter(self.agent.tokenizer)
        messages = runtime.session.build_context().messages
        if not messages:
            return None
        if self._usage_predates_compaction(runtime):
            return sum(counter.estimate_message_tokens(message) for message in messages)
        return estimate_context_tokens(messages, counter).tokens

    def _usage_predates_compaction(self, runtime: SessionRuntime) -> bool:
        for entry in reversed(runtime.session.branch()):
            if entry.type == "compaction":
                return True
            if (
                entry.type == "message"
                and entry.role == "assistant"
                and self.answer_tokens(entry["message"])
            ):
                return False
        return False

    def over_threshold(
        self, runtime: SessionRuntime, model: ModelConfig, tokens: float | None
    ) -> bool:
        settings = self.settings
        if not settings.enabled or tokens is None:
            return False
        return tokens > self.agent.context_window(model) - settings.reserve_tokens

    def usage_is_current(self, runtime: SessionRuntime, assistant_entry_id: str | None) -> bool:
        """Usage recorded before the latest compaction on the branch never triggers another one."""
        for entry in reversed(runtime.session.branch()):
            if entry.id == assistant_entry_id:
                return True
            if entry.type == "compaction":
                return False
        return False

    def answer_tokens(self, message: dict[str, Any]) -> int | None:
        usage = message.get("usage")
        if message.get("stopReason") in ("aborted", "error") or not isinstance(usage, dict):
            return None
        return calculate_context_tokens(usage) or None

    # ------------------------------------------------------------------ the model call

    def _complete(self, model: ModelConfig, runtime: SessionRuntime):
        thinking_level = self.agent.thinking_level(runtime)

        async def complete(
            system_prompt: str, user_text: str, max_output_tokens: int | None
        ) -> dict[str, Any]:
            request = CompletionRequest(
                model=model,
                system_prompt=system_prompt,
                messages=[
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": user_text}],
                        "timestamp": 0,
                    }
                ],
                thinking_level=thinking_level,
                max_tokens=max_output_tokens,
            )
            async with AssistantStream(request) as stream:
                async for _ in stream.events():
                    pass
                return stream.message or stream.partial_message(
                    "error", "the summary stream ended early"
                )

        return complete

    def _output_limit(self, model: ModelConfig) -> int | None:
        from pi_lsp.llm.models import max_output_tokens_for

        return max_output_tokens_for(model)


def _extension_summary(compaction: dict):
    from pi_lsp.compaction.summarize import CompactionSummary

    return CompactionSummary(
        summary=compaction["summary"],
        first_kept_entry_id=compaction["firstKeptEntryId"],
        tokens_before=compaction["tokensBefore"],
        details=compaction.get("details"),
        usage=compaction.get("usage"),
    )


def _file_list(details, key: str) -> list[str]:
    values = details.get(key) if isinstance(details, dict) else None
    return [value for value in values if isinstance(value, str)] if isinstance(values, list) else []
