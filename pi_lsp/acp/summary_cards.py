"""A compaction's or branch summary's card as the markdown of an ACP agent message.

ACP has no card of its own, so the chats' card (``protocol.SummaryCard``) is written out: a
heading, then why (live compactions only: a saved entry does not record it), the tokens before →
after, the model that wrote it and its cost where known, the read and modified files as links that
open them, and the summary itself quoted. A failed or cancelled summary says that nothing changed.
"""

from __future__ import annotations

from pathlib import Path

from pi_lsp.protocol import CompactionReason, SummaryCard

HEADINGS = {"compaction": "Compaction summary", "branch_summary": "Branch summary"}

REASONS: dict[str, str] = {
    "manual": "asked for",
    "threshold": "the context reached the compaction threshold",
    "overflow": "the provider refused the context or cut the answer short",
}
"""Why a compaction ran, in words (the same as the Neovim chat's)."""


def card_markdown(
    entry_type: str, card: SummaryCard, cwd: Path, reason: CompactionReason | None = None
) -> str:
    """The card of a ``compaction`` or ``branch_summary`` entry as markdown."""
    facts = _facts(card, cwd, reason)
    lines = [f"**{HEADINGS.get(entry_type, 'Summary')}**", ""]
    if facts:
        lines += [f"- {fact}" for fact in facts] + [""]
    lines += [f"> {line}" if line else ">" for line in card.summary.splitlines()]
    return "\n\n" + "\n".join(lines) + "\n\n"


def failed_markdown(what: str, error_message: str | None, aborted: bool, unchanged: str) -> str:
    """A summary that failed or was cancelled: what happened and that nothing changed."""
    if aborted:
        return f"_{what} cancelled; {unchanged}._\n\n"
    return f"_{what} failed: {error_message}; {unchanged}._\n\n"


def _facts(card: SummaryCard, cwd: Path, reason: CompactionReason | None) -> list[str]:
    facts = []
    if reason is not None:
        facts.append(f"Why: {REASONS.get(reason, reason)}")
    tokens = _tokens(card.tokens_before, card.tokens_after)
    if tokens:
        facts.append(f"Tokens: {tokens}")
    if card.model:
        facts.append(f"Model: {card.model}")
    if card.cost is not None:
        facts.append(f"Cost: ${card.cost:.4f}")
    for label, paths in (("Read", card.read_files), ("Modified", card.modified_files)):
        if paths:
            facts.append(f"{label}: " + ", ".join(_file_link(path, cwd) for path in paths))
    return facts


def _tokens(before: int | None, after: int | None) -> str:
    if before is not None and after is not None:
        return f"{before:,} → {after:,}"
    if before is not None:
        return f"{before:,} before"
    if after is not None:
        return f"{after:,} after"
    return ""


def _file_link(path: str, cwd: Path) -> str:
    """A markdown link that opens ``path`` (relative paths are the session's workspace's)."""
    absolute = Path(path).expanduser()
    if not absolute.is_absolute():
        absolute = cwd / absolute
    label = path.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({absolute.as_uri()})"
