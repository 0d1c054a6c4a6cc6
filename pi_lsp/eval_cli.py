"""``pi-lsp eval compaction``: how much a compaction summary of a session keeps.

1. The compaction is planned and summarized exactly as the server would: pi's settings files and
   ``compaction.*``, the ``compaction.model`` (or ``--compaction-model``), the same prompts, file
   lists and split-turn handling. The session file is never touched; the compaction is appended to
   a copy, whose context is then built the way the server builds it.
2. The model writes ``--probes`` questions, with reference answers, about the part the summary
   replaces (``compaction/probes.py``: recall, artifact, continuation, decision).
3. Each question is asked with only the compacted context (the summary and the kept messages).
4. The model grades each answer against the full transcript.

It prints a score per probe type and overall, each answer's grade, and the tokens and cost of all
calls. Any failed call or unreadable answer ends the run with an error (exit status 1).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from pi_lsp.compaction import probes
from pi_lsp.compaction.probes import EvalError, GradedProbe, Probe
from pi_lsp.errors import InvalidParamsError, NothingToCompactError, SessionNotFoundError
from pi_lsp.llm.client import ModelClient
from pi_lsp.llm.config import ModelConfig
from pi_lsp.session.message_types import AssistantMessage, UserMessage
from pi_lsp.session.messages import content_text
from pi_lsp.session.session import Session
from pi_lsp.session_cli import at_least

DEFAULT_PROBES = 8


def add_command(commands: argparse._SubParsersAction) -> None:
    evaluation = commands.add_parser("eval", help="measure how well pi-lsp's memory works")
    kinds = evaluation.add_subparsers(dest="evaluation", metavar="EVALUATION", required=True)
    compaction = kinds.add_parser(
        "compaction",
        help="how much a compaction summary of a session keeps, graded by the model",
    )
    compaction.add_argument("file", metavar="SESSION_FILE")
    compaction.add_argument(
        "--model", help="the model that writes, answers and grades the probes (a litellm string)"
    )
    compaction.add_argument(
        "--compaction-model",
        metavar="MODEL",
        help="the model that writes the summary (default: compaction.model, else --model)",
    )
    compaction.add_argument(
        "--probes", type=at_least(1), default=DEFAULT_PROBES, metavar="N", help="questions to ask"
    )
    compaction.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible endpoint")
    compaction.set_defaults(handler=run_compaction_eval)


@attrs.frozen
class EvalSetup:
    """The models and the compaction the run uses, as the server would configure them."""

    model: ModelConfig
    compaction_model: ModelConfig
    config: Any  # pi_lsp.config.ServerConfig
    workspace: Path


@attrs.frozen
class EvalReport:
    graded: list[GradedProbe]
    summary: str
    tokens_before: int | float
    usage: dict[str, Any]


def run_compaction_eval(arguments: argparse.Namespace) -> int:
    from pi_lsp.llm.client import ProviderClient

    session_path = Path(arguments.file)
    if not session_path.is_file():
        raise SessionNotFoundError(f"no session file at {session_path}")
    session = Session.open(session_path, writable=False)
    setup = eval_setup(session, arguments)
    report = asyncio.run(
        evaluate_compaction(session_path, setup, ProviderClient(), arguments.probes)
    )
    sys.stdout.write(format_report(report, setup))
    return 0


def eval_setup(session: Session, arguments: argparse.Namespace) -> EvalSetup:
    """The configuration the server would have for the session's workspace, with the command's
    models over it."""
    from pi_lsp.agent.system_prompt import agent_dir
    from pi_lsp.config import load_config
    from pi_lsp.llm.config import resolve_model
    from pi_lsp.resources.settings import load_settings

    cwd = Path(session.cwd or os.getcwd())
    workspace = cwd if cwd.is_dir() else Path(os.getcwd())
    pi_settings = load_settings(workspace, agent_dir(), trusted=True).settings.merged
    given = {"model": arguments.model, "apiBase": arguments.api_base}
    options = {key: value for key, value in given.items() if value}
    config = load_config(workspace, options, pi_settings=pi_settings)
    model = resolve_model(config.model_settings(), os.environ)
    if model is None:
        raise InvalidParamsError("no model: pass --model or set one as the server reads it")
    cheaper = arguments.compaction_model or config.compaction_model()
    compaction_model = (
        resolve_model({**config.model_settings(), "model": cheaper}, os.environ) or model
        if cheaper
        else model
    )
    return EvalSetup(model, compaction_model, config, workspace)


async def evaluate_compaction(
    session_path: Path, setup: EvalSetup, client: ModelClient, probe_count: int
) -> EvalReport:
    """Compact a copy of the session, then probe, answer and grade (see the module docstring)."""
    calls = _Calls(client)
    with tempfile.TemporaryDirectory(prefix="pi-lsp-eval-") as directory:
        copy = Path(directory) / session_path.name
        shutil.copyfile(session_path, copy)
        with Session.open(copy) as session:
            full_context = session.build_context().messages
            summary, replaced = await _compact(session, setup, calls)
            compacted_context = session.build_context().messages
    summarized = _serialized(replaced)
    probe_answer = await calls.ask(
        setup.model, probes.PROBE_SYSTEM_PROMPT, [], probes.probe_request(summarized, probe_count)
    )
    questions = probes.parse_probes(probe_answer, probe_count)
    transcript = _serialized(full_context)
    graded = [
        await _graded(calls, setup.model, probe, compacted_context, transcript)
        for probe in questions
    ]
    return EvalReport(graded, summary.summary, summary.tokens_before, calls.usage)


async def _compact(
    session: Session, setup: EvalSetup, calls: _Calls
) -> tuple[Any, list[Mapping[str, Any]]]:
    """Append the compaction the server would; its summary, and the messages it replaced."""
    from pi_lsp.compaction.prepare import prepare_compaction
    from pi_lsp.compaction.summarize import (
        editor_file_ops_in,
        editor_records_to_fold_in,
        summarize_compaction,
    )
    from pi_lsp.compaction.tokens import get_token_counter
    from pi_lsp.llm.models import max_output_tokens_for
    from pi_lsp.tools.paths import resolve_read_path

    path = session.branch()
    settings = setup.config.compaction_settings()
    preparation = prepare_compaction(path, settings, get_token_counter(setup.config.tokenizer()))
    if preparation is None or (path and path[-1].type == "compaction"):
        raise NothingToCompactError("Nothing to compact: the session is too small")

    async def complete(
        system_prompt: str, user_text: str, max_tokens: int | None
    ) -> AssistantMessage:
        model = setup.compaction_model
        return await calls.complete(model, system_prompt, [], user_text, max_tokens)

    summary = await summarize_compaction(
        preparation,
        complete,
        max_output_tokens=max_output_tokens_for(setup.compaction_model),
        editor_file_ops=editor_file_ops_in(editor_records_to_fold_in(path)),
        file_exists=lambda file: resolve_read_path(file, setup.workspace).exists(),
    )
    session.append_compaction(
        summary.summary,
        summary.first_kept_entry_id,
        int(summary.tokens_before),
        summary.details,
        usage=summary.usage,
    )
    return summary, [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]


async def _graded(
    calls: _Calls,
    model: ModelConfig,
    probe: Probe,
    compacted_context: Sequence[Mapping[str, Any]],
    transcript: str,
) -> GradedProbe:
    answer = await calls.ask(model, probes.ANSWER_SYSTEM_PROMPT, compacted_context, probe.question)
    verdict = await calls.ask(
        model, probes.GRADER_SYSTEM_PROMPT, [], probes.grading_request(transcript, probe, answer)
    )
    return GradedProbe(probe, answer, probes.parse_grade(verdict))


def _serialized(messages: Sequence[Mapping[str, Any]]) -> str:
    from pi_lsp.compaction.serialize import serialize_conversation
    from pi_lsp.session.messages import convert_to_llm

    return serialize_conversation(convert_to_llm(list(messages)))


class _Calls:
    """Every model call of a run, checked, with their usage added up."""

    def __init__(self, client: ModelClient) -> None:
        self.client = client
        self.usage: dict[str, Any] = {}

    async def complete(
        self,
        model: ModelConfig,
        system_prompt: str,
        context: Sequence[Mapping[str, Any]],
        user_text: str,
        max_tokens: int | None = None,
    ) -> AssistantMessage:
        from pi_lsp.compaction.summarize import combine_usage
        from pi_lsp.llm.client import complete
        from pi_lsp.llm.stream import CompletionRequest
        from pi_lsp.session.messages import convert_to_llm

        question: UserMessage = {
            "role": "user",
            "content": [{"type": "text", "text": user_text}],
            "timestamp": 0,
        }
        request = CompletionRequest(
            model=model,
            system_prompt=system_prompt,
            messages=[*convert_to_llm(list(context)), question],
            max_tokens=max_tokens,
        )
        message = await complete(self.client, request)
        usage = message.get("usage")
        if isinstance(usage, Mapping):
            self.usage = combine_usage(self.usage, usage) or {}
        return message

    async def ask(
        self,
        model: ModelConfig,
        system_prompt: str,
        context: Sequence[Mapping[str, Any]],
        user_text: str,
    ) -> str:
        message = await self.complete(model, system_prompt, context, user_text)
        if message.get("stopReason") in ("error", "aborted"):
            reason = message.get("errorMessage") or "the model reported an unknown error"
            raise EvalError(f"a call to {model.model} failed: {reason}")
        text = content_text(message.get("content"))
        if not text.strip():
            raise EvalError(f"{model.model} returned no text")
        return text


def format_report(report: EvalReport, setup: EvalSetup) -> str:
    by_type, overall = probes.scores(report.graded)
    heading = (
        f"Compaction of {report.tokens_before:g} tokens by {setup.compaction_model.model}; "
        f"probes by {setup.model.model}"
    )
    lines = [
        heading,
        "",
        f"{'probe type':<14}{'probes':>7}{'score':>9}",
    ]
    lines += [f"{item.type:<14}{item.probes:>7}{item.score:>8.0f}%" for item in by_type]
    lines += [f"{'overall':<14}{len(report.graded):>7}{overall:>8.0f}%", ""]
    for number, item in enumerate(report.graded, 1):
        lines.append(
            f"{number}. [{item.probe.type}] {item.grade.score}/{probes.MAX_SCORE} "
            f"{item.probe.question}"
        )
        if item.grade.reason:
            lines.append(f"   {item.grade.reason}")
    usage = report.usage
    cost = usage.get("cost", {}).get("total", 0) if isinstance(usage.get("cost"), Mapping) else 0
    lines += [
        "",
        f"tokens: {usage.get('input', 0)} in, {usage.get('output', 0)} out; cost: ${cost:.4f}",
    ]
    return "\n".join(lines) + "\n"
