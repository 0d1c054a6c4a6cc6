"""pi-lsp against pi 1.6.0 itself, on session files pi 1.6's own SessionManager wrote.

pi 1.x adds entry kinds to the v3 format (context edits, usage records, system-role messages,
compaction snapshots, compactions that keep nothing). For every entry of every file of the
corpus (tests/reference/generate_sessions_16.mjs), ``pi-lsp session context --leaf ID`` must
print exactly what pi 1.6's ``buildSessionContext`` builds there, and ``pi-lsp session tree``
must show pi 1.6's leaf, entries, labels and tree order.
"""

from __future__ import annotations

from .harness import Corpus, OurCli, Query, ReferenceAnswers
from .test_against_pi import compare_command

REQUIRED_KINDS = {"context_edit", "usage", "compaction", "branch_summary", "label"}


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
