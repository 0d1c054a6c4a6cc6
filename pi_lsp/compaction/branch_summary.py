"""Writing a branch summary with the model: pi 0.84.2's ``generateBranchSummary`` without its cap.

``plan_branch_summary`` (in ``branch``) picks the abandoned messages that fit the budget; this
module asks the model to summarize them and assembles the ``branch_summary`` entry's text: a
preamble saying where the summary comes from, the model's text, then the file lists. The same rules
as for compaction summaries hold: the output budget is the model's own limit (pi 0.84.2 capped it at
2048 tokens), and an answer that errored, was cut off, called a tool or is empty raises
``SummaryError`` (aborted: ``CompactionCancelledError``), so the navigation can be cancelled with
the leaf untouched.

Where the provider still caches the conversation at the old leaf (``ConversationInCache``), the
summary is asked for in place: that conversation is resent unchanged with the instructions
appended, naming where the branch begins. This needs the branch to be all there in the context
(no compaction on it); otherwise, and when the in-place answer is unusable, pi's pasted form is
used.

A branch with no message to summarize gives no summary at all (``None``) where pi stores the text
"No content to summarize": an entry saying nothing would only take room in every later context,
and the user still expects the navigation itself to happen.
"""

from __future__ import annotations

from typing import Any

import attrs

from pi_lsp.compaction.branch import BranchSummaryPlan
from pi_lsp.compaction.file_ops import FileExists, editor_file_ops_in, with_editor_file_ops
from pi_lsp.compaction.prompts import (
    BRANCH_SUMMARY_PREAMBLE,
    branch_summary_instructions,
    in_place_branch_summary_instructions,
    opening_words,
    summary_request_text,
)
from pi_lsp.compaction.serialize import serialize_conversation
from pi_lsp.compaction.settings import DEFAULT_FILE_LIST_LIMIT
from pi_lsp.compaction.summarize import (
    Complete,
    ConversationInCache,
    InPlaceRequest,
    file_blocks,
    file_details,
    request_summary,
)
from pi_lsp.session.context import session_entry_to_context_messages
from pi_lsp.session.messages import content_text, convert_to_llm


@attrs.frozen
class BranchSummary:
    """The fields of the ``branch_summary`` entry to append, plus the usage of the call."""

    summary: str  # preamble + the model's text + the <read-files>/<modified-files> blocks
    details: Any  # {"readFiles": [...], "modifiedFiles": [...]}; an extension's own, or None
    usage: dict[str, Any] | None
    from_hook: bool = False
    """Supplied by an extension's ``before_tree`` hook (stored with ``fromHook: true``)."""


async def summarize_branch(
    plan: BranchSummaryPlan,
    complete: Complete,
    *,
    max_output_tokens: int | None = None,
    instructions: str | None = None,
    replace_instructions: bool = False,
    in_cache: ConversationInCache | None = None,
    file_list_limit: int = DEFAULT_FILE_LIST_LIMIT,
    file_exists: FileExists | None = None,
) -> BranchSummary | None:
    """Summarize the branch being left; None when it holds no message to summarize.

    ``instructions`` are the user's: extra focus, or with ``replace_instructions`` the whole
    instructions. Documents opened and saved in the editor anywhere on the abandoned branch count
    in the file lists, even where older messages did not fit the token budget. The lists in the
    text are bounded as a compaction's are (``file_list_limit``, ``file_exists``).
    """
    if not plan.messages:
        return None
    user_text = summary_request_text(
        serialize_conversation(convert_to_llm(plan.messages), include_thinking=False),
        branch_summary_instructions(instructions, replace_instructions),
    )
    in_place = _in_place_request(
        plan, in_cache, max_output_tokens, instructions, replace_instructions, user_text
    )
    response = await request_summary(
        complete,
        "Branch summary",
        user_text,
        max_output_tokens,
        in_cache=in_cache,
        in_place=in_place,
    )

    details = file_details(
        with_editor_file_ops(plan.file_ops, editor_file_ops_in(plan.entries)), file_exists
    )
    return BranchSummary(
        summary=BRANCH_SUMMARY_PREAMBLE
        + response.text
        + file_blocks(details, file_list_limit, file_exists),
        details=details,
        usage=response.usage,
    )


def _in_place_request(
    plan: BranchSummaryPlan,
    in_cache: ConversationInCache | None,
    max_output_tokens: int | None,
    instructions: str | None,
    replace_instructions: bool,
    pasted_text: str,
) -> InPlaceRequest | None:
    """The in-place request, when the whole branch ends the cached conversation."""
    if in_cache is None or any(entry.get("type") == "compaction" for entry in plan.entries):
        return None
    branch = [
        message for entry in plan.entries for message in session_entry_to_context_messages(entry)
    ]
    context = list(in_cache.messages)
    if not branch or len(branch) > len(context) or context[-len(branch) :] != branch:
        return None
    opening = _opening(branch)
    if not opening:
        return None
    instruction = in_place_branch_summary_instructions(opening, instructions, replace_instructions)
    return InPlaceRequest(context, instruction, max_output_tokens, pasted_text)


def _opening(branch: list) -> str:
    """The first words of the branch's first message with text (where the model should look)."""
    for message in branch:
        text = content_text(message.get("content"), "")
        if text.strip():
            return opening_words(text)
    return ""
