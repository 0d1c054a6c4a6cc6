"""Resources while the server runs: AGENTS.md edits, new and broken skills, templates, reloads."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from pygls.exceptions import JsonRpcException

from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request

SKILL = """---
name: release-notes
description: Write release notes from the git log.
---
Run git log and group the changes by kind.
"""


async def wait_for_change(notifications: list, predicate, timeout: float = 10.0) -> dict:
    async def find():
        while True:
            for item in notifications:
                if predicate(item):
                    return item
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(find(), timeout)


def record_resource_changes(client) -> list:
    changes: list = []
    client.feature("pi/resourcesChanged")(lambda params: changes.append(params))  # plain JSON
    return changes


def system_prompt(scripted_llm) -> str:
    return scripted_llm.requests[-1]["messages"][0]["content"]


async def test_editing_agents_md_changes_the_next_system_prompt(client, scripted_llm, workspace):
    changes = record_resource_changes(client)
    scripted_llm.enqueue(replies.text("First."), replies.text("Second."))
    await request(client, "pi/prompt", {"text": "one"})
    assert "Always answer in English." in system_prompt(scripted_llm)
    (workspace / "AGENTS.md").write_text("Always answer in French.\n")
    change = await wait_for_change(
        changes, lambda item: any(ref["kind"] == "contextFile" for ref in item["changed"])
    )
    assert change["changed"][0]["path"].endswith("AGENTS.md")
    await request(client, "pi/prompt", {"text": "two"})
    assert "Always answer in French." in system_prompt(scripted_llm)


async def test_a_prompt_right_after_a_truncate_then_write_save_reads_the_written_file(
    client, scripted_llm, workspace
):
    # An editor that saves in place: the watcher reloads on the truncation, and the prompt comes
    # before its reload for the write.
    changes = record_resource_changes(client)
    scripted_llm.enqueue(replies.text("First."), replies.text("Second."))
    await request(client, "pi/prompt", {"text": "one"})
    saving = os.open(workspace / "AGENTS.md", os.O_WRONLY | os.O_TRUNC)
    try:
        await wait_for_change(
            changes, lambda item: any(ref["kind"] == "contextFile" for ref in item["changed"])
        )
        os.write(saving, b"Always answer in French.\n")
    finally:
        os.close(saving)
    await request(client, "pi/prompt", {"text": "two"})
    assert "Always answer in French." in system_prompt(scripted_llm)


async def test_a_new_skill_folder_is_picked_up_and_its_command_expands(
    client, scripted_llm, workspace
):
    changes = record_resource_changes(client)
    folder = workspace / ".pi" / "skills" / "release-notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        SKILL
    )  # written right after its folder: the watcher must not miss it
    await wait_for_change(
        changes, lambda item: any(ref["name"] == "release-notes" for ref in item["added"])
    )
    resources = await request(client, "pi/resources", {})
    assert [skill["name"] for skill in resources["skills"]] == ["release-notes"]
    scripted_llm.enqueue(replies.text("Here are the notes."))
    await request(client, "pi/prompt", {"text": "/skill:release-notes for version 2"})
    sent = scripted_llm.requests[-1]["messages"]
    assert "<available_skills>" in sent[0]["content"] and "release-notes" in sent[0]["content"]
    user = json.dumps(sent[-1])
    assert (
        '<skill name=\\"release-notes\\"' in user
        and "group the changes by kind" in user
        and "for version 2" in user
    )


async def test_a_broken_skill_becomes_a_diagnostic_on_its_file_and_the_rest_still_loads(
    client, workspace
):
    good = workspace / ".pi" / "skills" / "good"
    broken = workspace / ".pi" / "skills" / "broken"
    good.mkdir(parents=True)
    broken.mkdir(parents=True)
    (good / "SKILL.md").write_text("---\nname: good\ndescription: Works.\n---\nBody\n")
    (broken / "SKILL.md").write_text("---\nname: broken\n---\nNo description here\n")
    result = await request(client, "pi/reload", {})  # the watcher may have reloaded already
    assert set(result) == {"added", "changed", "removed"}
    resources = await request(client, "pi/resources", {})
    assert [skill["name"] for skill in resources["skills"]] == ["good"]
    [problem] = [
        item for item in resources["diagnostics"] if item["path"].endswith("broken/SKILL.md")
    ]
    assert "description" in problem["message"]
    uri = (broken / "SKILL.md").as_uri()
    for _ in range(100):
        if client.diagnostics.get(uri):
            break
        await asyncio.sleep(0.05)
    assert "description" in client.diagnostics[uri][0].message


async def test_prompt_templates_expand_with_arguments(client, scripted_llm, workspace):
    prompts = workspace / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text(
        "---\ndescription: Review a file\n---\nReview $1 for $2 problems.\n"
    )
    await request(client, "pi/reload", {})
    scripted_llm.enqueue(replies.text("Reviewed."))
    await request(client, "pi/prompt", {"text": "/review app.py security"})
    assert "Review app.py for security problems." in json.dumps(
        scripted_llm.requests[-1]["messages"][-1]
    )


async def test_a_settings_file_edited_while_the_server_runs_applies_to_the_next_request(
    client, scripted_llm, workspace
):
    changes = record_resource_changes(client)
    for index in range(3):
        scripted_llm.enqueue(replies.text(f"Answer {index} " + "words " * 30))
        await request(client, "pi/prompt", {"text": f"Question {index} " + "more " * 30})
    # pi's default keepRecentTokens of 20000 keeps everything: nothing to compact yet.
    with pytest.raises(JsonRpcException, match="Nothing to compact"):
        await request(client, "pi/compact", {})
    (workspace / ".pi" / "settings.json").write_text('{"compaction": {"keepRecentTokens": 100}}')
    await wait_for_change(
        changes,
        lambda item: any(ref["kind"] == "settings" for ref in item["added"] + item["changed"]),
    )
    # Enough answers for a split turn too (history, then the turn prefix).
    scripted_llm.enqueue(
        replies.text("## Goal\nSummarized with the new setting"),
        replies.text("## Original Request\nQ"),
    )
    result = await request(client, "pi/compact", {})
    assert "Summarized with the new setting" in result["summary"]


async def test_skill_folders_named_in_settings_are_watched_once_settings_name_them(
    client, workspace
):
    changes = record_resource_changes(client)
    shared = workspace.parent / "team-skills"
    (shared / "lint").mkdir(parents=True)
    (shared / "lint" / "SKILL.md").write_text(
        "---\nname: lint\ndescription: Lint the code.\n---\nRun the linter.\n"
    )
    (workspace / ".pi").mkdir(exist_ok=True)
    (workspace / ".pi" / "settings.json").write_text('{"skills": ["../../team-skills"]}')
    await wait_for_change(changes, lambda item: any(ref["name"] == "lint" for ref in item["added"]))
    # The folder lies outside every usual resource place: only the rebuilt watch sees this (after
    # the rescan that follows a rebuild, and well before the 5 s safety-net rescan).
    await asyncio.sleep(0.6)
    (shared / "format").mkdir()
    (shared / "format" / "SKILL.md").write_text(
        "---\nname: format\ndescription: Format the code.\n---\nRun the formatter.\n"
    )
    await wait_for_change(
        changes, lambda item: any(ref["name"] == "format" for ref in item["added"]), timeout=4.0
    )
    resources = await request(client, "pi/resources", {})
    assert {skill["name"] for skill in resources["skills"]} == {"lint", "format"}
