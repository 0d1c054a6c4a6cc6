"""When to compact: the threshold, stale usage after a compaction or a context edit, the three
moments, overflow."""

import pytest

from pi_lsp.compaction.policy import (
    Moment,
    compaction_start,
    context_tokens,
    may_recover_from_overflow,
    needs_compaction,
    should_compact,
    shown_context_tokens,
    usage_is_stale,
)
from pi_lsp.compaction.settings import CompactionSettings, Threshold, parse_threshold
from pi_lsp.compaction.tokens import CHARS4
from pi_lsp.session.context import build_session_context
from tests.builders import SessionBuilder, usage

SETTINGS = CompactionSettings(enabled=True, reserve_tokens=1000, keep_recent_tokens=100)
WINDOW = 3000
BIG = usage(2500, 10)
SMALL = usage(300, 5)


def messages_of(session: SessionBuilder) -> list[dict]:
    return build_session_context(session.entries, session.entries[-1]["id"]).messages


def needs(moment: Moment, session: SessionBuilder, settings=SETTINGS) -> bool:
    return needs_compaction(moment, session.entries, messages_of(session), CHARS4, WINDOW, settings)


def test_should_compact_when_the_context_grows_into_the_reserve():
    settings = CompactionSettings(enabled=True, reserve_tokens=10000, keep_recent_tokens=20000)
    assert should_compact(95000, 100000, settings) is True
    assert should_compact(89000, 100000, settings) is False
    assert should_compact(90000, 100000, settings) is False  # strictly greater
    assert should_compact(None, 100000, settings) is False
    disabled = CompactionSettings(enabled=False, reserve_tokens=10000)
    assert should_compact(95000, 100000, disabled) is False


def test_after_a_turn_the_last_answer_decides():
    session = SessionBuilder()
    session.user("hi")
    session.assistant("big", usage_=BIG)
    assert needs(Moment.AFTER_TURN, session) and needs(Moment.BEFORE_PROMPT, session)
    session.user("again")
    session.assistant("small", usage_=SMALL)
    assert not needs(Moment.AFTER_TURN, session)


def test_a_failed_answer_reports_nothing_and_an_aborted_one_is_looked_past_before_a_prompt():
    session = SessionBuilder()
    session.user("hi")
    session.assistant("big", usage_=BIG)
    session.user("again")
    session.assistant("cut", usage_=usage(), stop_reason="aborted")
    assert not needs(Moment.AFTER_TURN, session)
    assert needs(Moment.BEFORE_PROMPT, session)
    session.user("once more")
    session.assistant("failed", usage_=BIG, stop_reason="error")
    assert not needs(Moment.BEFORE_PROMPT, session)


def test_usage_from_before_a_compaction_is_stale():
    session = SessionBuilder()
    first = session.user("hi")
    session.assistant("big", usage_=BIG)
    session.compaction("## Goal\nsummary", first["id"], tokens_before=2510)
    assert usage_is_stale(session.entries)
    for moment in Moment:
        assert not needs(moment, session)
    assert shown_context_tokens(session.entries, messages_of(session), CHARS4) is None
    estimated = context_tokens(session.entries, messages_of(session), CHARS4)
    assert estimated is not None and estimated < 2510  # every message estimated, usage ignored
    session.user("and now")
    session.assistant("fresh", usage_=SMALL)
    assert not usage_is_stale(session.entries)
    assert shown_context_tokens(session.entries, messages_of(session), CHARS4) == 305


def test_between_rounds_the_tool_results_after_the_answer_count_too():
    session = SessionBuilder()
    session.user("read it")
    session.assistant("calling", usage_=usage(1900, 10))
    session.tool_result("x" * 400)  # about 100 tokens more: 2010 > 3000 - 1000
    assert needs(Moment.BETWEEN_ROUNDS, session)
    assert not needs(Moment.AFTER_TURN, session)
    disabled = CompactionSettings(enabled=False, reserve_tokens=1000)
    assert not needs(Moment.BETWEEN_ROUNDS, session, disabled)


def test_usage_from_before_a_context_edit_counts_what_the_edit_removed():
    session = SessionBuilder()
    pasted = session.user("x" * 8000)  # ~2000 tokens the user later leaves out (pi 1.6)
    session.assistant("big", usage_=BIG)
    assert needs(Moment.AFTER_TURN, session)
    session.context_edit(pasted["id"], None)
    assert usage_is_stale(session.entries)
    # The reported 2510 tokens included the pasted text: every message is estimated instead, for
    # the threshold at each moment and for what is shown (not unknown, as after a compaction).
    for moment in Moment:
        assert not needs(moment, session)
    shown = shown_context_tokens(session.entries, messages_of(session), CHARS4)
    assert shown is not None and shown < 10
    session.user("next")
    session.assistant("fresh", usage_=SMALL)
    assert not usage_is_stale(session.entries)
    assert shown_context_tokens(session.entries, messages_of(session), CHARS4) == 305


def test_an_empty_context_has_no_size():
    assert context_tokens([], [], CHARS4) is None


def test_overflow_recovery_is_tried_once_and_only_when_compaction_is_enabled():
    assert may_recover_from_overflow(SETTINGS, already_recovered=False)
    assert not may_recover_from_overflow(SETTINGS, already_recovered=True)
    disabled = CompactionSettings(enabled=False)
    assert not may_recover_from_overflow(disabled, already_recovered=False)


def test_a_threshold_starts_compaction_earlier_but_never_later_than_pi():
    pi = CompactionSettings(reserve_tokens=16384)
    assert compaction_start(100000, pi) == 100000 - 16384
    half = CompactionSettings(reserve_tokens=16384, threshold=parse_threshold("50%"))
    assert compaction_start(100000, half) == 50000
    assert should_compact(50001, 100000, half) and not should_compact(50000, 100000, half)
    assert not should_compact(50001, 100000, pi)
    tokens = CompactionSettings(reserve_tokens=16384, threshold=parse_threshold(150000))
    assert compaction_start(200000, tokens) == 150000
    assert compaction_start(128000, tokens) == 128000 - 16384  # pi's reserve comes first here
    late = CompactionSettings(reserve_tokens=16384, threshold=parse_threshold("99.5%"))
    assert compaction_start(100000, late) == 100000 - 16384


def test_a_threshold_decides_at_every_moment():
    half = CompactionSettings(reserve_tokens=100, keep_recent_tokens=100, threshold=Threshold(50))
    session = SessionBuilder()
    session.user("hi")
    session.assistant("mid-sized", usage_=usage(1600, 10))  # 1610 of 3000: under window - 100
    assert not needs(Moment.AFTER_TURN, session)
    assert needs(Moment.AFTER_TURN, session, half) and needs(Moment.BEFORE_PROMPT, session, half)


@pytest.mark.parametrize("value", ["80", "0%", "101%", "-5%", "80 percent", 0, -1, 1.5, True, None])
def test_invalid_thresholds_are_refused_saying_what_is_expected(value):
    with pytest.raises(ValueError, match=r'percentage of the context window such as "80%"'):
        parse_threshold(value)


def test_thresholds_read_back_as_written():
    assert parse_threshold(" 80 % ") == Threshold(percent=80.0)
    assert (
        parse_threshold("80%").to_json() == "80%" and parse_threshold("12.5%").to_json() == "12.5%"
    )
    assert parse_threshold(150000).to_json() == 150000
