"""Writing a branch summary with the model: pi 0.84.2's ``generateBranchSummary`` without its cap.

``plan_branch_summary`` (in ``branch``) picks the abandoned messages that fit the budget; this
module asks the model to summarize them and assembles the ``branch_summary`` entry's text: a
preamble saying where the summary comes from, the model's text, then the file lists. The same rules
as for compaction summaries hold: the output budget is the model's own limit (pi 0.84.2 capped it at
2048 tokens), and an answer that errored, was cut off, called a tool or is empty raises
``SummaryError`` (aborted: ``CompactionCancelledError``), so the navigation can be cancelled with
the leaf untouched.

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
    summary_request_text,
)
from pi_lsp.compaction.serialize import serialize_conversation
from pi_lsp.compaction.settings import DEFAULT_FILE_LIST_LIMIT
from pi_lsp.compaction.summarize import Complete, file_blocks, file_details, request_summary
from pi_lsp.session.messages import convert_to_llm


@attrs.frozen
class BranchSummary:
    """The fields of the ``branch_summary`` entry to append, plus the usage of the call."""

    summary: str  # preamble + the model's text + the <read-files>/<modified-files> blocks
    details: dict[str, list[str]]  # {"readFiles": [...], "modifiedFiles": [...]}
    usage: dict[str, Any] | None


async def summarize_branch(
    plan: BranchSummaryPlan,
    complete: Complete,
    *,
    max_output_tokens: int | None = None,
    instructions: str | None = None,
    replace_instructions: bool = False,
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
        serialize_conversation(convert_to_llm(plan.messages)),
        branch_summary_instructions(instructions, replace_instructions),
    )
    response = await request_summary(complete, "Branch summary", user_text, max_output_tokens)

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
