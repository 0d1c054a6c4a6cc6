"""The ACP front end's pure parts: pi events and saved messages as ACP updates, prompts as pi's
text and images, slash commands, ``--options``."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextResourceContents,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from pi_lsp.acp import commands, prompts, updates
from pi_lsp.acp.command_line import parse_options
from pi_lsp.acp.tool_titles import card_title
from pi_lsp.errors import InvalidParamsError
from pi_lsp.protocol import (
    AgentEndEvent,
    BranchSummaryEndEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    SummaryCard,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCard,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TranscriptEntry,
)
from pi_lsp.session.tool_cards import ToolOutcome, tool_card

CWD = Path("/home/user/project")


def test_deltas_become_message_and_thought_chunks():
    [text] = updates.event_updates(TextDeltaEvent("Hel"), CWD)
    [thought] = updates.event_updates(ThinkingDeltaEvent("hmm"), CWD)
    assert isinstance(text, AgentMessageChunk) and text.content.text == "Hel"
    assert isinstance(thought, AgentThoughtChunk) and thought.content.text == "hmm"
    assert updates.event_updates(AgentEndEvent("stop", "x"), CWD) == []


@pytest.mark.parametrize(
    ("tool", "kind"),
    [
        ("read", "read"),
        ("write", "edit"),
        ("edit", "edit"),
        ("bash", "execute"),
        ("grep", "search"),
        ("find", "search"),
        ("ls", "search"),
        ("custom", "other"),
    ],
)
def test_each_tool_has_its_acp_kind(tool, kind):
    [start] = updates.event_updates(ToolExecutionStartEvent("c1", tool, {}), CWD)
    assert isinstance(start, ToolCallStart) and start.kind == kind


def test_a_tool_call_has_absolute_locations_raw_input_and_diffs_for_edits():
    arguments = {"path": "src/app.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]}
    [start] = updates.event_updates(ToolExecutionStartEvent("c1", "edit", arguments), CWD)
    assert start.tool_call_id == "c1" and start.status == "in_progress"
    assert [location.path for location in start.locations] == ["/home/user/project/src/app.py"]
    assert start.raw_input == arguments
    [diff] = start.content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == (
        "diff",
        "/home/user/project/src/app.py",
        "a - b",
        "a + b",
    )
    [write] = updates.event_updates(
        ToolExecutionStartEvent("c2", "write", {"path": "/abs/new.txt", "content": "hi\n"}), CWD
    )
    assert (write.content[0].path, write.content[0].old_text, write.content[0].new_text) == (
        "/abs/new.txt",
        None,
        "hi\n",
    )


def test_tool_output_and_results_become_tool_call_updates():
    output = [{"type": "text", "text": "line 1\n"}]
    [running] = updates.event_updates(ToolExecutionUpdateEvent("c1", "bash", output, None), CWD)
    [failed] = updates.event_updates(
        ToolExecutionEndEvent("c1", "bash", True, output, None, "e1"), CWD
    )
    assert isinstance(running, ToolCallProgress) and running.status == "in_progress"
    assert running.content[0].content.text == "line 1\n"
    assert failed.status == "failed"


def test_a_finished_tool_call_is_titled_by_what_it_did():
    failing = {"command": "npm test"}
    outcome = ToolOutcome(
        [{"type": "text", "text": "1 failed\n\nCommand exited with code 1"}],
        {"exitCode": 1, "cancelled": False, "timedOut": False},
        True,
    )
    card = tool_card("bash", failing, outcome, CWD)
    [failed] = updates.event_updates(
        ToolExecutionEndEvent("c1", "bash", True, [], None, "e1", tool_card=card), CWD
    )
    assert failed.title == "bash npm test — exit 1"
    edit = ToolCard("edit", "Edited app.py", "done", [], "{}", added=2, removed=1)
    grep = ToolCard("search", "grep TODO", "done", [], "{}", result_count=3, more_results=True)
    refused = ToolCard(
        "write", "Write a.py", "denied", [], "{}", status_reason="the user denied it"
    )
    assert [card_title(card) for card in (edit, grep, refused)] == [
        "Edited app.py +2 −1",
        "grep TODO — 3+ results",
        "Write a.py — denied: the user denied it",
    ]
    replayed = updates.replay(
        [
            TranscriptEntry("e0", "message", None, message={"role": "assistant", "content": []}),
            TranscriptEntry(
                "e1",
                "message",
                None,
                message={"role": "toolResult", "toolCallId": "c1", "content": []},
                tool_card=edit,
            ),
        ],
        CWD,
    )
    assert replayed[-1].title == "Edited app.py +2 −1"


def test_the_final_update_of_an_edit_keeps_its_diff_before_the_result():
    """ACP v1: ``content`` in a ``tool_call_update`` replaces the tool call's content."""
    running: updates.RunningDiffs = {}
    arguments = {"path": "app.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]}
    updates.event_updates(ToolExecutionStartEvent("c1", "edit", arguments), CWD, running)
    result = [{"type": "text", "text": "Replaced 1 block in app.py."}]
    [done] = updates.event_updates(
        ToolExecutionEndEvent("c1", "edit", False, result, None, "e1"), CWD, running
    )
    diff, text = done.content
    assert (diff.type, diff.old_text, diff.new_text) == ("diff", "a - b", "a + b")
    assert text.content.text == "Replaced 1 block in app.py."
    assert running == {}, "a finished tool call's diffs are forgotten"


def test_an_automatic_compaction_is_shown_as_an_agent_message():
    [shown] = updates.event_updates(CompactionStartEvent("threshold"), CWD)
    assert "Compacting" in shown.content.text


@pytest.mark.parametrize(
    ("pi", "acp"),
    [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("aborted", "cancelled"),
        ("error", "end_turn"),
        ("refusal", "refusal"),
        ("unknown", "end_turn"),
    ],
)
def test_stop_reasons(pi, acp):
    assert updates.stop_reason(pi) == acp


def test_replay_shows_the_path_as_it_happened():
    items = [
        TranscriptEntry("u1", "message", None, message={"role": "user", "content": "hi"}),
        TranscriptEntry(
            "a1",
            "message",
            None,
            message={
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "look"},
                    {"type": "text", "text": "Reading."},
                    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}},
                ],
            },
        ),
        TranscriptEntry(
            "t1",
            "message",
            None,
            message={
                "role": "toolResult",
                "toolCallId": "c1",
                "content": [{"type": "text", "text": "text of a"}],
                "isError": False,
            },
        ),
        TranscriptEntry("b1", "branch_summary", None, summary="The other branch."),
        TranscriptEntry(
            "k1",
            "compaction",
            None,
            summary="## Goal",
            card=SummaryCard("## Goal", ["a"], [], tokens_before=1234),
        ),
    ]
    replayed = updates.replay(items, CWD)
    assert [type(update) for update in replayed] == [
        UserMessageChunk,
        AgentThoughtChunk,
        AgentMessageChunk,
        ToolCallStart,
        ToolCallProgress,
        AgentMessageChunk,
        AgentMessageChunk,
    ]
    assert replayed[4].status == "completed" and replayed[4].content[0].content.text == "text of a"
    assert "Branch summary" in replayed[5].content.text
    assert "The other branch." in replayed[5].content.text
    assert "Compaction summary" in replayed[6].content.text
    assert f"- Read: [a]({(CWD / 'a').as_uri()})" in replayed[6].content.text
    assert "- Tokens: 1,234 before" in replayed[6].content.text


def test_summaries_end_live_as_their_cards_or_as_nothing_changed():
    card = SummaryCard("## Goal", [], ["b"], tokens_before=900, tokens_after=100, model="m/x")
    [shown] = updates.event_updates(
        CompactionEndEvent("threshold", aborted=False, will_retry=False, entry_id="k", card=card),
        CWD,
    )
    assert "- Why: the context reached the compaction threshold" in shown.content.text
    assert "- Tokens: 900 → 100" in shown.content.text and "> ## Goal" in shown.content.text
    [cancelled] = updates.event_updates(
        CompactionEndEvent("manual", aborted=True, will_retry=False, error_message="Cancelled"),
        CWD,
    )
    assert "cancelled; the session is unchanged" in cancelled.content.text
    [failed] = updates.event_updates(BranchSummaryEndEvent("t", False, error_message="boom"), CWD)
    assert "failed: boom; the leaf did not move" in failed.content.text
    [branch] = updates.event_updates(BranchSummaryEndEvent("t", False, "s", card=card), CWD)
    assert "**Branch summary**" in branch.content.text and "Why" not in branch.content.text


def test_a_prompt_becomes_text_and_images():
    blocks = [
        text_block("explain"),
        ImageContentBlock(type="image", data="AAAA", mime_type="image/png"),
        ResourceContentBlock(type="resource_link", name="a", uri="file:///p/a%20b.py"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri="file:///p/b.py", text="print(1)"),
        ),
    ]
    text, images, attached = prompts.prompt_content(blocks)
    assert text == 'explain\n@/p/a b.py\n<file path="/p/b.py">\nprint(1)\n</file>'
    assert images == [{"data": "AAAA", "mimeType": "image/png"}]
    assert attached == [Path("/p/a b.py"), Path("/p/b.py")]
    with pytest.raises(InvalidParamsError, match="audio"):
        prompts.prompt_content([AudioContentBlock(type="audio", data="", mime_type="audio/wav")])


def test_slash_commands_are_parsed_and_everything_else_is_a_prompt():
    assert commands.parse("/tree") == ("tree", [])
    assert commands.parse("/navigate abc --summarize") == ("navigate", ["abc", "--summarize"])
    assert commands.parse("/compact keep the API notes") == ("compact", ["keep the API notes"])
    assert commands.parse('/label abc "two words"') == ("label", ["abc", "two words"])
    assert commands.parse("/skill:review the diff") is None
    assert commands.parse("/unknown") is None
    assert commands.parse("explain /tree") is None
    with pytest.raises(InvalidParamsError, match="/label"):
        commands.parse('/label abc "unclosed')


def test_options_come_as_json_inline_or_in_a_file(tmp_path):
    assert parse_options(None) == {}
    assert parse_options('{"model": "openai/x"}') == {"model": "openai/x"}
    file = tmp_path / "options.json"
    file.write_text('{"apiBase": "http://127.0.0.1:1"}')
    assert parse_options(str(file)) == {"apiBase": "http://127.0.0.1:1"}
    with pytest.raises(InvalidParamsError, match="not valid JSON"):
        parse_options("{model}")
    with pytest.raises(InvalidParamsError, match="JSON object"):
        file.write_text("[1]")
        parse_options(str(file))
    with pytest.raises(InvalidParamsError, match="cannot read"):
        parse_options(str(tmp_path / "missing.json"))


def test_a_command_in_the_clients_terminal_is_shown_as_that_terminal():
    from pi_lsp.protocol import ToolExecutionEndEvent

    running = ToolExecutionUpdateEvent("c1", "bash", [], {"terminalId": "term-7"})
    ended = ToolExecutionEndEvent(
        "c1",
        "bash",
        True,
        [{"type": "text", "text": "x\n\nCommand exited with code 1"}],
        {"exitCode": 1, "terminalId": "term-7"},
        "e1",
    )
    for event, status in ((running, "in_progress"), (ended, "failed")):
        (update,) = updates.event_updates(event, CWD)
        assert update.status == status
        assert [(block.type, block.terminal_id) for block in update.content] == [
            ("terminal", "term-7")
        ]


async def test_commands_go_to_the_clients_terminal_unless_it_has_none_or_refuses():
    from acp import RequestError
    from acp.schema import ClientCapabilities

    from pi_lsp.acp.editor import AcpFiles, prompting_session

    class Refusing:
        async def create_terminal(self, **params):
            raise RequestError.internal_error({"details": "no terminals here"})

    flushed: list[str] = []

    async def flush(session_id: str) -> None:
        flushed.append(session_id)

    with_terminals = ClientCapabilities(terminal=True)
    files = AcpFiles(lambda: Refusing(), lambda: with_terminals, flush)
    prompting_session.set("acp-1")
    assert await files.start_command("ls", CWD) is None
    files = AcpFiles(lambda: Refusing(), lambda: ClientCapabilities(), flush)
    assert await files.start_command("ls", CWD) is None

    class Accepting:
        async def create_terminal(self, **params):
            from acp.schema import CreateTerminalResponse

            assert params["args"] == ["-c", "ls"] and params["cwd"] == str(CWD)
            return CreateTerminalResponse(terminal_id="t1")

    flushed.clear()
    accepting = AcpFiles(lambda: Accepting(), lambda: with_terminals, flush)
    started = await accepting.start_command("ls", CWD)
    assert started is not None and started.id == "t1"
    assert flushed == ["acp-1"], "the updates before terminal/create go first"
