"""Support code for the conformance tests against pi 0.84.2 and pi 1.6: queries, corpora, both CLIs.

The reference side is pi itself: ``tests/reference/install.sh`` installs the pinned npm
packages (pi 0.84.2, pi 1.6.0 under the alias ``pi16``, and the Node 22 that runs them) into
``tests/reference/node_modules``; ``generate_sessions.mjs`` (0.84.2) and
``generate_sessions_16.mjs`` (1.6) write corpora of session files with pi's real
SessionManager; ``pi_reference.mjs batch`` answers every query of a corpus with pi's own
functions in one Node process (Node start-up and pi's imports cost ~0.7 s per process).

Our side is the ``pi-lsp session …`` CLI. By default it is called in-process through
``pi_lsp.cli.main`` (same argument parsing and output code as the console script, without
a Python start-up per query); ``PI_LSP_CONFORMANCE_MODE=subprocess`` runs every query as
``python -m pi_lsp …``. test_against_pi.py always runs one query per command through a real
subprocess.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
import io
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
REFERENCE_DIR = REPO_ROOT / "tests" / "reference"
REFERENCE_NODE = REFERENCE_DIR / "node_modules" / ".bin" / "node"
INSTALL_SCRIPT = REFERENCE_DIR / "install.sh"
REFERENCE_SCRIPT = REFERENCE_DIR / "pi_reference.mjs"
GENERATOR_SCRIPT = REFERENCE_DIR / "generate_sessions.mjs"
GENERATOR16_SCRIPT = REFERENCE_DIR / "generate_sessions_16.mjs"
PI16_DIR = REFERENCE_DIR / "node_modules" / "pi16"
"""pi 1.6.0, installed next to 0.84.2 as the npm alias ``pi16``."""

INSTALL_TIMEOUT_S = 600
NODE_TIMEOUT_S = 300
OUR_CLI_TIMEOUT_S = 120

# Commands whose plans depend on token estimates: our CLI is told to use pi's chars/4 estimate.
TOKENIZED_COMMANDS = {"plan-compaction", "plan-branch-summary"}


# ---------------------------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """One question about one session file, in pi_reference.mjs's argument form."""

    command: str  # context | plan-compaction | plan-branch-summary | tree
    file: str  # file name inside the corpus directory
    options: tuple[str, ...] = ()

    def reference_argv(self, corpus_dir: Path) -> list[str]:
        return [self.command, str(corpus_dir / self.file), *self.options]

    def our_argv(self, corpus_dir: Path) -> list[str]:
        """Arguments for ``pi-lsp`` (after the program name)."""
        argv = ["session", self.command, str(corpus_dir / self.file), *self.options]
        if self.command in TOKENIZED_COMMANDS:
            argv += ["--tokenizer", "chars4"]
        if self.command == "tree":
            argv.append("--json")
        return argv

    def describe(self) -> str:
        return " ".join([self.command, self.file, *self.options])


def leaf_options(leaf: str | None) -> tuple[str, ...]:
    return () if leaf is None else ("--leaf", leaf)


def keep_options(keep: int | None) -> tuple[str, ...]:
    return () if keep is None else ("--keep-recent-tokens", str(keep))


def budget_options(budget: int | None) -> tuple[str, ...]:
    return () if budget is None else ("--token-budget", str(budget))


def queries_for_session(session: dict[str, Any]) -> list[Query]:
    """Every query the manifest asks for one session file."""
    file = session["file"]
    queries = [Query("tree", file)]
    for leaf in session["leaves"]:
        queries.append(Query("context", file, leaf_options(leaf)))
        for keep in session["keepRecentTokens"]:
            queries.append(Query("plan-compaction", file, leaf_options(leaf) + keep_options(keep)))
    for from_id, to_id in session["branchPairs"]:
        for budget in session["branchTokenBudgets"]:
            queries.append(
                Query(
                    "plan-branch-summary",
                    file,
                    ("--from", from_id, "--to", to_id, *budget_options(budget)),
                )
            )
    return queries


def bug_query_key(file: str, leaf: str | None, keep: int | None) -> Query:
    return Query("plan-compaction", file, leaf_options(leaf) + keep_options(keep))


# ---------------------------------------------------------------------------------------------
# Running the reference (pi 0.84.2 under Node 22)
# ---------------------------------------------------------------------------------------------


def _run(
    argv: list[str], *, timeout: float, what: str, **kwargs: Any
) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, check=False, capture_output=True, timeout=timeout, **kwargs)
    except FileNotFoundError as error:
        pytest.fail(f"{what}: cannot run {argv[0]}: {error}")
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what}: timed out after {timeout} s: {' '.join(argv)}")


def run_node_script(
    node: Path,
    script: Path,
    args: list[str],
    *,
    stdin: bytes | None = None,
    pi_dir: Path | None = None,
    variables: dict[str, str] | None = None,
) -> bytes:
    """Run a reference script; ``pi_dir`` picks the pi package it loads (default: 0.84.2),
    ``variables`` are added to its environment."""
    environment = None
    if pi_dir is not None or variables:
        environment = {**os.environ, **(variables or {})}
        if pi_dir is not None:
            environment["PI_REFERENCE_PI_DIR"] = f"{pi_dir}{os.sep}"
    result = _run(
        [str(node), str(script), *args],
        timeout=NODE_TIMEOUT_S,
        what=script.name,
        input=stdin,
        env=environment,
    )
    if result.returncode != 0:
        pytest.fail(
            f"{script.name} {' '.join(args)} exited with {result.returncode}:\n"
            f"{result.stderr.decode(errors='replace')}"
        )
    return result.stdout


@dataclass
class Corpus:
    directory: Path
    manifest: dict[str, Any]

    @property
    def sessions(self) -> list[dict[str, Any]]:
        return self.manifest["sessions"]

    def session(self, file: str) -> dict[str, Any]:
        for session in self.sessions:
            if session["file"] == file:
                return session
        raise KeyError(file)

    def queries(self) -> list[Query]:
        return [query for session in self.sessions for query in queries_for_session(session)]

    def bug_queries(self) -> dict[Query, dict[str, Any]]:
        """plan-compaction queries that hit pi 0.84.2's trailing-tool-results bug."""
        found = {}
        for session in self.sessions:
            for bug in session.get("bugQueries", []):
                found[bug_query_key(session["file"], bug["leaf"], bug["keepRecentTokens"])] = bug
        return found

    def file_digests(self) -> dict[str, str]:
        return {
            path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(self.directory.glob("*.jsonl"))
        }


@dataclass
class Outcome:
    """Result of one query on one side: a parsed JSON value, or an error message."""

    ok: bool
    value: Any = None
    error: str = ""


@dataclass
class ReferenceAnswers:
    corpus: Corpus
    digests_before: dict[str, str]
    digests_after: dict[str, str]
    answers: dict[Query, Outcome] = field(default_factory=dict)

    def __getitem__(self, query: Query) -> Outcome:
        return self.answers[query]


# ---------------------------------------------------------------------------------------------
# Running our CLI
# ---------------------------------------------------------------------------------------------


def session_written_in(
    tmp_path_factory: pytest.TempPathFactory, name: str, write: Callable[[Path], Awaitable[Path]]
) -> Path:
    """The session file ``write(workspace)`` writes, in a new empty ``project`` directory."""
    workspace = tmp_path_factory.mktemp(name) / "project"
    workspace.mkdir()
    return asyncio.run(write(workspace))


async def prompted_session(agent: Any, *prompts: str) -> Path:
    """The session file an ``AgentHarness`` wrote answering ``prompts`` (every scripted reply
    used); the agent is closed in any case."""
    try:
        for prompt in prompts:
            await agent.prompt(prompt)
        assert agent.model.pending == 0
        return agent.runtime.session.path
    finally:
        agent.close()


def ask_pi(node: Path, queries: list[list[str]], pi_dir: Path | None = None) -> list[dict]:
    """pi's answers to many reference-script queries, from one Node process."""
    output = run_node_script(
        node, REFERENCE_SCRIPT, ["batch", "-"], stdin=json.dumps(queries).encode(), pi_dir=pi_dir
    )
    return json.loads(output)


def disagreements(
    node: Path, directory: Path, queries: list[Query]
) -> tuple[list[str], list[dict]]:
    """The queries on which pi and pi-lsp answer differently (described), and pi's answers."""
    answers = ask_pi(node, [query.reference_argv(directory) for query in queries])
    mismatches = []
    for query, answer in zip(queries, answers, strict=True):
        ours = run_our_cli_in_process(query.our_argv(directory))
        if not (answer["ok"] and ours.ok and answer["result"] == ours.value):
            mismatches.append(query.describe())
    return mismatches, answers


def run_our_cli_subprocess(argv: list[str]) -> Outcome:
    """`python -m pi_lsp ARGV` in a fresh interpreter, from the repository root."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.setdefault("PYTHONIOENCODING", "utf-8")
    try:
        result = subprocess.run(
            [sys.executable, "-m", "pi_lsp", *argv],
            check=False,
            capture_output=True,
            cwd=REPO_ROOT,
            env=env,
            timeout=OUR_CLI_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return Outcome(False, error=f"timed out after {OUR_CLI_TIMEOUT_S} s")
    if result.returncode != 0:
        return Outcome(False, error=_last_line(result.stderr) or f"exit status {result.returncode}")
    return _parse_stdout(result.stdout)


def run_our_cli_in_process(argv: list[str]) -> Outcome:
    """Call ``pi_lsp.cli.main`` with ARGV, capturing stdout/stderr like a subprocess would."""
    from pi_lsp import cli  # imported lazily: a missing CLI must fail tests, not collection

    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace", newline="")
    takes_argv = bool(inspect.signature(cli.main).parameters)
    saved_argv = sys.argv
    status: Any = 0
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                if takes_argv:
                    status = cli.main(argv)
                else:
                    sys.argv = ["pi-lsp", *argv]
                    status = cli.main()
            except SystemExit as exit_:
                status = exit_.code
    except Exception as error:  # noqa: BLE001 - a crash is a failed query, reported with the rest
        return Outcome(False, error=f"{type(error).__name__}: {error}")
    finally:
        sys.argv = saved_argv
    stdout.flush()
    stderr.flush()
    out_bytes = stdout.buffer.getvalue()  # type: ignore[attr-defined]
    err_bytes = stderr.buffer.getvalue()  # type: ignore[attr-defined]
    if status not in (0, None):
        return Outcome(False, error=_last_line(err_bytes) or f"exit status {status}")
    return _parse_stdout(out_bytes)


def _last_line(data: bytes) -> str:
    lines = [line for line in data.decode("utf-8", errors="replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _parse_stdout(data: bytes) -> Outcome:
    try:
        return Outcome(True, json.loads(data.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return Outcome(False, error=f"stdout is not one JSON document ({error}): {data[:200]!r}")


@dataclass
class OurCli:
    """Answers queries with pi-lsp's CLI, caching per query (each query is asked once)."""

    corpus: Corpus
    in_process: bool
    cache: dict[Query, Outcome] = field(default_factory=dict)

    def __call__(self, query: Query) -> Outcome:
        if query not in self.cache:
            argv = query.our_argv(self.corpus.directory)
            runner = run_our_cli_in_process if self.in_process else run_our_cli_subprocess
            self.cache[query] = runner(argv)
        return self.cache[query]

    def subprocess(self, query: Query) -> Outcome:
        return run_our_cli_subprocess(query.our_argv(self.corpus.directory))


def install_reference() -> Path:
    """Run install.sh (a no-op when already installed); return the Node 22 that runs pi."""
    result = _run(["bash", str(INSTALL_SCRIPT)], timeout=INSTALL_TIMEOUT_S, what="install.sh")
    if result.returncode != 0:
        pytest.fail(
            "installing the pi references failed (Node/npm are required for the conformance "
            f"tests):\n{result.stdout.decode(errors='replace')}{result.stderr.decode(errors='replace')}"
        )
    if not REFERENCE_NODE.exists():
        pytest.fail(f"install.sh succeeded but {REFERENCE_NODE} does not exist")
    return REFERENCE_NODE


def corpus_seed_args() -> list[str]:
    """``--seed N`` from PI_CONFORMANCE_SEED (to explore
    other corpora), else the generator's default."""
    seed = os.environ.get("PI_CONFORMANCE_SEED")
    return ["--seed", seed] if seed else []


def generate_corpus(node: Path, directory: Path, generator: Path = GENERATOR_SCRIPT) -> Corpus:
    run_node_script(node, generator, [str(directory), *corpus_seed_args()])
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    return Corpus(directory, manifest)


def ask_reference(node: Path, corpus: Corpus, pi_dir: Path | None = None) -> ReferenceAnswers:
    """pi's answer to every query of the corpus, from one `pi_reference.mjs batch` run
    (``pi_dir``: the pi package to ask, default 0.84.2)."""
    queries = corpus.queries()
    digests_before = corpus.file_digests()
    payload = json.dumps([query.reference_argv(corpus.directory) for query in queries]).encode()
    stdout = run_node_script(node, REFERENCE_SCRIPT, ["batch", "-"], stdin=payload, pi_dir=pi_dir)
    results = json.loads(stdout.decode("utf-8"))
    if len(results) != len(queries):
        pytest.fail("pi_reference batch returned a different number of answers than queries")
    answers = {
        query: Outcome(True, result["result"])
        if result["ok"]
        else Outcome(False, error=result["error"])
        for query, result in zip(queries, results, strict=True)
    }
    return ReferenceAnswers(corpus, digests_before, corpus.file_digests(), answers)
