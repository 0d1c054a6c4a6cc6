"""How much a compaction summary keeps: probe questions, their grading, and the scores.

The method (probe-based evaluation of context compression) asks the model questions about the part
of the conversation a compaction would summarize, lets it answer from the compacted context only
(the summary and the kept messages), and grades each answer against the full transcript. Four
kinds of probe cover what a coding agent needs after a compaction:

- ``recall``: a fact stated in the conversation (a name, a number, an error message);
- ``artifact``: the trail of files (which were read, created, changed, and how);
- ``continuation``: what to do next, where the work stands;
- ``decision``: what was decided, and why.

This module is pure: the prompts, the parsing of the model's answers (a malformed one raises
``EvalError``, never passes as a score), and the report. ``pi_lsp/eval_cli.py`` makes the calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from pi_lsp.errors import PiError

PROBE_TYPES = ("recall", "artifact", "continuation", "decision")
MAX_SCORE = 5

PROBE_SYSTEM_PROMPT = (
    "You write exam questions that test whether someone who did not read a conversation between a "
    "user and a coding agent still knows what matters in it. Answer with JSON only."
)

ANSWER_SYSTEM_PROMPT = (
    "You are a coding agent continuing the conversation above. Answer the user's question from "
    "what the conversation tells you, briefly. If it does not tell you, say that you do not know."
)

GRADER_SYSTEM_PROMPT = (
    "You grade answers about a conversation between a user and a coding agent, strictly, against "
    "the full transcript. Answer with JSON only."
)


class EvalError(PiError):
    """The evaluation could not go on: a model call failed or gave an answer that cannot be read."""

    code = -32014


@attrs.frozen
class Probe:
    type: str
    question: str
    reference_answer: str


@attrs.frozen
class Grade:
    score: int
    """0 (wrong or missing) to ``MAX_SCORE`` (complete and correct)."""
    reason: str


@attrs.frozen
class GradedProbe:
    probe: Probe
    answer: str
    grade: Grade


def probe_request(conversation: str, count: int) -> str:
    """The user message asking for ``count`` probes about ``conversation`` (serialized)."""
    per_type = ", ".join(PROBE_TYPES)
    return (
        f"<conversation>\n{conversation}\n</conversation>\n\n"
        f"Write {count} questions about this conversation, spread over these types: {per_type}.\n"
        "- recall: a specific fact stated in it (a name, a number, an error message, a value);\n"
        "- artifact: which files were read, created or modified, and what changed in them;\n"
        "- continuation: where the work stands and what the next step is;\n"
        "- decision: what was decided or rejected, and why.\n"
        "Each question must have one clear answer found in the conversation.\n"
        'Answer with a JSON array only: [{"type": "recall", "question": "...", "answer": "..."}]'
    )


def parse_probes(text: str, count: int) -> list[Probe]:
    """The probes in the model's answer (at most ``count``); EvalError when there are none."""
    document = _json_in(text, "[")
    if not isinstance(document, list):
        raise EvalError(f"the probe questions are not a JSON array: {_excerpt(text)}")
    probes = []
    for item in document:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        question, answer = _stripped(item.get("question")), _stripped(item.get("answer"))
        if kind in PROBE_TYPES and question and answer:
            probes.append(Probe(kind, question, answer))
    if not probes:
        raise EvalError(f"the model wrote no usable probe question: {_excerpt(text)}")
    return probes[:count]


def grading_request(transcript: str, probe: Probe, answer: str) -> str:
    """The user message asking to grade ``answer`` to ``probe`` against the full ``transcript``."""
    return (
        f"<transcript>\n{transcript}\n</transcript>\n\n"
        f'<question type="{probe.type}">\n{probe.question}\n</question>\n\n'
        f"<reference-answer>\n{probe.reference_answer}\n</reference-answer>\n\n"
        f"<answer>\n{answer}\n</answer>\n\n"
        f"Grade the answer from 0 to {MAX_SCORE} against the transcript: {MAX_SCORE} complete "
        "and correct, 3 right but missing details, 1 mostly wrong or vague, 0 wrong, missing or "
        '"I do not know". Answer with JSON only: {"score": 4, "reason": "..."}'
    )


def parse_grade(text: str) -> Grade:
    """The grade in the grader's answer; EvalError when it has no score from 0 to MAX_SCORE."""
    document = _json_in(text, "{")
    score = document.get("score") if isinstance(document, Mapping) else None
    if isinstance(score, float) and score.is_integer():
        score = int(score)
    if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score <= MAX_SCORE:
        raise EvalError(f"the grade has no score from 0 to {MAX_SCORE}: {_excerpt(text)}")
    reason = document.get("reason") if isinstance(document, Mapping) else None
    return Grade(score, reason.strip() if isinstance(reason, str) else "")


@attrs.frozen
class TypeScore:
    type: str
    probes: int
    score: float
    """The mean grade as a share of the best one, 0 to 100."""


def scores(graded: Sequence[GradedProbe]) -> tuple[list[TypeScore], float]:
    """The score of each probe type that was asked, and overall (each 0 to 100)."""
    by_type = [
        TypeScore(kind, len(items), _percent(items))
        for kind in PROBE_TYPES
        if (items := [item for item in graded if item.probe.type == kind])
    ]
    return by_type, _percent(graded)


def _percent(graded: Iterable[GradedProbe]) -> float:
    grades = [item.grade.score for item in graded]
    return 100.0 * sum(grades) / (MAX_SCORE * len(grades)) if grades else 0.0


def _json_in(text: str, opening: str) -> Any:
    """The first JSON value starting with ``opening`` in ``text`` (models wrap JSON in fences and
    prose)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(re.escape(opening), text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        return value
    return None


def _stripped(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat[:120] + ("…" if len(flat) > 120 else ""))
