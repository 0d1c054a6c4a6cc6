"""pi-lsp against pi 1.6.0 itself, on session files pi 1.6's own SessionManager wrote.

pi 1.x adds entry kinds to the v3 format (context edits, usage records, system-role messages,
compaction snapshots, compactions that keep nothing). For every entry of every file of the
corpus (tests/reference/generate_sessions_16.mjs), ``pi-lsp session context --leaf ID`` must
print exactly what pi 1.6's ``buildSessionContext`` builds there, and ``pi-lsp session tree``
must show pi 1.6's leaf, entries, labels and tree order.

Planning keeps pi 0.84.2's cut-point rules (with the documented trailing-tool-results fix), so
pi-lsp and pi 1.6 may cut a branch at different entries. Where they cut at the same entry, they
must summarize the same messages and report the same files: that is where a context edit shows,
since pi 1.6 neither counts nor summarizes what an edit removed. The serialized text and
``tokensBefore`` are not compared (pi 1.2 stopped serializing thinking, and pi 1.6 estimates
``tokensBefore`` on its own projection); nor is a branch summary's ``totalTokens`` (pi 1.6 counts
system messages, which pi-lsp never sends to the model).
"""

from __future__ import annotations

from typing import Any

from .harness import Corpus, OurCli, Outcome, Query, ReferenceAnswers
from .test_against_pi import compare_command, describe_mismatch, report

REQUIRED_KINDS = {"context_edit", "usage", "compaction", "branch_summary", "label"}
SECRET = "sk-live-4f3a9b2c"  # the key the context-edits scenario pastes and then leaves out
PLAN_FIELDS_COMPARED = (
    "firstKeptEntryId",
    "isSplitTurn",
    "previousSummary",
    "messagesToSummarize",
    "turnPrefixMessages",
    "readFiles",
    "modifiedFiles",
)


def test_pi16_answers_every_query(pi16_answers: ReferenceAnswers) -> None:
    failed = [f"{q.describe()}: {o.error}" for q, o in pi16_answers.answers.items() if not o.ok]
    assert not failed, "pi_reference.mjs (pi 1.6) could not answer:\n" + "\n".join(failed)


def test_pi16_corpus_holds_every_new_kind(pi16_corpus: Corpus, pi16_answers: ReferenceAnswers):
    kinds = set()
    for session in pi16_corpus.sessions:
        tree = pi16_answers[Query("tree", session["file"])].value
        kinds |= {entry["type"] for entry in tree["entries"]}
    assert kinds >= REQUIRED_KINDS
    lines = "".join(path.read_text() for path in pi16_corpus.directory.glob("*.jsonl"))
    assert '"role":"system"' in lines and '"systemMessage":' in lines
    assert '"replacement":null' in lines and '"replacement":{"content":' in lines
    retain_none = [
        line
        for line in lines.splitlines()
        if '"type":"compaction"' in line
        and line.split('"id":"')[1][:8] == line.split('"firstKeptEntryId":"')[1][:8]
    ]
    assert retain_none, "no compaction that keeps nothing"
    probes = sum(len(session["leaves"]) for session in pi16_corpus.sessions)
    entries = sum(
        len(pi16_answers[Query("tree", s["file"])].value["entries"]) for s in pi16_corpus.sessions
    )
    assert probes == entries + len(pi16_corpus.sessions), "not every entry is probed"


def test_context_matches_pi16_at_every_entry(
    pi16_corpus: Corpus, pi16_answers: ReferenceAnswers, pi16_cli: OurCli
) -> None:
    compare_command("context", pi16_corpus, pi16_answers, pi16_cli, against="pi 1.6.0")


def test_tree_matches_pi16(
    pi16_corpus: Corpus, pi16_answers: ReferenceAnswers, pi16_cli: OurCli
) -> None:
    compare_command("tree", pi16_corpus, pi16_answers, pi16_cli, against="pi 1.6.0")


def _only(value: Any, fields: tuple[str, ...]) -> Any:
    return {field: value.get(field) for field in fields} if isinstance(value, dict) else value


def test_compaction_plans_summarize_what_pi16_summarizes_where_both_cut_alike(
    pi16_corpus: Corpus, pi16_answers: ReferenceAnswers, pi16_cli: OurCli
) -> None:
    queries = [q for q in pi16_corpus.queries() if q.command == "plan-compaction"]
    compared, mismatches = 0, []
    for query in queries:
        ours, pis = pi16_cli(query), pi16_answers[query]
        assert ours.ok, f"{query.describe()}: pi-lsp failed: {ours.error}"
        same_cut = (ours.value is None) == (pis.value is None) and (
            ours.value is None or ours.value["firstKeptEntryId"] == pis.value["firstKeptEntryId"]
        )
        if not same_cut:
            continue
        compared += 1
        problem = describe_mismatch(
            query,
            Outcome(True, _only(ours.value, PLAN_FIELDS_COMPARED)),
            Outcome(True, _only(pis.value, PLAN_FIELDS_COMPARED)),
        )
        if problem:
            mismatches.append(problem)
    assert compared >= 0.9 * len(queries), f"only {compared} of {len(queries)} plans cut alike"
    report(mismatches, compared, "plan-compaction (same cut)", "pi 1.6.0")


def test_branch_summary_plans_match_pi16(
    pi16_corpus: Corpus, pi16_answers: ReferenceAnswers, pi16_cli: OurCli
) -> None:
    fields = ("commonAncestorId", "entryIds", "messages", "readFiles", "modifiedFiles")
    queries = [q for q in pi16_corpus.queries() if q.command == "plan-branch-summary"]
    assert queries
    mismatches = []
    for query in queries:
        ours, pis = pi16_cli(query), pi16_answers[query]
        problem = describe_mismatch(
            query,
            Outcome(ours.ok, _only(ours.value, fields), ours.error),
            Outcome(pis.ok, _only(pis.value, fields), pis.error),
        )
        if problem:
            mismatches.append(problem)
    report(mismatches, len(queries), "plan-branch-summary", "pi 1.6.0")


def test_a_secret_left_out_of_the_context_is_never_summarized(
    pi16_corpus: Corpus, pi16_cli: OurCli
) -> None:
    """On the branch where the user left the pasted key out, no plan summarizes it; on the
    branch from before that edit, the key is still part of the conversation and is summarized."""
    file = "pi16-context-edits.jsonl"
    plans = {
        query: pi16_cli(query).value
        for query in pi16_corpus.queries()
        if query.command == "plan-compaction" and query.file == file
    }
    contexts = {
        query.options: pi16_cli(query).value
        for query in pi16_corpus.queries()
        if query.command == "context" and query.file == file
    }
    summarized_with_edit, summarized_without = 0, 0
    for query, plan in plans.items():
        if plan is None:
            continue
        leaf_options = query.options[:2] if query.options[:1] == ("--leaf",) else ()
        secret_in_context = SECRET in str(contexts[leaf_options]["messages"])
        summarized = SECRET in plan["serialized"] or SECRET in str(plan["turnPrefixMessages"])
        if secret_in_context:
            summarized_without += summarized
        else:
            summarized_with_edit += summarized
    assert summarized_with_edit == 0
    assert summarized_without > 0, "the corpus has no plan that would summarize the key"
