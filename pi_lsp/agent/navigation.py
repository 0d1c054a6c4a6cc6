"""Moving around the session tree: navigation (pi's ``/tree``), with or without a summary of the
branch being left, optionally taking the files along; forks; labels and names.

Landing on a user message (or an injected custom message) puts the leaf on its parent and hands
the message's text back for the editor, so the user can re-edit and resend it, as pi does; landing
on any other entry continues from that entry. The session file only grows: moving the leaf writes
nothing until the next message is appended there. With ``summarize`` the model first writes a
summary of the branch being left, between ``branch_summary_start`` and ``branch_summary_end``
events; the session is busy meanwhile, so no prompt, navigation or compaction can move the leaf,
and a failed or aborted summary leaves the leaf where it was.

With ``restore_files`` the files the agent changed on the way are put back to their content at the
landing entry (``file_restore.py``) before the leaf moves: a refused editor edit, like a failed
summary, leaves both the files and the leaf as they were. Forks take the same option.

Extensions' ``before_tree`` hooks (pi's ``session_before_tree``) run before the leaf moves: one
may cancel the navigation, or supply the branch summary, which is then stored with
``fromHook: true`` and no model call is made.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import attrs

from pi_lsp.agent.file_restore import FileRestorer, RestoreOutcome
from pi_lsp.agent.live_config import LiveConfig
from pi_lsp.agent.registry import SessionRegistry
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.agent.summary_card import live_card
from pi_lsp.agent.summary_model import SummaryModel
from pi_lsp.compaction.branch import plan_branch_summary
from pi_lsp.compaction.branch_summary import BranchSummary, summarize_branch
from pi_lsp.errors import CompactionCancelledError, PiError
from pi_lsp.extensions import BeforeTreeEvent, TreeDecision, run_before_tree
from pi_lsp.protocol import (
    BranchSummaryEndEvent,
    BranchSummaryStartEvent,
    FileChangesResult,
    FileOutcome,
    NavigateResult,
)
from pi_lsp.session.messages import content_text
from pi_lsp.session.session import Session

logger = logging.getLogger(__name__)

Progress = Callable[[str], None]


@attrs.frozen
class ForkOutcome:
    runtime: SessionRuntime
    files: list[FileOutcome] | None = None


class Navigator:
    """Navigation, forks, labels and names for every open session."""

    def __init__(
        self,
        live: LiveConfig,
        summaries: SummaryModel,
        files: FileRestorer,
        sessions: SessionRegistry,
    ) -> None:
        self.live = live
        self.summaries = summaries
        self.files = files
        self.sessions = sessions

    async def navigate(
        self,
        runtime: SessionRuntime,
        target_id: str,
        *,
        summarize: bool = False,
        instructions: str | None = None,
        progress: Progress | None = None,
        restore_files: bool = False,
        force: bool = False,
    ) -> NavigateResult:
        """pi's ``/tree``: move the leaf, optionally summarizing the branch being left first and
        putting the files the agent changed on the way back to their content there."""
        runtime.require_idle("navigate the session tree")
        session = runtime.session
        session.require_entry(target_id)
        if target_id == session.leaf_id:
            result = move_leaf(runtime, target_id)
            return attrs.evolve(result, files=[]) if restore_files else result
        decision = await self._before_tree(runtime, target_id, summarize, instructions)
        if decision.cancelled_by:
            raise CompactionCancelledError(
                f"Navigation cancelled by the extension {decision.cancelled_by}"
            )
        if not (summarize or restore_files):
            return move_leaf(runtime, target_id)
        from_leaf = session.leaf_id
        activity = "writing a branch summary" if summarize else "restoring files"
        with runtime.summarizing(activity):
            if summarize:
                runtime.events.emit(BranchSummaryStartEvent(target_id))
            try:
                summary = (
                    await self._branch_summary(runtime, decision, target_id, instructions, progress)
                    if summarize
                    else None
                )
                restored = (
                    await self.files.restore(
                        runtime, landing_of(session, target_id)[0], force=force
                    )
                    if restore_files
                    else None
                )
            except asyncio.CancelledError:
                if summarize:
                    runtime.events.emit(
                        _failed(target_id, "The branch summary was cancelled.", True)
                    )
                raise
            except Exception as error:
                if not isinstance(error, PiError):
                    logger.exception("navigation failed in session %s", runtime.id)
                message = error.message if isinstance(error, PiError) else str(error)
                if summarize:
                    runtime.events.emit(_failed(target_id, message, False))
                raise
        result = move_leaf(runtime, target_id, summary=summary, announce=False)
        if summarize:
            model = None
            if summary is not None:
                model = "extension" if summary.from_hook else self.live.summary_model(runtime).model
            card = live_card(runtime, result.summary_entry_id, model, self.live.token_counter())
            runtime.events.emit(
                BranchSummaryEndEvent(
                    target_id, aborted=False, entry_id=result.summary_entry_id, card=card
                )
            )
        runtime.tree_changed()
        return self._with_files(runtime, from_leaf, result, restored)

    def _with_files(
        self,
        runtime: SessionRuntime,
        from_leaf: str | None,
        result: NavigateResult,
        restored: RestoreOutcome | None,
    ) -> NavigateResult:
        if restored is None:
            return result
        self._record_restore(runtime, from_leaf, result.leaf_id, restored)
        return attrs.evolve(result, files=list(restored.files))

    def _record_restore(
        self,
        runtime: SessionRuntime,
        from_leaf: str | None,
        to_leaf: str | None,
        restored: RestoreOutcome,
    ) -> None:
        try:
            self.files.record_restore(runtime, from_leaf, to_leaf, restored)
        except OSError as error:  # the files are restored; only going back exactly is lost
            logger.warning("could not write the checkpoint ledger: %s", error)

    async def file_changes(
        self,
        runtime: SessionRuntime,
        to_id: str,
        from_id: str | None = None,
        *,
        include_text: bool = False,
    ) -> FileChangesResult:
        """``pi/fileChanges``: what navigating to ``to_id`` with ``restoreFiles`` would do to the
        files (from the leaf, or between two entries), with a diff per file; touches nothing."""
        session = runtime.session
        session.require_entry(to_id)
        if from_id is not None:
            session.require_entry(from_id)
        return await self.files.preview(
            runtime, landing_of(session, to_id)[0], from_id, include_text=include_text
        )

    async def fork(
        self,
        source: SessionRuntime,
        entry_id: str,
        *,
        restore_files: bool = False,
        force: bool = False,
    ) -> ForkOutcome:
        """A new session holding the path to ``entry_id``; with ``restore_files`` the files are
        put back to their content at ``entry_id`` first (a refused edit forks nothing)."""
        source.session.require_entry(entry_id)
        if not restore_files:
            return ForkOutcome(self.sessions.fork(source, entry_id))
        source.require_idle("fork with the files")
        from_leaf = source.session.leaf_id
        with source.summarizing("restoring files"):
            restored = await self.files.restore(source, entry_id, force=force)
        fork = self.sessions.fork(source, entry_id)
        self._record_restore(fork, from_leaf, fork.session.leaf_id, restored)
        return ForkOutcome(fork, list(restored.files))

    async def _before_tree(
        self, runtime: SessionRuntime, target_id: str, summarize: bool, instructions: str | None
    ) -> TreeDecision:
        extensions = self.live.resources.extensions
        hooked = extensions.with_hook("before_tree")
        if not hooked:
            return TreeDecision()
        session = runtime.session
        plan = plan_branch_summary(
            session.by_id, session.leaf_id, target_id, 0, self.live.token_counter()
        )
        event = BeforeTreeEvent(
            session_id=runtime.id,
            target_id=target_id,
            old_leaf_id=session.leaf_id,
            common_ancestor_id=plan.common_ancestor_id,
            entries_to_summarize=[dict(entry) for entry in plan.entries],
            user_wants_summary=summarize,
            instructions=instructions,
        )
        return await run_before_tree(hooked, event, extensions.timings)

    async def _branch_summary(
        self,
        runtime: SessionRuntime,
        decision: TreeDecision,
        target_id: str,
        instructions: str | None,
        progress: Progress | None,
    ) -> BranchSummary | None:
        """The summary an extension supplied, else the model's."""
        if decision.summary is not None:
            return _extension_summary(decision.summary)
        return await self._summarize_branch(runtime, target_id, instructions, progress)

    async def _summarize_branch(
        self,
        runtime: SessionRuntime,
        target_id: str,
        instructions: str | None,
        progress: Progress | None,
    ) -> BranchSummary | None:
        call = self.summaries.for_session(runtime, "branch_summary")
        budget = self.live.current.branch_summary_settings().token_budget(call.context_window)
        plan = plan_branch_summary(
            runtime.session.by_id,
            runtime.session.leaf_id,
            target_id,
            budget,
            self.live.token_counter(),
        )
        if not plan.entries:
            return None  # the target is on the current path: nothing is being left behind
        if progress is not None:
            progress(f"Summarizing {len(plan.messages)} messages of the branch being left")
        return await summarize_branch(
            plan,
            call.complete,
            max_output_tokens=call.max_output_tokens,
            instructions=instructions,
            in_cache=call.in_cache,
            file_list_limit=self.live.current.compaction_settings().file_list_limit,
            file_exists=self.live.file_exists(),
        )

    def set_label(self, runtime: SessionRuntime, entry_id: str, label: str | None) -> str:
        """Label (or with an empty label, unlabel) ``entry_id``; the id of the label entry."""
        runtime.require_writable()
        runtime.require_idle("change labels")
        label_entry_id = runtime.session.append_label(entry_id, label or None)
        runtime.tree_changed()
        return label_entry_id

    def set_name(self, runtime: SessionRuntime, name: str) -> str:
        """Name the session; the id of the ``session_info`` entry."""
        runtime.require_writable()
        runtime.require_idle("rename the session")
        entry_id = runtime.session.append_session_info(name)
        runtime.tree_changed()
        return entry_id


def move_leaf(
    runtime: SessionRuntime,
    target_id: str,
    *,
    summary: BranchSummary | None = None,
    announce: bool = True,
) -> NavigateResult:
    """Move the leaf to ``target_id``; with ``summary`` (of the branch being left) the summary
    entry is attached where the user lands and becomes the leaf. ``announce`` sends
    ``tree_changed``."""
    session = runtime.session
    if target_id == session.leaf_id:
        return NavigateResult(session.leaf_id)
    new_leaf, editor_text = landing_of(session, target_id)
    summary_entry_id = None
    if summary is not None:
        summary_entry_id = session.branch_with_summary(
            new_leaf,
            summary.summary,
            summary.details,
            from_hook=True if summary.from_hook else None,
            usage=summary.usage,
        )
    elif new_leaf is None:
        session.reset_leaf()
    else:
        session.move_leaf(new_leaf)
    if announce:
        runtime.tree_changed()
    return NavigateResult(session.leaf_id, summary_entry_id, editor_text)


def landing_of(session: Session, target_id: str) -> tuple[str | None, str | None]:
    """Where navigating to ``target_id`` puts the leaf, and the text handed back for the editor:
    a user message (or an injected custom message) lands on its parent, its text to re-edit."""
    target = session.require_entry(target_id)
    if (target.type == "message" and target.role == "user") or target.type == "custom_message":
        parent = (
            target.parent_id if isinstance(target.parent_id, str) and target.parent_id else None
        )
        content = (
            target["message"].get("content") if target.type == "message" else target.get("content")
        )
        return parent, content_text(content, "")
    return target_id, None


def _extension_summary(supplied: dict) -> BranchSummary:
    details = supplied.get("details")
    return BranchSummary(
        summary=supplied["summary"], details=details, usage=supplied.get("usage"), from_hook=True
    )


def _failed(target_id: str, message: str, aborted: bool) -> BranchSummaryEndEvent:
    return BranchSummaryEndEvent(target_id, aborted=aborted, error_message=message)
