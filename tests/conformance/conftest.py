"""Session fixtures for the conformance tests against pi 0.84.2 and pi 1.6 (see harness.py).

They fail, never skip, when Node or the reference cannot be installed: CI installs Node and
npm, and a conformance suite that silently skips is worse than none.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .harness import (
    GENERATOR16_SCRIPT,
    PI16_DIR,
    Corpus,
    OurCli,
    ReferenceAnswers,
    ask_reference,
    generate_corpus,
    install_reference,
)


@pytest.fixture(scope="session")
def reference_node() -> Path:
    """Path of the Node 22 that runs pi; installs the reference first if needed."""
    return install_reference()


@pytest.fixture(scope="session")
def corpus(reference_node: Path, tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """The generated session corpus and its manifest."""
    return generate_corpus(reference_node, tmp_path_factory.mktemp("pi-corpus"))


@pytest.fixture(scope="session")
def reference_answers(reference_node: Path, corpus: Corpus) -> ReferenceAnswers:
    """pi's answer to every query of the corpus."""
    return ask_reference(reference_node, corpus)


@pytest.fixture(scope="session")
def our_cli(corpus: Corpus) -> OurCli:
    """pi-lsp's answers (in-process by default,
    PI_LSP_CONFORMANCE_MODE=subprocess for real processes)."""
    mode = os.environ.get("PI_LSP_CONFORMANCE_MODE", "in-process")
    if mode not in ("in-process", "subprocess"):
        pytest.fail(f"PI_LSP_CONFORMANCE_MODE must be 'in-process' or 'subprocess', not {mode!r}")
    return OurCli(corpus, in_process=(mode == "in-process"))


@pytest.fixture(scope="session")
def pi16_corpus(reference_node: Path, tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """Session files written by pi 1.6's own SessionManager, with every entry kind pi 1.x added."""
    return generate_corpus(
        reference_node, tmp_path_factory.mktemp("pi16-corpus"), GENERATOR16_SCRIPT
    )


@pytest.fixture(scope="session")
def pi16_answers(reference_node: Path, pi16_corpus: Corpus) -> ReferenceAnswers:
    """pi 1.6's answer to every query of its corpus."""
    return ask_reference(reference_node, pi16_corpus, PI16_DIR)


@pytest.fixture(scope="session")
def pi16_cli(pi16_corpus: Corpus) -> OurCli:
    """pi-lsp's answers on the pi 1.6 corpus (in-process)."""
    return OurCli(pi16_corpus, in_process=True)
