"""The demo's script: the small project it writes, what the user types and does in the editor, and
what the scripted model answers, in the order the story asks for it.

The scripted answers follow the server's requests one by one: three for the first prompt (a
``read`` call, an ``edit`` call, the answer), one for the second, the compaction's summary, two for
the third prompt (an ``edit`` call, the answer) and the branch summary. The summaries are written
as a model would write them; the server appends the ``<read-files>``/``<modified-files>`` lists
itself. A real model (``--model``) gets the same prompts and writes its own answers.
"""

from __future__ import annotations

CALC_PY = '''"""A tiny statistics module for the pi-lsp demo."""

import math


def total(numbers):
    """The sum of numbers."""
    return sum(numbers)


def average(numbers):
    """The arithmetic mean of a non-empty list of numbers."""
    return total(numbers) / (len(numbers) + 1)


def median(numbers):
    """The middle value of a non-empty list of numbers."""
    ordered = sorted(numbers)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def variance(numbers):
    """The population variance of a non-empty list of numbers."""
    mean = total(numbers) / len(numbers)
    return total((number - mean) ** 2 for number in numbers) / len(numbers)


def standard_deviation(numbers):
    """The population standard deviation of a non-empty list of numbers."""
    return math.sqrt(variance(numbers))


def clamp(number, lowest, highest):
    """number, moved into the range from lowest to highest."""
    return max(lowest, min(number, highest))
'''
TEST_CALC_PY = """from calc import total


def test_total():
    assert total([1, 2, 3]) == 6
"""
TODO_MD = """# TODO

- average() returns wrong numbers
- average([]) should return 0.0 instead of raising
"""
AGENTS_MD = """# pi-lsp demo project

Keep changes minimal and answer in one or two sentences.
"""
PROJECT_FILES = {
    "calc.py": CALC_PY,
    "test_calc.py": TEST_CALC_PY,
    "TODO.md": TODO_MD,
    "AGENTS.md": AGENTS_MD,
}

BUGGY_LINE = "return total(numbers) / (len(numbers) + 1)"
FIXED_LINE = "return total(numbers) / len(numbers)"
EMPTY_LIST_GUARD = "if not numbers:"

# What the user adds to test_calc.py in the editor (the second answer's assertion) before saving.
USER_TEST = """

def test_average():
    from calc import average

    assert average([2, 4, 6]) == 4
"""

FIRST_PROMPT = (
    "average() in calc.py returns wrong numbers. Read calc.py, fix the bug with the edit tool, "
    "and tell me in one sentence what was wrong."
)
SECOND_PROMPT = "Write a one-line pytest assertion that would have caught that bug."
THIRD_PROMPT = "Make average() of an empty list return 0.0."
COMPACT_FOCUS = "Keep what is left to do on calc.py."

FIRST_ANSWER = (
    "average() divided the total by len(numbers) + 1 instead of len(numbers), so every mean "
    "came out too small; it now divides by the number of items."
)
SECOND_ANSWER = "`assert average([2, 4, 6]) == 4` (the buggy version returned 3.0)."
THIRD_ANSWER = "average([]) now returns 0.0; every other list gives the same mean as before."

COMPACTION_SUMMARY = """## Goal
Fix average() in calc.py, which returned wrong numbers.

## Constraints & Preferences
- Keep changes minimal; answer in one or two sentences.

## Progress
### Done
- [x] calc.py: average() divided by `len(numbers) + 1`; it now divides by `len(numbers)`.

## Key Decisions
- **One-line fix**: only the divisor changed, nothing else in calc.py.

## Next Steps
1. Decide what average() should return for an empty list.

## Critical Context
- `total()` is correct; `average()` relies on it."""

BRANCH_SUMMARY = """## Goal
Make average() of an empty list return 0.0.

## Progress
### Done
- [x] calc.py: average() returns 0.0 for an empty list; its docstring says so.

## Next Steps
1. Add `assert average([]) == 0.0` to test_calc.py."""

# The third prompt's edit, on the fixed calc.py.
GUARD_OLD_TEXT = '''    """The arithmetic mean of a non-empty list of numbers."""
    return total(numbers) / len(numbers)'''
GUARD_NEW_TEXT = '''    """The arithmetic mean of numbers; 0.0 for an empty list."""
    if not numbers:
        return 0.0
    return total(numbers) / len(numbers)'''


def scripted_replies() -> tuple:
    """The scripted model's answers, in the order the story asks for them."""
    from pi_lsp.scripted_llm import replies

    fix = {"path": "calc.py", "edits": [{"oldText": BUGGY_LINE, "newText": FIXED_LINE}]}
    guard = {"path": "calc.py", "edits": [{"oldText": GUARD_OLD_TEXT, "newText": GUARD_NEW_TEXT}]}
    # A small delay between chunks, so the answers visibly stream in like a real model's.
    return (
        replies.tool_calls(
            [("call_read_calc", "read", {"path": "calc.py"})], text="Let me look at calc.py."
        ),
        replies.tool_calls(
            [("call_fix_average", "edit", fix)], text="The divisor is off by one; fixing it."
        ),
        replies.slow_text(FIRST_ANSWER, chunks=16, chunk_delay=0.03),
        replies.slow_text(SECOND_ANSWER, chunks=8, chunk_delay=0.03),
        replies.text(COMPACTION_SUMMARY),
        replies.tool_calls([("call_empty_list", "edit", guard)], text="Adding the guard."),
        replies.slow_text(THIRD_ANSWER, chunks=8, chunk_delay=0.03),
        replies.text(BRANCH_SUMMARY),
    )
