"""Summary cards as ACP markdown: the facts known, file links, the summary quoted, failures."""

from __future__ import annotations

from pathlib import Path

from pi_lsp.acp.summary_cards import card_markdown, failed_markdown
from pi_lsp.protocol import SummaryCard


def test_a_live_compaction_card_has_every_fact() -> None:
    card = SummaryCard("## Goal\n\nFix it", ["a b.py"], ["/abs/c.py"], 12345, 678, "m/x", 0.00123)
    text = card_markdown("compaction", card, Path("/ws"), "threshold")
    assert text.strip().splitlines() == [
        "**Compaction summary**",
        "",
        "- Why: the context reached the compaction threshold",
        "- Tokens: 12,345 → 678",
        "- Model: m/x",
        "- Cost: $0.0012",
        "- Read: [a b.py](file:///ws/a%20b.py)",
        "- Modified: [/abs/c.py](file:///abs/c.py)",
        "",
        "> ## Goal",
        ">",
        "> Fix it",
    ]


def test_a_replayed_branch_summary_shows_only_what_its_entry_records() -> None:
    card = SummaryCard("Tried [x].", [], ["[y].py"])
    text = card_markdown("branch_summary", card, Path("/ws"))
    assert text.strip().splitlines() == [
        "**Branch summary**",
        "",
        r"- Modified: [\[y\].py](file:///ws/%5By%5D.py)",
        "",
        "> Tried [x].",
    ]
    assert "Why" not in card_markdown("compaction", SummaryCard("s", [], [], 10), Path("/ws"))


def test_a_failed_or_cancelled_summary_says_nothing_changed() -> None:
    assert failed_markdown("Compaction", "refused", False, "the session is unchanged") == (
        "_Compaction failed: refused; the session is unchanged._\n\n"
    )
    assert failed_markdown("Branch summary", "Cancelled", True, "the leaf did not move") == (
        "_Branch summary cancelled; the leaf did not move._\n\n"
    )
