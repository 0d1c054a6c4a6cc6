"""pi-lsp against pi 0.84.2 itself, on a generated corpus of real pi session files.

For every session file of the corpus (tests/reference/generate_sessions.mjs) and every leaf,
(from, to) pair and keepRecentTokens/token budget its manifest lists, our
``pi-lsp session …`` CLI must print the same JSON as ``tests/reference/pi_reference.mjs``,
which runs pi's own functions:

- ``context``             — buildSessionContext at the leaf
- ``plan-compaction``     — prepareCompaction on the leaf's branch (+ file lists, serialization)
- ``plan-branch-summary`` — collectEntriesForBranchSummary + prepareBranchEntries
- ``tree``                — leaf, name, entries (id/parentId/type), labels (+ roots/children
                            when our CLI prints them)

One deliberate difference: where pi 0.84.2 crosses the keepRecentTokens budget inside trailing
tool results it plans to keep everything (a known bug, fixed later upstream); pi-lsp keeps the
last assistant tool call with its results instead. Those queries (``bugQueries`` in the
manifest) are checked for that documented difference rather than for equality.

Each test compares the whole corpus for one command and reports every mismatching query with
the first differing JSON path, so one run shows the full picture.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from .harness import (
    GENERATOR_SCRIPT,
    REFERENCE_SCRIPT,
    Corpus,
    OurCli,
    Outcome,
    Query,
    ReferenceAnswers,
    corpus_seed_args,
    run_node_script,
)

MAX_REPORTED_MISMATCHES = 25
MAX_SHOWN_CHARS = 240

# ---------------------------------------------------------------------------------------------
# Comparing JSON values
# ---------------------------------------------------------------------------------------------


def _same_scalar(a: Any, b: Any) -> bool:
    # JSON has one number type: 1 and 1.0 are the same number, but true is not 1.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def first_difference(ours: Any, pis: Any, path: str = "$") -> tuple[str, Any, Any] | None:
    """The first JSON path where two parsed documents differ, with both values there."""
    if isinstance(ours, dict) and isinstance(pis, dict):
        for key in [*pis, *(k for k in ours if k not in pis)]:
            if key not in ours:
                return (f"{path}.{key}", "<missing>", pis[key])
            if key not in pis:
                return (f"{path}.{key}", ours[key], "<missing>")
            found = first_difference(ours[key], pis[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(ours, list) and isinstance(pis, list):
        for index, (a, b) in enumerate(zip(ours, pis, strict=False)):
            found = first_difference(a, b, f"{path}[{index}]")
            if found:
                return found
        if len(ours) != len(pis):
            return (f"{path} (length)", len(ours), len(pis))
        return None
    if isinstance(ours, (dict, list)) or isinstance(pis, (dict, list)):
        return (path, ours, pis)
    return None if _same_scalar(ours, pis) else (path, ours, pis)


def shorten(value: Any) -> str:
    text = (
        value
        if isinstance(value, str) and value == "<missing>"
        else json.dumps(value, ensure_ascii=False)
    )
    return (
        text if len(text) <= MAX_SHOWN_CHARS else f"{text[:MAX_SHOWN_CHARS]}… ({len(text)} chars)"
    )


def describe_mismatch(query: Query, ours: Outcome, pis: Outcome) -> str | None:
    """None when both sides agree, else a one-paragraph explanation."""
    if not pis.ok and not ours.ok:
        return None  # both refuse the input
    if not pis.ok:
        return (
            f"{query.describe()}\n    pi failed ({pis.error}) "
            f"but pi-lsp answered {shorten(ours.value)}"
        )
    if not ours.ok:
        return f"{query.describe()}\n    pi-lsp failed: {ours.error}"
    found = first_difference(ours.value, pis.value)
    if found is None:
        return None
    path, a, b = found
    return (
        f"{query.describe()}\n    at {path}\n      pi-lsp: {shorten(a)}\n      pi:     {shorten(b)}"
    )


def report(mismatches: list[str], total: int, what: str, against: str = "pi 0.84.2") -> None:
    if not mismatches:
        return
    shown = "\n".join(mismatches[:MAX_REPORTED_MISMATCHES])
    more = len(mismatches) - MAX_REPORTED_MISMATCHES
    tail = f"\n… and {more} more" if more > 0 else ""
    pytest.fail(
        f"{len(mismatches)} of {total} {what} queries differ from {against}:\n{shown}{tail}",
        pytrace=False,
    )


# ---------------------------------------------------------------------------------------------
# Ids that differ per load (v1 sessions get fresh random ids each time they are migrated)
# ---------------------------------------------------------------------------------------------

ID_KEYS = {"id", "parentId", "firstKeptEntryId", "fromId", "targetId", "leafId", "commonAncestorId"}
ID_LIST_KEYS = {"entryIds", "roots"}
ID_MAP_KEYS = {"labels", "children"}


def positional_id_map(tree: Any) -> dict[str, str]:
    """Entry id -> '#<index in file order>', from a tree answer."""
    return {entry["id"]: f"#{index}" for index, entry in enumerate(tree["entries"])}


def replace_ids(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, list):
        return [replace_ids(item, ids) for item in value]
    if isinstance(value, dict):
        return {ids.get(key, key): replace_ids(item, ids) for key, item in value.items()}
    return value


def mask_ids(value: Any) -> Any:
    """Replace every entry id (found by key name) with '<id>'."""
    if isinstance(value, list):
        return [mask_ids(item) for item in value]
    if not isinstance(value, dict):
        return value
    masked = {}
    for key, item in value.items():
        if key in ID_KEYS and isinstance(item, str) and item != "root":
            masked[key] = "<id>"
        elif key in ID_LIST_KEYS and isinstance(item, list):
            masked[key] = ["<id>" for _ in item]
        elif key in ID_MAP_KEYS and isinstance(item, dict):
            masked[key] = sorted(
                mask_ids(v) if not isinstance(v, list) else ["<id>" for _ in v]
                for v in item.values()
            )
        else:
            masked[key] = mask_ids(item)
    return masked


def comparable(
    query: Query, ours: Outcome, pis: Outcome, corpus: Corpus
) -> tuple[Outcome, Outcome]:
    """For files whose ids are assigned on load, take ids out of the comparison.

    A tree answer is one load, so its ids are renamed by position (entry order and structure
    are still compared). Other answers come from separate loads on our side, so their ids
    cannot be matched and are masked; the messages around them pin the entries down.
    """
    if not corpus.session(query.file).get("idsAssignedOnLoad"):
        return ours, pis

    def rename(outcome: Outcome) -> Outcome:
        if not outcome.ok:
            return outcome
        if (
            query.command == "tree"
            and isinstance(outcome.value, dict)
            and "entries" in outcome.value
        ):
            return Outcome(True, replace_ids(outcome.value, positional_id_map(outcome.value)))
        return Outcome(True, mask_ids(outcome.value))

    return rename(ours), rename(pis)


def normalize_tree(answer: Any, keep_structure: bool) -> Any:
    """The parts of a tree answer that are compared (roots/children only if our CLI prints them)."""
    if not isinstance(answer, dict) or "entries" not in answer:
        return answer
    entry_ids = {entry.get("id") for entry in answer["entries"]}
    normalized = {
        "leafId": answer.get("leafId"),
        "name": answer.get("name"),
        "entries": [
            {"id": e.get("id"), "parentId": e.get("parentId"), "type": e.get("type")}
            for e in answer["entries"]
        ],
        # Labels of entries in the file (a label entry may target an id that does not exist).
        "labels": {k: v for k, v in (answer.get("labels") or {}).items() if k in entry_ids},
    }
    if keep_structure:
        normalized["roots"] = answer.get("roots")
        normalized["children"] = {k: v for k, v in (answer.get("children") or {}).items() if v}
    return normalized


# ---------------------------------------------------------------------------------------------
# The reference harness itself
# ---------------------------------------------------------------------------------------------


def test_reference_answers_every_query(reference_answers: ReferenceAnswers) -> None:
    failed = [
        f"{q.describe()}: {o.error}" for q, o in reference_answers.answers.items() if not o.ok
    ]
    assert not failed, "pi_reference.mjs could not answer:\n" + "\n".join(failed)


def test_reference_never_modifies_session_files(reference_answers: ReferenceAnswers) -> None:
    assert reference_answers.digests_after == reference_answers.digests_before


def test_corpus_exercises_what_it_claims(
    corpus: Corpus, reference_answers: ReferenceAnswers
) -> None:
    plans = [
        o.value
        for q, o in reference_answers.answers.items()
        if q.command == "plan-compaction" and o.ok and o.value is not None
    ]
    assert any(plan["isSplitTurn"] for plan in plans), "no split-turn compaction plan in the corpus"
    assert any(not plan["isSplitTurn"] for plan in plans)
    assert any(plan["previousSummary"] is not None for plan in plans), "no repeated compaction"
    default_keep_plans = [
        o.value
        for q, o in reference_answers.answers.items()
        if q.command == "plan-compaction"
        and "--keep-recent-tokens" not in q.options
        and o.ok
        and o.value
    ]
    assert default_keep_plans, "no non-null plan with the default keepRecentTokens"
    bug_files = [s["file"] for s in corpus.sessions if s["trailingToolResultsBug"]]
    assert bug_files, "no session marked trailingToolResultsBug"
    long_sessions = [
        s
        for s in corpus.sessions
        if len(reference_answers[Query("tree", s["file"])].value["entries"]) >= 300
    ]
    assert long_sessions, "no session with hundreds of entries"


def test_generator_is_reproducible(reference_node, corpus: Corpus, tmp_path) -> None:
    run_node_script(reference_node, GENERATOR_SCRIPT, [str(tmp_path), *corpus_seed_args()])
    again = Corpus(tmp_path, json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8")))
    assert again.file_digests() == corpus.file_digests()
    assert again.manifest == corpus.manifest


@pytest.mark.parametrize(
    "args",
    [
        ["context"],
        ["context", "does-not-exist.jsonl"],
        ["frobnicate", "x.jsonl"],
        ["plan-compaction", "{file}", "--keep-recent-tokens", "-1"],
        ["context", "{file}", "--leaf", "no-such-id"],
        ["plan-branch-summary", "{file}", "--from", "no-such-id", "--to", "no-such-id"],
        ["tree", "{manifest}"],
    ],
)
def test_reference_rejects_bad_input_with_one_line(
    reference_node, corpus: Corpus, args: list[str]
) -> None:
    file = str(corpus.directory / corpus.sessions[0]["file"])
    argv = [a.format(file=file, manifest=corpus.directory / "manifest.json") for a in args]
    result = subprocess.run(
        [str(reference_node), str(REFERENCE_SCRIPT), *argv],
        check=False,
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stdout == b""
    assert len(result.stderr.decode().strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# pi-lsp against pi, whole corpus per command
# ---------------------------------------------------------------------------------------------


def compare_command(
    command: str,
    corpus: Corpus,
    reference: ReferenceAnswers,
    our_cli: OurCli,
    skip: set[Query] = frozenset(),
    against: str = "pi 0.84.2",
) -> None:
    queries = [q for q in corpus.queries() if q.command == command and q not in skip]
    mismatches = []
    for query in queries:
        ours, pis = comparable(query, our_cli(query), reference[query], corpus)
        if command == "tree":
            keep_structure = ours.ok and isinstance(ours.value, dict) and "children" in ours.value
            ours = Outcome(ours.ok, normalize_tree(ours.value, keep_structure), ours.error)
            pis = Outcome(pis.ok, normalize_tree(pis.value, keep_structure), pis.error)
        problem = describe_mismatch(query, ours, pis)
        if problem:
            mismatches.append(problem)
    report(mismatches, len(queries), command, against)


def test_context_matches_pi(
    corpus: Corpus, reference_answers: ReferenceAnswers, our_cli: OurCli
) -> None:
    compare_command("context", corpus, reference_answers, our_cli)


def test_plan_compaction_matches_pi(
    corpus: Corpus, reference_answers: ReferenceAnswers, our_cli: OurCli
) -> None:
    compare_command(
        "plan-compaction", corpus, reference_answers, our_cli, skip=set(corpus.bug_queries())
    )


def test_plan_branch_summary_matches_pi(
    corpus: Corpus, reference_answers: ReferenceAnswers, our_cli: OurCli
) -> None:
    compare_command("plan-branch-summary", corpus, reference_answers, our_cli)


def test_tree_matches_pi(
    corpus: Corpus, reference_answers: ReferenceAnswers, our_cli: OurCli
) -> None:
    compare_command("tree", corpus, reference_answers, our_cli)


def test_trailing_tool_results_bug_is_fixed(
    corpus: Corpus, reference_answers: ReferenceAnswers, our_cli: OurCli
) -> None:
    """pi 0.84.2 keeps everything; pi-lsp keeps the last assistant tool call and its results."""
    bug_queries = corpus.bug_queries()
    assert bug_queries, (
        "the corpus has no query that crosses the budget inside trailing tool results"
    )
    problems = []
    for query, bug in bug_queries.items():
        pis, ours = reference_answers[query], our_cli(query)
        assert pis.ok, f"{query.describe()}: pi failed: {pis.error}"
        pi_keeps_everything = pis.value is None or (
            not pis.value["messagesToSummarize"] and not pis.value["turnPrefixMessages"]
        )
        assert pi_keeps_everything, (
            f"{query.describe()}: pi 0.84.2 no longer shows the documented bug"
        )
        if not ours.ok:
            problems.append(f"{query.describe()}\n    pi-lsp failed: {ours.error}")
        elif ours.value is None:
            problems.append(f"{query.describe()}\n    pi-lsp planned nothing (pi's bug)")
        elif ours.value.get("firstKeptEntryId") != bug["expectedFirstKeptEntryId"]:
            problems.append(
                f"{query.describe()}\n    pi-lsp keeps from "
                f"{ours.value.get('firstKeptEntryId')!r}, expected the last "
                f"assistant tool call {bug['expectedFirstKeptEntryId']!r}"
            )
        elif not (ours.value.get("messagesToSummarize") or ours.value.get("turnPrefixMessages")):
            problems.append(f"{query.describe()}\n    pi-lsp plan summarizes nothing")
    report(problems, len(bug_queries), "trailing-tool-results")


# ---------------------------------------------------------------------------------------------
# The real console entry point, one query per command through `python -m pi_lsp`
# ---------------------------------------------------------------------------------------------


def representative_query(corpus: Corpus, command: str) -> Query:
    """A query on a session with branches and summaries, where the answer is non-trivial."""
    candidates = [
        q for q in corpus.queries() if q.command == command and q.file == "branching.jsonl"
    ]
    with_options = [q for q in candidates if q.options]
    return (with_options or candidates)[len(with_options or candidates) // 2]


@pytest.mark.parametrize("command", ["context", "plan-compaction", "plan-branch-summary", "tree"])
def test_cli_subprocess_matches_pi(
    command: str, corpus: Corpus, reference_answers: ReferenceAnswers, our_cli: OurCli
) -> None:
    query = representative_query(corpus, command)
    ours, pis = our_cli.subprocess(query), reference_answers[query]
    if command == "tree":
        keep_structure = ours.ok and isinstance(ours.value, dict) and "children" in ours.value
        ours = Outcome(ours.ok, normalize_tree(ours.value, keep_structure), ours.error)
        pis = Outcome(pis.ok, normalize_tree(pis.value, keep_structure), pis.error)
    problem = describe_mismatch(query, ours, pis)
    assert problem is None, problem
