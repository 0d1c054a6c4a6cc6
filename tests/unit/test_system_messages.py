"""pi 1.6's system messages replayed into the snapshot a compaction stores (pi-ai's
``getCurrentSystemMessage``); tests/conformance/test_pi16_round_trip.py compares one with pi's."""

from pi_lsp.session.system_messages import current_system_message, tools_declaration


def tool(name: str, version: int = 1) -> dict:
    return {"name": name, "description": f"{name} v{version}", "parameters": {}}


def test_patches_replay_in_order():
    messages = [
        {"role": "user", "content": "not prompt state"},
        {
            "role": "system",
            "content": "Base prompt.",
            "sections": {"tools": "<tools/>", "rules": "<rules/>", "cwd": "<cwd/>"},
            "toolsAdded": [tool("read"), tool("bash"), tool("edit")],
            "timestamp": 7,
        },
        {
            "role": "system",
            "content": [{"type": "text", "text": "More."}, {"type": "image"}],
            "sections": {"rules": "<rules>new</rules>", "cwd": None},
            "toolsRemoved": [{"name": "bash"}],
            "toolsAdded": [tool("read", 2), tool("bash", 2)],
            "timestamp": 9,
        },
        {"role": "system", "content": "", "timestamp": 11},
    ]
    snapshot = current_system_message(messages, 1234)
    assert snapshot == {
        "role": "system",
        "content": "Base prompt.\n\nMore.",
        "sections": {"tools": "<tools/>", "rules": "<rules>new</rules>"},
        # A removed tool added again goes last; a redefined one keeps its place.
        "toolsAdded": [tool("read", 2), tool("edit"), tool("bash", 2)],
        "timestamp": 1234,
    }
    assert list(snapshot) == ["role", "content", "sections", "toolsAdded", "timestamp"]


def test_nothing_to_replay():
    assert current_system_message([{"role": "user", "content": "hi"}], 1) is None
    untimed = [{"role": "system", "content": "x"}]
    assert current_system_message(untimed, 1) is None
    assert current_system_message([{"role": "system", "content": "x", "timestamp": 0}], 5) == {
        "role": "system",
        "content": "x",
        "timestamp": 5,
    }


def test_a_tools_declaration_adds_only_what_the_transcript_does_not_declare():
    declared = [tool("read"), tool("tool_search"), tool("mcp__x__echo")]
    # No loadout recorded yet: pi 1.6 would take the message as the whole loadout, so all of it.
    first = tools_declaration([{"role": "user", "content": "hi"}], declared, 5)
    assert first == {"role": "system", "content": "", "toolsAdded": declared, "timestamp": 5}
    recorded = [
        {"role": "system", "content": "pi", "toolsAdded": [tool("read", 2), tool("codemode")]}
    ]
    later = tools_declaration(recorded, declared, 6)
    assert later is not None and later["toolsAdded"] == [tool("tool_search"), tool("mcp__x__echo")]
    assert "toolsRemoved" not in later  # pi's own tools (codemode) stay pi's
    assert tools_declaration([*recorded, later], declared, 7) is None
