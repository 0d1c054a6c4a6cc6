"""Compaction with the model, applied to a session without ever losing it.

Manual (``pi/compact``), automatic (``compaction/policy.py`` decides: before a prompt, between the
tool rounds of a long turn, after a turn) and overflow recovery all go through
``Compactor.compact``: plan (pure, see ``compaction/prepare.py``), summarize with the model
(``compaction/summarize.py``), and only then append one ``compaction`` entry. Any failure —
provider error, truncated summary, abort — leaves the session file exactly as it was and is
reported in ``compaction_end``. While a compaction runs the session refuses navigation and a
second summary, and prompts wait for it, so nothing lands on the wrong branch.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

from pi_lsp.agent.live_config import LiveConfig
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.agent.summary_card import live_card
from pi_lsp.agent.summary_model import SummaryModel
from pi_lsp.compaction import policy
from pi_lsp.compaction.file_ops import EditorFileOps
from pi_lsp.compaction.prepare import prepare_compaction
from pi_lsp.errors import (
    CompactionCancelledError,
    NothingToCompactError,
    PiError,
    TurnInProgressError,
)
from pi_lsp.extensions import BeforeCompactEvent, ExtensionHost, run_before_compact
from pi_lsp.protocol import (
    CompactionEndEvent,
    CompactionReason,
    CompactionStartEvent,
    CompactResult,
)

logger = logging.getLogger(__name__)

Progress = Callable[[str], None]


class Compactor:
    """Compacts sessions: when asked, and when the policy says the context needs it."""

    def __init__(
        self, live: LiveConfig, summaries: SummaryModel, extensions: ExtensionHost
    ) -> None:
        self.live = live
        self.summaries = summaries
        self.extensions = extensions

    # ------------------------------------------------------------------ automatic

    async def compact_if_needed(
        self, runtime: SessionRuntime, moment: policy.Moment, context_window: int
    ) -> None:
        """Compact when the policy says so at ``moment``; a failure is reported in
        ``compaction_end`` and the conversation goes on uncompacted."""
        if runtime.compacting:
            return
        branch = runtime.session.branch()
        messages = (
            runtime.session.build_context().messages
            if moment is policy.Moment.BETWEEN_ROUNDS
            else []
        )
        settings = self.live.compaction_settings(runtime)
        counter = self.live.token_counter()
        if not policy.needs_compaction(moment, branch, messages, counter, context_window, settings):
            return
        try:
            await self.compact(runtime, "threshold")
        except PiError as error:
            logger.warning(
                "automatic compaction failed in session %s: %s", runtime.id, error.message
            )

    async def recover_from_overflow(
        self, runtime: SessionRuntime, already_tried: bool, failed_entry_id: str
    ) -> bool:
        """Compact after the provider refused the context or cut a recoverable ``length`` stop (pi
        1.6 recovers both the same way, once per turn); True when the answer may be retried.

        As pi 1.6 does ("Overflow and Length Recovery Ordering"), the failed attempt
        (``failed_entry_id``) is first left out of the context with a ``context_edit``, so the
        compaction neither keeps nor summarizes it and the retry does not carry it; the edit stays
        when the compaction fails (pi keeps it too)."""
        settings = self.live.compaction_settings(runtime)
        if not policy.may_recover_from_overflow(settings, already_tried):
            return False
        runtime.session.append_context_edit(failed_entry_id, None)
        try:
            await self.compact(runtime, "overflow", will_retry=True)
        except PiError as error:
            logger.warning("overflow recovery failed in session %s: %s", runtime.id, error.message)
            return False
        return True

    # ------------------------------------------------------------------ compaction

    async def compact(
        self,
        runtime: SessionRuntime,
        reason: CompactionReason,
        *,
        instructions: str | None = None,
        will_retry: bool = False,
        progress: Progress | None = None,
        unrecorded_editor_file_ops: Sequence[EditorFileOps] = (),
    ) -> CompactResult:
        """Summarize the branch up to the kept tail and append the compaction entry;
        ``unrecorded_editor_file_ops`` (the editor's, not in the session yet) join its lists."""
        with runtime.summarizing("being compacted"):
            runtime.events.emit(CompactionStartEvent(reason))
            try:
                result = await self._compact(
                    runtime, reason, instructions, progress, unrecorded_editor_file_ops
                )
            except asyncio.CancelledError:
                runtime.events.emit(_failed(reason, "Compaction was cancelled.", aborted=True))
                raise
            except Exception as error:
                if not isinstance(error, PiError):
                    logger.exception("compaction failed in session %s", runtime.id)
                message = (
                    error.message if isinstance(error, PiError) else f"Compaction failed: {error}"
                )
                runtime.events.emit(_failed(reason, message, aborted=False))
                raise
        runtime.events.emit(
            CompactionEndEvent(
                reason,
                aborted=False,
                will_retry=will_retry,
                entry_id=result.entry_id,
                tokens_before=result.tokens_before,
                card=live_card(
                    runtime,
                    result.entry_id,
                    self._summary_model(runtime, result.entry_id),
                    self.live.token_counter(),
                ),
            )
        )
        runtime.tree_changed()
        return result

    def _summary_model(self, runtime: SessionRuntime, entry_id: str) -> str:
        """Who wrote the compaction's summary: ``extension`` for a supplied one (``fromHook``)."""
        entry = runtime.session.get_entry(entry_id)
        if entry is not None and entry.get("fromHook") is True:
            return "extension"
        return self.live.summary_model(runtime).model

    async def _compact(
        self,
        runtime: SessionRuntime,
        reason: CompactionReason,
        instructions: str | None,
        progress: Progress | None,
        unrecorded_editor_file_ops: Sequence[EditorFileOps],
    ) -> CompactResult:
        from pi_lsp.compaction.summarize import (
            editor_file_ops_in,
            editor_records_to_fold_in,
            summarize_compaction,
        )

        session = runtime.session
        path = session.branch()
        if path and path[-1].type == "compaction":
            raise NothingToCompactError("Already compacted: nothing new since the last compaction")
        settings = self.live.compaction_settings(runtime)
        preparation = prepare_compaction(path, settings, self.live.token_counter())
        if preparation is None:
            raise NothingToCompactError("Nothing to compact: the session is too small")
        leaf_before = session.leaf_id
        decision = await run_before_compact(
            self.extensions.with_hook("before_compact"),
            BeforeCompactEvent(
                preparation,
                [dict(entry) for entry in path],
                instructions,
                reason,
                reason == "overflow",
            ),
            self.extensions.timings,
        )
        if decision.cancelled_by:
            raise CompactionCancelledError(
                f"Compaction cancelled by the extension {decision.cancelled_by}"
            )
        if decision.compaction is not None:
            summary = _extension_summary(decision.compaction)
        else:
            call = self.summaries.for_session(runtime, "compaction", reason)
            if progress:
                progress(f"Summarizing {len(preparation.messages_to_summarize)} messages")
            summary = await summarize_compaction(
                preparation,
                call.complete,
                max_output_tokens=call.max_output_tokens,
                instructions=instructions,
                editor_file_ops=[
                    *editor_file_ops_in(editor_records_to_fold_in(path)),
                    *unrecorded_editor_file_ops,
                ],
                in_cache=call.in_cache,
                file_exists=self.live.file_exists(),
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
        return CompactResult(
            session_id=runtime.id,
            entry_id=entry_id,
            summary=summary.summary,
            first_kept_entry_id=summary.first_kept_entry_id,
            tokens_before=int(summary.tokens_before),
            read_files=_file_list(summary.details, "readFiles"),
            modified_files=_file_list(summary.details, "modifiedFiles"),
            reason=reason,
        )


def _failed(reason: CompactionReason, message: str, *, aborted: bool) -> CompactionEndEvent:
    return CompactionEndEvent(
        reason,
        aborted=aborted,
        will_retry=False,
        error_message=message,
    )


def _extension_summary(compaction: dict):
    from pi_lsp.compaction.summarize import CompactionSummary

    return CompactionSummary(
        summary=compaction["summary"],
        first_kept_entry_id=compaction["firstKeptEntryId"],
        tokens_before=compaction["tokensBefore"],
        details=compaction.get("details"),
        usage=compaction.get("usage"),
    )


def _file_list(details: Any, key: str) -> list[str]:
    values = details.get(key) if isinstance(details, dict) else None
    return [value for value in values if isinstance(value, str)] if isinstance(values, list) else []
