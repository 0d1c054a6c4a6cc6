"""Probe-based evaluation of compaction summaries: reading the model's probes and grades, and the
scores (``compaction/probes.py``). A malformed answer is an error, never a score."""

from __future__ import annotations

import pytest

from pi_lsp.compaction.probes import (
    EvalError,
    Grade,
    GradedProbe,
    Probe,
    grading_request,
    parse_grade,
    parse_probes,
    probe_request,
    scores,
)

PROBES_IN_PROSE = """Here are the questions:
```json
[
  {"type": "recall", "question": "Which port?", "answer": "8443"},
  {"type": "artifact", "question": "Which file changed?", "answer": "src/app.py"},
  {"type": "vibes", "question": "How did it feel?", "answer": "good"},
  {"type": "decision", "question": "", "answer": "x"},
  {"type": "continuation", "question": "What next?", "answer": "Run the tests"}
]
```"""


def test_probes_are_read_from_json_in_prose_keeping_only_complete_known_ones():
    assert parse_probes(PROBES_IN_PROSE, 10) == [
        Probe("recall", "Which port?", "8443"),
        Probe("artifact", "Which file changed?", "src/app.py"),
        Probe("continuation", "What next?", "Run the tests"),
    ]
    assert len(parse_probes(PROBES_IN_PROSE, 2)) == 2


@pytest.mark.parametrize(
    "text",
    [
        "no JSON at all",
        '{"type": "recall"}',
        "[]",
        '[{"type": "vibes", "question": "q", "answer": "a"}]',
    ],
)
def test_an_answer_without_usable_probes_is_an_error(text):
    with pytest.raises(EvalError, match="probe question"):
        parse_probes(text, 4)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"score": 4, "reason": "misses the port"}', Grade(4, "misses the port")),
        ('Verdict: {"score": 5.0} — fine', Grade(5, "")),
        (
            '```\n{"score": 0, "reason": " says it does not know "}\n```',
            Grade(0, "says it does not know"),
        ),
    ],
)
def test_grades_are_read(text, expected):
    assert parse_grade(text) == expected


@pytest.mark.parametrize(
    "text",
    ['{"score": 6}', '{"score": -1}', '{"score": "4"}', '{"score": true}', "4/5", '{"score": 4.5}'],
)
def test_a_grade_without_a_score_from_0_to_5_is_an_error(text):
    with pytest.raises(EvalError, match="no score from 0 to 5"):
        parse_grade(text)


def test_scores_per_type_and_overall_as_shares_of_the_best_grade():
    graded = [
        GradedProbe(Probe("recall", "q1", "a"), "x", Grade(5, "")),
        GradedProbe(Probe("recall", "q2", "a"), "x", Grade(0, "")),
        GradedProbe(Probe("decision", "q3", "a"), "x", Grade(4, "")),
    ]
    by_type, overall = scores(graded)
    assert [(item.type, item.probes, item.score) for item in by_type] == [
        ("recall", 2, 50.0),
        ("decision", 1, 80.0),
    ]
    assert overall == pytest.approx(60.0)


def test_the_requests_carry_what_the_model_needs():
    asking = probe_request("[User]: deploy on port 8443", 6)
    assert "deploy on port 8443" in asking and "Write 6 questions" in asking
    assert all(kind in asking for kind in ("recall", "artifact", "continuation", "decision"))
    grading = grading_request(
        "[User]: full transcript", Probe("recall", "Which port?", "8443"), "443"
    )
    assert "full transcript" in grading and "Which port?" in grading
    assert "<reference-answer>\n8443" in grading and "<answer>\n443" in grading
