"""``pi-lsp demo`` end to end: the command as a user runs it, the real server, the scripted model.

The facts of each step are checked in what the demo leaves behind (the session file, the
checkpoint ledger, the project's files), not only in what it prints.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.demo import script
from tests.e2e.conftest import server_environment

REPOSITORY = Path(__file__).resolve().parents[2]
FIRST_TURN_ROLES = ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]
STEP_TITLES = [
    "1. prompt",
    "2. a second prompt",
    "3. the editor",
    "4. pi/compact",
    "5. a third prompt",
    "6. pi/navigate back",
    "7. the same navigation with restoreFiles",
    "8. pi/tree",
]
CHECK_COUNT = 11


def run_demo(
    *arguments: str, cwd: Path, extra_environment: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    environment = {**server_environment(), **(extra_environment or {})}
    # Run from outside the repository, as a user would, and still import this checkout.
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPOSITORY), environment.get("PYTHONPATH")])
    )
    return subprocess.run(
        [sys.executable, "-m", "pi_lsp", "demo", *arguments],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.fixture(scope="module")
def story(tmp_path_factory) -> tuple[str, Path]:
    """One run of the whole demo: its transcript and its workspace."""
    root = tmp_path_factory.mktemp("demo")
    completed = run_demo(str(root / "workspace"), cwd=root)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr
    return completed.stdout, root / "workspace"


def printed_path(transcript: str, label: str) -> Path:
    line = next(line for line in transcript.splitlines() if line.startswith(label))
    return Path(line.removeprefix(label).strip())


def entries_of(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:] if line.strip()]


def by_id(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {entry["id"]: entry for entry in entries}


def user_entry(entries: list[dict[str, Any]], text: str) -> dict[str, Any]:
    return next(
        entry
        for entry in entries
        if entry["type"] == "message"
        and entry["message"]["role"] == "user"
        and text in json.dumps(entry["message"]["content"])
    )


def the_session(transcript: str, workspace: Path) -> list[dict[str, Any]]:
    session_file = printed_path(transcript, "session file:")
    assert session_file.parent == workspace / ".pi" / "sessions"
    return entries_of(session_file)


def test_every_step_is_told_and_every_check_holds(story):
    transcript, _ = story
    assert "model: scripted" in transcript
    titles = [line for line in transcript.splitlines() if line.startswith("== ")]
    shown = [title.removeprefix("== ") for title in titles]
    assert [title[: len(step)] for title, step in zip(shown, STEP_TITLES, strict=False)] == (
        STEP_TITLES
    )
    assert transcript.count("  ✓ ") == CHECK_COUNT and "✗" not in transcript
    assert '[tool call] read {"path": "calc.py"}' in transcript and "[tool call] edit" in transcript
    assert script.FIRST_ANSWER in transcript, "the streamed text deltas add up to the whole answer"


def test_the_editors_reads_and_saves_are_recorded_and_folded_into_the_compaction(story):
    transcript, workspace = story
    entries = the_session(transcript, workspace)
    compactions = [entry for entry in entries if entry["type"] == "compaction"]
    assert len(compactions) == 1
    compaction = compactions[0]
    assert compaction["details"]["readFiles"] == ["TODO.md"]
    assert set(compaction["details"]["modifiedFiles"]) == {"calc.py", "test_calc.py"}
    assert "<read-files>\nTODO.md\n</read-files>" in compaction["summary"]
    modified_block = compaction["summary"].split("<modified-files>")[1]
    assert "calc.py" in modified_block and "test_calc.py" in modified_block
    # The compaction keeps the second prompt and its answer; the first turn is summarized.
    kept = by_id(entries)[compaction["firstKeptEntryId"]]
    assert kept == user_entry(entries, script.SECOND_PROMPT)
    records = [entry for entry in entries if entry.get("customType") == "pi-lsp.editor-file-ops"]
    assert [record["data"] for record in records] == [
        {"readFiles": ["TODO.md"], "modifiedFiles": ["test_calc.py"]}
    ]
    assert records[0]["parentId"] == compaction["id"], "recorded once the compaction was written"
    assert script.USER_TEST in (workspace / "test_calc.py").read_text()
    # The summary shown is the one in the file, lists included.
    assert "  | <read-files>\n  | TODO.md\n  | </read-files>" in transcript


def test_the_third_request_carries_the_summary_instead_of_the_first_turn(story):
    transcript, _ = story
    shown = transcript.split("the messages of the request the model received for it:\n")[1]
    roles = [line.split()[0] for line in shown.splitlines()[:5]]
    assert roles == ["system", "user", "user", "assistant", "user"]
    lines = shown.splitlines()
    assert "The conversation history before this point was compacted" in lines[1]
    assert script.SECOND_PROMPT[:40] in lines[2] and script.THIRD_PROMPT in lines[4]


def test_the_branch_summary_hangs_where_the_user_landed(story):
    transcript, workspace = story
    entries = the_session(transcript, workspace)
    third_prompt = user_entry(entries, script.THIRD_PROMPT)
    summaries = [entry for entry in entries if entry["type"] == "branch_summary"]
    assert len(summaries) == 1
    summary = summaries[0]
    assert summary["parentId"] == third_prompt["parentId"]
    third_answer = by_id(entries)[summary["fromId"]]
    assert third_answer["message"]["role"] == "assistant"
    assert script.THIRD_ANSWER in json.dumps(third_answer["message"]["content"])
    assert "## Goal\nMake average() of an empty list return 0.0." in summary["summary"]
    assert "<modified-files>\ncalc.py\n</modified-files>" in summary["summary"]
    assert f"editorText, for the editor's input box: {script.THIRD_PROMPT!r}" in transcript


def test_calc_py_went_back_with_the_navigation_and_forward_again(story):
    transcript, workspace = story
    ledger = workspace / ".pi" / "sessions" / ".checkpoints" / "ledger.jsonl"
    records = [json.loads(line) for line in ledger.read_text().splitlines()]
    agent_changes = [
        record["files"][0]["content"] for record in records if record["kind"] == "agent"
    ]
    restores = [record for record in records if record["kind"] == "restore"]
    fixed, guarded = agent_changes
    assert [(r["files"][0]["replaced"], r["files"][0]["restored"]) for r in restores] == [
        (guarded, fixed),
        (fixed, guarded),
    ]
    calc = (workspace / "calc.py").read_text()
    assert script.FIXED_LINE in calc and script.EMPTY_LIST_GUARD in calc
    assert "pi/navigate back with restoreFiles: calc.py restored" in transcript
    assert f"-    {script.EMPTY_LIST_GUARD}" in transcript, "the preview shows the guard going"


def test_the_closing_lines_say_how_to_open_the_session_in_pi(story):
    transcript, workspace = story
    session_file = printed_path(transcript, "session file:")
    roles = [
        entry["message"]["role"] for entry in entries_of(session_file) if entry["type"] == "message"
    ]
    assert roles[:6] == FIRST_TURN_ROLES
    assert f"cd {workspace} && pi --session {session_file}" in transcript
    assert "@earendil-works/pi-coding-agent@0.84.2" in transcript
    fork_file = printed_path(transcript, "fork:")
    fork_header = json.loads(fork_file.read_text().splitlines()[0])
    assert fork_header.get("parentSession") == str(session_file)


def test_quiet_prints_only_the_step_titles_and_the_checks(tmp_path):
    completed = run_demo(str(tmp_path / "workspace"), "--quiet", cwd=tmp_path)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr
    lines = [line for line in completed.stdout.splitlines() if line]
    assert all(line.startswith(("== ", "  ✓ ")) for line in lines), lines
    assert sum(line.startswith("  ✓ ") for line in lines) == CHECK_COUNT


def test_the_demo_refuses_a_directory_that_is_not_empty(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    completed = run_demo(str(tmp_path), cwd=tmp_path)
    assert completed.returncode != 0
    assert completed.stderr.count("\n") == 1 and "is not empty" in completed.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.txt"]


def test_with_a_real_model_the_context_comes_from_the_session_file(tmp_path):
    """``--model`` runs the same story on another model (here the scripted server behind an
    OpenAI-compatible endpoint the demo does not know): no request is recorded, so the third
    step shows the context built from the session file."""
    from pi_lsp.scripted_llm import ScriptedLLM

    ready = threading.Event()
    stopping: dict[str, Any] = {}

    def serve() -> None:
        async def main() -> None:
            model = ScriptedLLM(script.scripted_replies())
            await model.start()
            stopping["url"], stopping["event"] = model.base_url, asyncio.Event()
            stopping["loop"] = asyncio.get_running_loop()
            ready.set()
            await stopping["event"].wait()
            await model.stop()

        asyncio.run(main())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(30)
    try:
        completed = run_demo(
            str(tmp_path / "workspace"),
            "--model",
            "openai/scripted",
            cwd=tmp_path,
            extra_environment={"PI_LSP_API_BASE": stopping["url"]},
        )
    finally:
        stopping["loop"].call_soon_threadsafe(stopping["event"].set)
        thread.join(30)
    transcript = completed.stdout
    assert completed.returncode == 0, transcript[-3000:] + completed.stderr
    assert "model: openai/scripted (a real model" in transcript
    assert "✗" not in transcript and transcript.count("  ✓ ") == CHECK_COUNT - 1
    shown = transcript.split("after the system prompt:)\n")[1].splitlines()
    assert [line.split()[0] for line in shown[:4]] == ["user", "user", "assistant", "user"]
    assert "The conversation history before this point was compacted" in shown[0]
