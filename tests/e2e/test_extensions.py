"""Python extensions through the ``pi_lsp.extensions``
entry point: cancel or supply a compaction."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from pi_lsp.scripted_llm import ScriptedLLM, replies
from tests.e2e.conftest import SERVER, another_server, request

EXTENSION = """
def before_compact(event):
    if event.instructions == "cancel please":
        return {"cancel": True}
    if event.instructions == "use the extension":
        return {"compaction": {"summary": "Summary by the extension", "tokensBefore": 7,
                               "firstKeptEntryId": event.preparation.first_kept_entry_id,
                               "details": {"readFiles": [], "modifiedFiles": ["x.py"]}}}
    if event.instructions == "break":
        raise RuntimeError("a broken extension")
    return None
"""


def install_extension(site: Path) -> None:
    site.mkdir()
    (site / "pi_lsp_test_extension.py").write_text(EXTENSION)
    info = site / "pi_lsp_test_extension-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pi-lsp-test-extension\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text("[pi_lsp.extensions]\ntest = pi_lsp_test_extension\n")


async def test_an_extension_can_cancel_or_supply_a_compaction(tmp_path, workspace):
    site = tmp_path / "site"
    install_extension(site)
    environment = {
        **SERVER.server_env,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }
    options = {
        "model": "openai/scripted",
        "compaction": {"keepRecentTokens": 100},
        "tokenizer": "chars4",
    }
    async with (
        ScriptedLLM() as llm,
        another_server(workspace, {**options, "apiBase": llm.base_url}, environment) as client,
    ):
        for index in range(3):
            llm.enqueue(replies.text(f"Answer {index} " + "words " * 30))
            await request(client, "pi/prompt", {"text": f"Question {index} " + "more " * 30})
        with pytest.raises(JsonRpcException, match="cancelled by the extension test"):
            await request(client, "pi/compact", {"instructions": "cancel please"})
        requests_before = len(llm.requests)
        result = await request(client, "pi/compact", {"instructions": "use the extension"})
        assert result["summary"] == "Summary by the extension" and result["modifiedFiles"] == [
            "x.py"
        ]
        assert len(llm.requests) == requests_before  # no model call for an extension's summary
        [path] = (workspace / ".pi" / "sessions").glob("*.jsonl")
        compaction = json.loads(path.read_text().splitlines()[-1])
        assert compaction["fromHook"] is True and compaction["tokensBefore"] == 7
