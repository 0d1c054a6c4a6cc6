"""Writing a planned compaction's summary with the model: pi 0.84.2's ``compact``, as pi's docs
intend it rather than as its bugs have it (spec §11).

``prepare_compaction`` decides what to summarize; this module asks the model for the summary and
assembles the compaction's fields. The model is injected as a ``Complete`` function, so this package
stays free of any provider code. Differences from pi 0.84.2, all deliberate:

- the output budget is whatever the caller passes (the model's own output limit), not a share of
  ``reserveTokens``;
- a summary that stopped at the output limit, called a tool, came back empty or errored is a
  failure (``SummaryError``), never stored; an aborted one raises ``CompactionCancelledError``;
- a split turn with nothing new before it keeps the previous summary instead of replacing it with
  "No prior history.", and the two summary calls of a split turn run one after the other;
- the user's instructions apply to the turn-prefix summary too;
- documents the user opened and saved in the editor count in the file lists;
- where the provider still holds the conversation in its prompt cache (``ConversationInCache``),
  the summary is asked for *in place*: the conversation's own prefix is resent as it is, followed
  by the instructions, so its tokens are cache reads at a tenth of the price instead of a pasted
  copy at full price (pi asks every summary with caching off). An in-place answer that is not a
  usable summary (a tool call, nothing, cut off, an error) is asked again in pi's pasted form;
- the file lists in the summary's text are bounded (``compaction.fileListLimit`` paths each, most
  recently touched first; files that are gone leave the read list or are marked deleted), while
  ``details`` keeps them complete up to a hard cap (see ``file_ops``).

It also holds what branch summaries share with compactions: the ``Complete`` type, checking a
model response, and adding up usage.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs

from pi_lsp.compaction.file_ops import (
    EditorFileOps,
    FileExists,
    FileOps,
    SummaryFileLists,
    editor_file_ops_in,
    format_bounded_file_operations,
    path_exists,
    summary_file_lists,
    with_editor_file_ops,
)
from pi_lsp.compaction.prepare import CompactionPreparation
from pi_lsp.compaction.prompts import (
    NO_PRIOR_HISTORY,
    SPLIT_TURN_SEPARATOR,
    SUMMARIZER_SYSTEM_PROMPT,
    compaction_instructions,
    in_place_compaction_instructions,
    in_place_turn_prefix_instructions,
    opening_words,
    summary_request_text,
    turn_prefix_instructions,
)
from pi_lsp.compaction.serialize import serialize_conversation
from pi_lsp.compaction.settings import DEFAULT_FILE_LIST_LIMIT
from pi_lsp.errors import CompactionCancelledError, NothingToCompactError, SummaryError
from pi_lsp.session.context import entry_ids, first_index_with_id
from pi_lsp.session.js_values import UNDEFINED, is_truthy, to_string
from pi_lsp.session.message_types import AssistantMessage, MessageRecord
from pi_lsp.session.messages import content_text, convert_to_llm

__all__ = [
    "CompactionSummary",
    "Complete",
    "ConversationInCache",
    "InPlaceComplete",
    "InPlaceRequest",
    "SummaryResponse",
    "combine_usage",
    "editor_file_ops_in",
    "editor_records_to_fold_in",
    "entries_to_summarize",
    "file_blocks",
    "file_details",
    "request_summary",
    "summarize_compaction",
]

Complete = Callable[[str, str, int | None], Awaitable[AssistantMessage]]
"""``(system_prompt, user_text, max_output_tokens) -> assistant message``: one model call, no tools.

The result is pi's assistant message: ``content`` blocks, ``stopReason`` (``stop``, ``length``,
``toolUse``, ``error`` or ``aborted``), ``errorMessage`` when it failed, and ``usage``.
``max_output_tokens`` None lets the provider apply the model's own limit.
"""


@attrs.frozen
class InPlaceRequest:
    """A summary to ask for in place."""

    prefix: Sequence[Mapping[str, Any]]
    """The conversation's messages the summary covers (a prefix of the context)."""
    instruction: str
    """The one user message appended to them."""
    max_output_tokens: int | None
    pasted_text: str
    """The pasted form's request text: asking in place is only worth it when cheaper."""


InPlaceComplete = Callable[[InPlaceRequest], Awaitable[AssistantMessage | None]]
"""``InPlaceRequest -> assistant message``: the conversation's own request (its system prompt and
tools) with the prefix as its messages and the instruction appended as one user message; None
when that is not worth it or not possible (not what the provider cached, too long for the window,
dearer than the pasted form), and the pasted form is used."""

Entry = Mapping[str, Any]

logger = logging.getLogger(__name__)


@attrs.frozen
class ConversationInCache:
    """The conversation as the model last saw it, still in the provider's prompt cache."""

    messages: Sequence[MessageRecord]
    """The context messages at the leaf (``build_context().messages``)."""
    complete: InPlaceComplete


@attrs.frozen
class CompactionSummary:
    """The fields of the compaction entry to append, plus the usage of the summary calls."""

    summary: str  # the model's text followed by the <read-files>/<modified-files> blocks
    first_kept_entry_id: str
    tokens_before: int | float
    details: dict[str, list[str]] | None  # {"readFiles": [...], "modifiedFiles": [...]}
    usage: dict[str, Any] | None  # the calls' usage added up; None when no call reported any


@attrs.frozen
class SummaryResponse:
    """A checked model answer: its text and usage."""

    text: str
    usage: dict[str, Any] | None


async def summarize_compaction(
    preparation: CompactionPreparation,
    complete: Complete,
    *,
    max_output_tokens: int | None = None,
    instructions: str | None = None,
    editor_file_ops: Sequence[EditorFileOps] = (),
    in_cache: ConversationInCache | None = None,
    file_exists: FileExists | None = None,
) -> CompactionSummary:
    """Summarize what ``preparation`` says to summarize.

    ``instructions`` are the user's (``/compact <text>``), added as extra focus to every call.
    ``editor_file_ops`` are the editor's records since the previous compaction's kept entries,
    kept tail included: pass ``editor_file_ops_in(editor_records_to_fold_in(path_entries))``.
    ``in_cache``, when given, lets the summaries be asked for in place (module docstring).
    ``file_exists`` tells which paths still exist (read files that are gone leave the lists,
    modified ones are marked deleted); without it every path counts as existing.
    Raises ``SummaryError`` or ``CompactionCancelledError``; nothing is half-done either way.
    """
    previous_summary = _previous_summary_text(preparation.previous_summary)
    if preparation.is_split_turn and preparation.turn_prefix_messages:
        history = await _split_turn_history(
            preparation, previous_summary, complete, max_output_tokens, instructions, in_cache
        )
        # One call after the other: local model servers often serve a single request at a time.
        prefix = await _turn_prefix_summary(
            preparation, complete, max_output_tokens, instructions, in_cache
        )
        text = history.text + SPLIT_TURN_SEPARATOR + prefix.text
        usage = combine_usage(history.usage, prefix.usage)
    else:
        if not preparation.messages_to_summarize:
            raise NothingToCompactError("Nothing to compact: no messages before the kept ones")
        history = await _history_summary(
            preparation, previous_summary, complete, max_output_tokens, instructions, in_cache
        )
        text, usage = history.text, history.usage

    details = file_details(with_editor_file_ops(preparation.file_ops, editor_file_ops), file_exists)
    limit = preparation.settings.file_list_limit
    return CompactionSummary(
        summary=text + file_blocks(details, limit, file_exists),
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details=details,
        usage=usage,
    )


async def _split_turn_history(
    preparation: CompactionPreparation,
    previous_summary: str | None,
    complete: Complete,
    max_output_tokens: int | None,
    instructions: str | None,
    in_cache: ConversationInCache | None,
) -> SummaryResponse:
    """The part of a split-turn summary that covers the turns before the split one."""
    if preparation.messages_to_summarize:
        return await _history_summary(
            preparation, previous_summary, complete, max_output_tokens, instructions, in_cache
        )
    # Nothing new happened before the split turn: the previous summary still says it all.
    return SummaryResponse(previous_summary or NO_PRIOR_HISTORY, None)


async def _history_summary(
    preparation: CompactionPreparation,
    previous_summary: str | None,
    complete: Complete,
    max_output_tokens: int | None,
    instructions: str | None,
    in_cache: ConversationInCache | None,
) -> SummaryResponse:
    user_text = summary_request_text(
        _serialized(preparation.messages_to_summarize),
        compaction_instructions(previous_summary is not None, instructions),
        previous_summary,
    )
    prefix = _cached_prefix(in_cache, preparation, preparation.messages_to_summarize)
    in_place = None
    if prefix is not None:
        instruction = in_place_compaction_instructions(previous_summary is not None, instructions)
        in_place = InPlaceRequest(prefix, instruction, max_output_tokens, user_text)
    return await request_summary(
        complete,
        "Compaction summary",
        user_text,
        max_output_tokens,
        in_cache=in_cache,
        in_place=in_place,
    )


async def _turn_prefix_summary(
    preparation: CompactionPreparation,
    complete: Complete,
    max_output_tokens: int | None,
    instructions: str | None,
    in_cache: ConversationInCache | None,
) -> SummaryResponse:
    """The summary of the split turn's first part."""
    turn = preparation.turn_prefix_messages
    user_text = summary_request_text(_serialized(turn), turn_prefix_instructions(instructions))
    prefix = _cached_prefix(in_cache, preparation, [*preparation.messages_to_summarize, *turn])
    in_place = None
    if prefix is not None:
        opening = opening_words(content_text(turn[0].get("content"), ""))
        instruction = in_place_turn_prefix_instructions(opening, instructions)
        in_place = InPlaceRequest(prefix, instruction, max_output_tokens, user_text)
    return await request_summary(
        complete,
        "Split-turn summary",
        user_text,
        max_output_tokens,
        in_cache=in_cache,
        in_place=in_place,
    )


def _cached_prefix(
    in_cache: ConversationInCache | None,
    preparation: CompactionPreparation,
    summarized: Sequence[MessageRecord],
) -> list[MessageRecord] | None:
    """The conversation's messages up to the end of ``summarized``: the previous compaction's
    summary (when there is one) and then exactly ``summarized``; None when the context at the
    leaf does not start that way (a prefix that was never sent cannot be in the cache)."""
    if in_cache is None or not summarized:
        return None
    context = list(in_cache.messages)
    offset = 1 if preparation.previous_summary is not None else 0
    if offset and (not context or context[0].get("role") != "compactionSummary"):
        return None
    end = offset + len(summarized)
    if len(context) < end or context[offset:end] != list(summarized):
        return None
    return context[:end]


def _previous_summary_text(previous_summary: Any) -> str | None:
    """The previous compaction's summary as text, None when there is none (pi tests truthiness)."""
    return to_string(previous_summary) if is_truthy(previous_summary) else None


def _serialized(messages: Sequence[MessageRecord]) -> str:
    """The summarizer's text, without thinking (pi 1.2.0+; ``serialize.py`` says why)."""
    return serialize_conversation(convert_to_llm(messages), include_thinking=False)


def file_blocks(
    details: Mapping[str, list[str]],
    limit: int = DEFAULT_FILE_LIST_LIMIT,
    file_exists: FileExists | None = None,
) -> str:
    """The ``<read-files>``/``<modified-files>`` blocks that end a summary's text: the newest
    ``limit`` paths of each of ``details``' lists, deleted ones marked."""
    modified = details["modifiedFiles"]
    deleted = (
        frozenset(path for path in modified if not path_exists(file_exists, path))
        if file_exists is not None
        else frozenset()
    )
    return format_bounded_file_operations(
        SummaryFileLists(details["readFiles"], modified, deleted), limit
    )


def file_details(file_ops: FileOps, file_exists: FileExists | None = None) -> dict[str, list[str]]:
    """The ``details`` stored with a summary, from which the next summary carries the lists on:
    complete up to a hard cap, most recently touched first, read files that are gone left out."""
    return summary_file_lists(file_ops, file_exists).details()


def entries_to_summarize(path_entries: Sequence[Entry], first_kept_entry_id: Any) -> list[Entry]:
    """The entries a compaction with this ``first_kept_entry_id`` summarizes (split-turn prefix
    included): from the previous compaction's first kept entry, or the path's start, up to the first
    kept entry."""
    end = first_index_with_id(entry_ids(path_entries), first_kept_entry_id, len(path_entries))
    if end < 0:
        return []
    return list(path_entries[_range_start(path_entries) : end])


def editor_records_to_fold_in(path_entries: Sequence[Entry]) -> list[Entry]:
    """The entries whose editor file operations a compaction of ``path_entries`` folds into its
    file lists: from the previous compaction's first kept entry, or the path's start, to the end.

    The kept tail counts too: unlike the agent's tool calls, which its kept messages still show,
    the editor's records never reach the model except through a summary's lists. Records before
    that range already live in the previous compaction's ``details``.
    """
    return list(path_entries[_range_start(path_entries) :])


def _range_start(path_entries: Sequence[Entry]) -> int:
    """Where a compaction's range starts: the previous compaction's first kept entry, else the
    entry after that compaction, else the path's start."""
    for index in range(len(path_entries) - 1, -1, -1):
        if path_entries[index].get("type") == "compaction":
            kept_id = path_entries[index].get("firstKeptEntryId", UNDEFINED)
            kept_index = first_index_with_id(entry_ids(path_entries), kept_id, len(path_entries))
            return kept_index if kept_index >= 0 else index + 1
    return 0


# ------------------------------------------------------------------ one checked model call


async def request_summary(
    complete: Complete,
    what: str,
    user_text: str,
    max_output_tokens: int | None,
    *,
    in_cache: ConversationInCache | None = None,
    in_place: InPlaceRequest | None = None,
) -> SummaryResponse:
    """Ask for one summary and insist on a usable answer; ``what`` names it in error messages.

    With ``in_cache`` and ``in_place`` the summary is first asked for in place; when that is not
    sent (``InPlaceComplete`` answers None) or gives no usable summary, it is asked again in the
    pasted form ``user_text``. An unusable in-place answer was paid for, so its usage is added to
    the pasted one's. A cancellation is not swallowed.
    """
    spent: dict[str, Any] | None = None
    if in_cache is not None and in_place is not None:
        response = await in_cache.complete(in_place)
        if response is not None:
            spent = _usage_of(response)
            try:
                text = _checked_text(response, what, in_place.max_output_tokens)
            except SummaryError as problem:
                logger.info(
                    "%s in place failed (%s); asking with the conversation pasted", what, problem
                )
            else:
                return SummaryResponse(text, spent)
    response = await complete(SUMMARIZER_SYSTEM_PROMPT, user_text, max_output_tokens)
    text = _checked_text(response, what, max_output_tokens)
    return SummaryResponse(text, combine_usage(spent, _usage_of(response)))


def _checked_text(response: Mapping[str, Any], what: str, max_output_tokens: int | None) -> str:
    stop_reason = response.get("stopReason")
    if stop_reason == "aborted":
        raise CompactionCancelledError(f"{what} cancelled")
    if stop_reason == "error":
        reason = response.get("errorMessage") or "the model reported an unknown error"
        raise SummaryError(f"{what} failed: {reason}")
    if stop_reason == "length":
        # A truncated checkpoint silently loses its last sections (Next Steps, Critical Context).
        limit = f" ({max_output_tokens} tokens)" if max_output_tokens else ""
        raise SummaryError(f"{what} failed: the summary was cut off at the output limit{limit}")
    content = response.get("content")
    if stop_reason == "toolUse" or _has_tool_call(content):
        raise SummaryError(f"{what} failed: the model called a tool instead of writing a summary")
    text = content_text(content)
    if not text.strip():
        raise SummaryError(f"{what} failed: the model returned no summary text")
    return text


def _has_tool_call(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(block, Mapping) and block.get("type") == "toolCall" for block in content
    )


def _usage_of(response: Mapping[str, Any]) -> dict[str, Any] | None:
    usage = response.get("usage")
    return dict(usage) if isinstance(usage, Mapping) else None


def combine_usage(
    first: Mapping[str, Any] | None, second: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Two usage records added up: numbers summed, nested records (``cost``) likewise; a field only
    one side has is kept; None when neither side has usage."""
    if first is None:
        return dict(second) if second is not None else None
    if second is None:
        return dict(first)
    combined = dict(first)
    for key, value in second.items():
        if key not in combined:
            combined[key] = value
        elif _is_number(combined[key]) and _is_number(value):
            combined[key] = combined[key] + value
        elif isinstance(combined[key], Mapping) and isinstance(value, Mapping):
            combined[key] = combine_usage(combined[key], value)
    return combined


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
