"""``acplint`` (PyPI) against ``pi-lsp acp`` with the scripted model: every check it reports as
failing is listed in docs/acp.md with the reason it does not apply, and nothing else fails."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from pi_lsp.client import isolated_environment
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM

DOC = Path(__file__).resolve().parents[2] / "docs" / "acp.md"


def documented_failures() -> set[str]:
    section = DOC.read_text(encoding="utf-8").split("## acplint", 1)[1]
    return set(re.findall(r"^\| `([a-z0-9_]+)` \|", section, flags=re.MULTILINE))


async def test_acplint_reports_only_what_docs_acp_md_explains(tmp_path):
    acplint = shutil.which("acplint", path=str(Path(sys.executable).parent))
    assert acplint, "acplint is a test dependency: pip install -e '.[test]'"
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    report = tmp_path / "acplint.json"
    async with ScriptedLLM(responder=lambda body: replies.text("hello")) as scripted_llm:
        options = tmp_path / "options.json"
        options.write_text(
            json.dumps(
                {"model": "openai/scripted", "apiBase": scripted_llm.base_url, "autoName": False}
            )
        )
        process = await asyncio.create_subprocess_exec(
            acplint,
            "--agent",
            sys.executable,
            "--agent-args",
            f"-m pi_lsp acp --options {options}",
            "--cwd",
            str(workspace),
            "--output",
            "json",
            "--output-file",
            str(report),
            "--timeout",
            "20",
            env=isolated_environment(Path(tempfile.mkdtemp(prefix="pi-lsp-acplint-home-"))),
            stdout=asyncio.subprocess.DEVNULL,
        )
        await asyncio.wait_for(process.wait(), timeout=240)
    results = json.loads(report.read_text())["results"]
    failing = {result["name"] for result in results if result["status"] == "FAIL"}
    assert len(results) > 40
    assert failing == documented_failures()
