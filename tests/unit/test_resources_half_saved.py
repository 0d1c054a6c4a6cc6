"""An AGENTS.md saved the way many editors save it, truncated and then written, never leaves the
next prompt with the truncated file.

The watcher may reload between the truncation and the write (the first change it sees), and its
reload for the write comes tens of milliseconds later; a prompt in between used the empty file.
The snapshot now sees that a context or system-prompt file changed since it read them, and loads
again. The watcher is not running here: each step happens when the test says so.
"""

from __future__ import annotations

from pathlib import Path

from pi_lsp.agent.resource_service import ResourceService


def service_for(tmp_path: Path) -> tuple[ResourceService, Path, list]:
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Always answer in English.\n", encoding="utf-8")
    changes: list = []
    service = ResourceService(
        workspace,
        tmp_path / "agent",
        trusted=True,
        on_change=lambda change, snapshot: changes.append(change),
    )
    return service, workspace, changes


def context_text(service: ResourceService) -> str:
    return "".join(context_file.content for context_file in service.snapshot.context_files)


def test_a_reload_between_truncation_and_write_does_not_outlive_the_write(tmp_path):
    service, workspace, changes = service_for(tmp_path)
    assert context_text(service) == "Always answer in English.\n"

    with open(workspace / "AGENTS.md", "w", encoding="utf-8") as saving:  # truncated
        service.reload()  # the watcher saw the truncation
        assert context_text(service) == ""
        saving.write("Always answer in French.\n")
    # The write is done; the watcher has not reloaded for it yet. The next prompt reads:
    assert context_text(service) == "Always answer in French.\n"
    assert len(changes) == 2  # the truncation, then the content: the client hears of both


def test_a_context_file_created_or_deleted_since_the_load_is_seen_at_once(tmp_path):
    service, workspace, _ = service_for(tmp_path)
    assert context_text(service) == "Always answer in English.\n"
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "AGENTS.md").write_text("Global rules.\n", encoding="utf-8")
    assert context_text(service) == "Global rules.\nAlways answer in English.\n"
    (workspace / "AGENTS.md").unlink()
    assert context_text(service) == "Global rules.\n"
    (workspace / ".pi").mkdir()
    (workspace / ".pi" / "SYSTEM.md").write_text("You are terse.", encoding="utf-8")
    system_prompt = service.snapshot.system_prompt
    assert system_prompt is not None and system_prompt.content == "You are terse."


def test_unchanged_files_are_not_loaded_again(tmp_path, monkeypatch):
    service, _, changes = service_for(tmp_path)
    first = service.snapshot
    loads = []
    monkeypatch.setattr(service, "reload", lambda: loads.append(1))
    for _ in range(3):
        assert service.snapshot is first
    assert loads == [] and changes == []


async def test_a_turn_checks_the_prompt_files_once_and_its_system_prompt_has_the_saved_file(
    agent, monkeypatch
):
    from pi_lsp.agent import resource_service as resources_module
    from pi_lsp.llm.double import replies

    checks = []
    real_check = resources_module.check_prompt_files

    def counting_check(signature):
        checks.append(1)
        return real_check(signature)

    monkeypatch.setattr(resources_module, "check_prompt_files", counting_check)
    agent.model.script(replies.text("First."), replies.text("Second."))
    await agent.prompt("one")
    # Settings, models and skills are read several times a turn; only the system prompt, which
    # holds the context files, needs them checked.
    assert len(checks) == 1
    # No watcher runs here: only the check sees the file.
    (agent.workspace / "AGENTS.md").write_text("Always answer in French.\n", encoding="utf-8")
    await agent.prompt("two")
    assert "Always answer in French." in agent.model.requests[-1].system_prompt
