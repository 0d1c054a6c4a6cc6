"""Tool cards over stdio: a scripted turn with read, grep, edit and bash; the live events and the
replayed history (``pi/messages``) carry the same cards (the command's with its duration), and a
running command's card fills."""

from __future__ import annotations

import asyncio

from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request
from tests.scripted_llm_fixtures import WORK_TURN_COMMAND, read_edit_bash_grep


def _cards_of(events, event_type: str) -> list[dict]:
    return [event["toolCard"] for event in events.events() if event["type"] == event_type]


def _cards(events, event_type: str) -> dict[str, dict]:
    return {
        event["toolCallId"]: event["toolCard"]
        for event in events.events()
        if event["type"] == event_type
    }


async def test_the_events_and_the_history_carry_each_calls_card(client, events, scripted_llm):
    scripted_llm.enqueue(*read_edit_bash_grep())
    await request(client, "pi/prompt", {"text": "Fix add() and run the tests"})

    started = _cards(events, "tool_execution_start")
    assert {call: card["status"] for call, card in started.items()} == dict.fromkeys(
        ("call_read", "call_grep", "call_edit", "call_bash"), "running"
    )
    assert started["call_edit"]["title"] == "Editing app.py"

    ended = _cards(events, "tool_execution_end")
    read, grep, edit, bash = (ended[f"call_{name}"] for name in ("read", "grep", "edit", "bash"))
    assert (read["title"], read["startLine"], read["endLine"]) == ("Read app.py", 1, 3)
    assert (grep["query"], grep["resultCount"], grep["results"]) == (
        "return",
        1,
        [{"path": "app.py", "line": 2, "text": "    return a - b"}],
    )
    assert (edit["title"], edit["added"], edit["removed"]) == ("Edited app.py", 1, 1)
    assert "-    return a - b" in edit["diff"] and "+    return a + b" in edit["diff"]
    assert (bash["status"], bash["statusReason"], bash["exitCode"]) == ("failed", "exit 1", 1)
    assert (bash["command"], bash["output"]) == (WORK_TURN_COMMAND, "1 test failed")
    assert all(card["durationMs"] >= 0 for card in ended.values())

    history = await request(client, "pi/messages", {})
    replayed = {
        entry["message"]["toolCallId"]: entry["toolCard"]
        for entry in history["entries"]
        if entry.get("message", {}).get("role") == "toolResult"
    }
    # the session records how long a command ran (bash's details.durationMs), not the other
    # tools' durations: the rest is the same card
    assert replayed == {
        call: {
            key: value for key, value in card.items() if key != "durationMs" or call == "call_bash"
        }
        for call, card in ended.items()
    }
    others = [
        entry
        for entry in history["entries"]
        if entry.get("message", {}).get("role") != "toolResult"
    ]
    assert not any("toolCard" in entry for entry in others)


async def test_a_running_commands_card_carries_its_output_so_far(
    client, events, scripted_llm, workspace
):
    command = "echo first; while [ ! -f go ]; do sleep 0.05; done; echo second"
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "bash", {"command": command})]), replies.text("Done.")
    )
    prompt = asyncio.ensure_future(request(client, "pi/prompt", {"text": "run it"}))

    async def output_so_far() -> dict:
        while True:
            for card in _cards_of(events, "tool_execution_update"):
                if card["output"] == "first":
                    return card
            await asyncio.sleep(0.05)

    card = await asyncio.wait_for(output_so_far(), 30)
    assert (card["status"], card["command"], card.get("exitCode")) == ("running", command, None)
    (workspace / "go").write_text("")
    await asyncio.wait_for(prompt, 30)
    [end] = [event for event in events.events() if event["type"] == "tool_execution_end"]
    assert (end["toolCard"]["status"], end["toolCard"]["output"]) == ("done", "first\nsecond")
