"""pi 0.84.2 reads the sessions extensions shape: their ``custom`` entries (``append_entry``), a
result ``tool_result`` redacted, turns whose requests a ``context`` hook changed (nothing of it
stored) and a branch summary a ``before_tree`` hook supplied (``fromHook``).

The scenario of the end-to-end extension tests runs in process (the server's own services with
the model double) with the same extension files; pi then loads the file with its real
``SessionManager`` and must see the same tree and build the same context at every entry.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pi_lsp.llm.double import replies
from pi_lsp.session.session import Session
from tests.agent_harness import AgentHarness
from tests.extension_sources import STATEFUL, TEAM

from .harness import REFERENCE_SCRIPT, run_node_script

TREE = """
def before_tree(event):
    return {"summary": {"summary": "Explored the secrets file.", "details": {"by": "tree"}}}
"""


async def write_session(workspace: Path) -> Path:
    folder = workspace / ".pi" / "extensions"
    folder.mkdir(parents=True)
    for name, source in {"stateful": STATEFUL, "team": TEAM, "tree": TREE}.items():
        (folder / f"{name}.py").write_text(source)
    (workspace / "secrets.env").write_text("API_KEY=sk-12345\n")
    agent = AgentHarness(workspace)
    try:
        agent.model.script(
            replies.tool_calls([("call-1", "read", {"path": "secrets.env"})]),
            replies.text("Done."),
            replies.text("Two."),
        )
        await agent.prompt("read secrets.env")
        first_answer = agent.runtime.session.leaf_id
        await agent.prompt("second")
        assert first_answer is not None
        await agent.services.navigator.navigate(agent.runtime, first_answer, summarize=True)
        agent.model.script(replies.text("Three."))
        await agent.prompt("third")
        path = agent.runtime.session.path
        assert path is not None
        return path
    finally:
        agent.close()


@pytest.fixture(scope="module")
def session_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workspace = tmp_path_factory.mktemp("extension-session")
    return asyncio.run(write_session(workspace))


def test_pi_reads_a_session_shaped_by_extensions(reference_node, session_file):
    text = session_file.read_text()
    assert "sk-12345" not in text and '"customType":"counter"' in text
    assert '"fromHook":true' in text
    ours = Session.open(session_file, writable=False)
    queries = [["tree", str(session_file)]] + [
        ["context", str(session_file), "--leaf", entry.id] for entry in ours.entries
    ]
    output = run_node_script(
        reference_node, REFERENCE_SCRIPT, ["batch", "-"], stdin=json.dumps(queries).encode()
    )
    tree, *contexts = json.loads(output)
    assert tree["ok"], tree
    assert tree["result"]["leafId"] == ours.leaf_id
    assert [(item["id"], item["type"]) for item in tree["result"]["entries"]] == [
        (entry.id, entry.type) for entry in ours.entries
    ]
    expected = [ours.build_context(entry.id).to_json() for entry in ours.entries]
    assert [answer.get("result") for answer in contexts] == expected
    assert sum(entry.type == "custom" for entry in ours.entries) == 3
