"""Session fixtures for the pi 0.84.2 conformance tests (see harness.py for the machinery).

They fail, never skip, when Node or the reference cannot be installed: CI installs Node and
npm, and a conformance suite that silently skips is worse than none.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .harness import (
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
