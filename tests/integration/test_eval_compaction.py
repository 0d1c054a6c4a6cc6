"""``pi-lsp eval compaction`` as a user runs it, against the scripted model through litellm.

The command compacts a copy of the session as the server would, has the model write probes about
the summarized part, asks them with only the summary and the kept messages, and grades the answers
against the full transcript. A failed call or an unreadable answer is an error (exit status 1);
the session file is never changed.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from pi_lsp.scripted_llm import ScriptedLLM, replies
from pi_lsp.session.session import Session
from tests import scripted_llm_fixtures as fixtures
from tests.builders import assistant_message, tool_call, usage, user_text

scripted_llm = fixtures.scripted_llm

FACT = "the staging database listens on port 8443"
SUMMARY = "## Goal\nMove the service to staging\n\n## Next Steps\n1. Deploy"
PROBES = json.dumps(
    [
        {"type": "recall", "question": "Which port does staging use?", "answer": "8443"},
        {"type": "artifact", "question": "Which file was read?", "answer": "deploy.yaml"},
    ]
)


SCRIPTED_ANSWER = {
    "api": "openai-completions",
    "provider": "openai",
    "model": "scripted",
    "usage_": usage(10, 5),
}


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    workspace = tmp_path / "project"
    (workspace / ".pi").mkdir(parents=True)
    (workspace / ".pi" / "settings.json").write_text(
        json.dumps({"compaction": {"keepRecentTokens": 80, "tokenizer": "chars4"}})
    )
    (workspace / "deploy.yaml").write_text("port: 8443\n")
    with Session.create(tmp_path / "sessions", str(workspace)) as session:
        session.append_message(user_text(f"Note that {FACT}. " + "context " * 40))
        session.append_message(
            assistant_message(
                "Reading.",
                tool_call("read", "c1", path="deploy.yaml"),
                stop_reason="toolUse",
                **SCRIPTED_ANSWER,
            )
        )
        session.append_message(
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "read",
                "content": [{"type": "text", "text": "port: 8443"}],
                "isError": False,
                "timestamp": 3,
            }
        )
        session.append_message(
            assistant_message("Staging uses 8443. " + "details " * 40, **SCRIPTED_ANSWER)
        )
        session.append_message(user_text("Now deploy it. " + "please " * 40))
        session.append_message(assistant_message("Deploying. " + "steps " * 40, **SCRIPTED_ANSWER))
        assert session.path is not None
        return session.path


async def run_eval(file: Path, llm: ScriptedLLM, tmp_path: Path, *extra: str):
    environment = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "PI_CODING_AGENT_DIR": str(tmp_path / "home" / "agent"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    environment.pop("PI_LSP_MODEL", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "pi_lsp",
        "eval",
        "compaction",
        str(file),
        "--model",
        "openai/scripted",
        "--api-base",
        llm.base_url,
        *extra,
        env=environment,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await process.communicate()
    return process.returncode, stdout.decode(), stderr.decode()


def text_of(request: dict) -> str:
    return json.dumps(request["messages"], ensure_ascii=False)


async def test_it_compacts_probes_answers_from_the_summary_and_grades_against_the_transcript(
    scripted_llm, session_file, tmp_path
):
    before = session_file.read_bytes()
    scripted_llm.enqueue(
        replies.text(SUMMARY),
        replies.text(f"```json\n{PROBES}\n```"),
        replies.text("I do not know the port."),
        replies.text('{"score": 0, "reason": "the port is gone"}'),
        replies.text("deploy.yaml"),
        replies.text('{"score": 5, "reason": "right"}'),
    )
    status, output, errors = await run_eval(session_file, scripted_llm, tmp_path, "--probes", "2")
    assert status == 0, errors
    summary_request, probe_request, *probe_calls = scripted_llm.requests
    assert len(probe_calls) == 4
    assert FACT in text_of(summary_request)
    assert FACT in text_of(probe_request) and "Write 2 questions" in text_of(probe_request)
    first_answer, first_grade = probe_calls[0], probe_calls[1]
    assert "Which port does staging use?" in text_of(first_answer)
    assert SUMMARY.splitlines()[1] in text_of(first_answer)  # the compacted context
    assert FACT not in text_of(first_answer)  # summarized away
    assert FACT in text_of(first_grade) and "I do not know the port." in text_of(first_grade)
    lines = output.splitlines()
    assert [
        line.split() for line in lines if line.startswith(("recall", "artifact", "overall"))
    ] == [
        ["recall", "1", "0%"],
        ["artifact", "1", "100%"],
        ["overall", "2", "50%"],
    ]
    assert "1. [recall] 0/5 Which port does staging use?" in output
    assert any(line.startswith("tokens: ") and "cost: $" in line for line in lines)
    assert session_file.read_bytes() == before


@pytest.mark.parametrize(
    ("probe_reply", "message"),
    [
        (replies.error(400, "bad request"), "a call to openai/scripted failed"),
        (
            replies.text("Sure, here are some questions: none"),
            "probe questions are not a JSON array",
        ),
    ],
)
async def test_a_failed_call_or_unreadable_probes_end_with_an_error(
    scripted_llm, session_file, tmp_path, probe_reply, message
):
    before = session_file.read_bytes()
    scripted_llm.enqueue(replies.text(SUMMARY), probe_reply)
    status, output, errors = await run_eval(session_file, scripted_llm, tmp_path)
    assert status == 1 and output == ""
    assert errors.startswith("pi-lsp: error: ") and message in errors
    assert session_file.read_bytes() == before


async def test_an_unreadable_grade_is_an_error(scripted_llm, session_file, tmp_path):
    scripted_llm.enqueue(
        replies.text(SUMMARY),
        replies.text(PROBES),
        replies.text("8443"),
        replies.text("Looks great to me!"),
    )
    status, _, errors = await run_eval(session_file, scripted_llm, tmp_path, "--probes", "1")
    assert status == 1 and "the grade has no score from 0 to 5" in errors
