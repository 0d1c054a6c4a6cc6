"""``examples/extensions/team_memory.py`` as a user installs it: copied into
``.pi/extensions/``, notes in ``.pi/memory/``, the relevant ones injected per request."""

from __future__ import annotations

import shutil
from pathlib import Path

from pi_lsp.llm.double import replies

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "team_memory.py"


def texts(request) -> list[str]:
    return [
        block["text"] if isinstance(block, dict) else str(block)
        for message in request.messages
        for block in (
            message["content"] if isinstance(message["content"], list) else [message["content"]]
        )
        if not isinstance(block, dict) or block.get("type") == "text"
    ]


def install(agent, notes: dict[str, str]) -> None:
    pi = agent.workspace / ".pi"
    (pi / "extensions").mkdir(parents=True)
    (pi / "memory").mkdir()
    shutil.copy(EXAMPLE, pi / "extensions" / "team_memory.py")
    for name, text in notes.items():
        (pi / "memory" / f"{name}.md").write_text(text)
    agent.services.resources.reload()


async def test_the_relevant_notes_are_injected_before_the_question_and_not_stored(
    agent, monkeypatch
):
    monkeypatch.delenv("PI_TEAM_MEMORY_DIR", raising=False)
    install(
        agent,
        {
            "deploys": "# Deploys\nDeploys run from the release branch on Fridays.",
            "database": "# Database migrations\nRun alembic upgrade before the deploy.",
            "lunch": "# Lunch\nPizza on Thursdays.",
        },
    )
    agent.model.script(replies.text("Ok."))
    await agent.prompt("How do deploys work with database migrations?")
    sent = texts(agent.model.requests[0])
    memory, question = sent[-2], sent[-1]
    assert question == "How do deploys work with database migrations?"
    assert memory.startswith("Notes from the team's memory")
    assert "Run alembic" in memory and "release branch" in memory and "Pizza" not in memory
    assert memory.index("Database migrations") < memory.index("Deploys run")  # best score first
    assert "Run alembic" not in agent.runtime.session.path.read_text()


async def test_at_most_three_notes_within_the_size_cap(agent):
    install(
        agent,
        {f"small{index}": f"# Cache {index}\nThe cache is warmed nightly." for index in range(5)}
        | {"large": "# Sizes\n" + "sizes " * 1000},
    )
    agent.model.script(replies.text("Ok."), replies.text("Ok."))
    await agent.prompt("Why is the cache slow?")
    memory = texts(agent.model.requests[0])[-2]
    assert memory.count("# Cache") == 3
    await agent.prompt("What cache sizes do we use?")
    memory = texts(agent.model.requests[1])[-2]
    assert len(memory) <= 4000 and memory.startswith("Notes") and "# Sizes" in memory
    assert memory.endswith("[…truncated]")


async def test_no_note_matches_nothing_is_injected(agent):
    install(agent, {"lunch": "# Lunch\nPizza on Thursdays."})
    agent.model.script(replies.text("Ok."))
    await agent.prompt("Fix the failing test")
    assert not any("team's memory" in text for text in texts(agent.model.requests[0]))
