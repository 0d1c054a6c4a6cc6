"""Extension hooks: load order, cancel at once, last supplied summary wins, failures skipped."""

from pi_lsp.extensions import BeforeCompactEvent, Extension, run_before_compact


class Returns:
    def __init__(self, value):
        self.value = value

    async def before_compact(self, event):
        return self.value


class Raises:
    def before_compact(self, event):
        raise RuntimeError("broken")


def event() -> BeforeCompactEvent:
    return BeforeCompactEvent(
        preparation=None, branch_entries=[], instructions=None, reason="manual", will_retry=False
    )


def supplied(summary: str) -> dict:
    return {"compaction": {"summary": summary, "firstKeptEntryId": "a1", "tokensBefore": 1}}


async def test_the_last_valid_summary_wins_and_broken_extensions_are_skipped():
    extensions = [
        Extension("one", Returns(supplied("first"))),
        Extension("broken", Raises()),
        Extension("two", Returns(supplied("second"))),
        Extension("invalid", Returns({"compaction": {"summary": ""}})),
        Extension("silent", Returns(None)),
        Extension("no-hook", object()),
    ]
    decision = await run_before_compact(extensions, event())
    assert decision.compaction["summary"] == "second" and decision.supplied_by == "two"


async def test_a_cancel_stops_at_once():
    extensions = [
        Extension("stopper", Returns({"cancel": True})),
        Extension("late", Returns(supplied("never"))),
    ]
    decision = await run_before_compact(extensions, event())
    assert decision.cancelled_by == "stopper" and decision.compaction is None
