"""Tool cards: what the chats show of each kind of call, built from what the real tools return
(read ranges, an edit's +/- and diff, write new vs overwrite, bash exit codes, kills, timeouts and
long output, search counts and result paths), MCP and extension tools, failures and denials."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.agent.permission_policy import PermissionQuestion
from pi_lsp.agent.permissions import _refused
from pi_lsp.protocol import ToolCard, ToolCardArgument, ToolCardImage, ToolCardResult, to_json
from pi_lsp.session.tool_cards import MAX_OUTPUT_LINES, ToolOutcome, tool_card
from pi_lsp.tools import ToolContext, ToolResult, default_tools, tools_by_name
from pi_lsp.tools.bash import BashTool
from tests.builders import tiny_png


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, temp_dir=tmp_path / "tmp")


async def run(name: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolCard:
    """The card of ``name(arguments)`` after running the real tool."""
    tool = BashTool() if name == "bash" else tools_by_name(default_tools())[name]
    result = await tool.execute(arguments, ctx)
    return card_of(name, arguments, result, Path(ctx.cwd))


def card_of(name: str, arguments: dict[str, Any], result: ToolResult, cwd: Path) -> ToolCard:
    outcome = ToolOutcome(result.content, result.details, result.is_error)
    return tool_card(name, arguments, outcome, cwd)


# ------------------------------------------------------------------------------ read


async def test_read_with_offset_and_limit_gives_the_range_and_the_text(ctx, tmp_path):
    (tmp_path / "app.py").write_text("".join(f"line {n}\n" for n in range(1, 31)))
    card = await run("read", {"path": "app.py", "offset": 10, "limit": 5}, ctx)
    assert (card.kind, card.status, card.title, card.path) == (
        "read",
        "done",
        "Read app.py",
        "app.py",
    )
    assert (card.start_line, card.end_line, card.total_lines) == (10, 14, 31)
    assert card.text is not None and card.text.startswith("line 10\nline 11")
    assert card.size_bytes == len(card.text.encode())


def test_a_running_read_says_so_with_the_range_asked(tmp_path):
    card = tool_card("read", {"path": "src/a.py", "offset": 3, "limit": 4}, None, tmp_path)
    assert (card.status, card.title, card.start_line, card.end_line) == (
        "running",
        "Reading src/a.py",
        3,
        6,
    )


async def test_a_read_image_is_named_not_shown(ctx, tmp_path):
    png = tiny_png()
    (tmp_path / "pic.png").write_bytes(png)
    card = await run("read", {"path": "pic.png"}, ctx)
    assert card.images == [ToolCardImage("image/png", len(png))]


def test_a_path_outside_the_workspace_stays_absolute(tmp_path):
    card = tool_card("read", {"path": "/etc/hosts"}, None, tmp_path / "ws")
    assert card.path == "/etc/hosts"


# ------------------------------------------------------------------------------ edit, write


async def test_an_edit_with_two_hunks_counts_its_lines_and_keeps_the_whole_diff(ctx, tmp_path):
    lines = [f"value_{n} = {n}" for n in range(1, 41)]
    (tmp_path / "app.py").write_text("\n".join(lines) + "\n")
    edits = [
        {"oldText": "value_2 = 2", "newText": "value_2 = 20\nvalue_2b = 21"},
        {"oldText": "value_35 = 35\nvalue_36 = 36", "newText": "value_35 = 350"},
    ]
    card = await run("edit", {"path": "app.py", "edits": edits}, ctx)
    assert (card.kind, card.status, card.title) == ("edit", "done", "Edited app.py")
    assert (card.added, card.removed) == (3, 3)
    assert card.diff is not None
    assert [line for line in card.diff if line.startswith("@@")] == [
        "@@ -1,6 +1,7 @@",
        "@@ -31,10 +32,9 @@",
    ]
    assert "-value_2 = 2" in card.diff and "+value_2b = 21" in card.diff
    assert "+value_35 = 350" in card.diff
    assert not any(line.startswith(("--- ", "+++ ")) for line in card.diff)
    assert card.start_line == 2
    assert card.undo_in_editor is False


def test_an_edit_pi_made_shows_pis_display_diff(tmp_path):
    details = {"diff": "  1 a\n- 2 b\n+ 2 c\n  3 d", "firstChangedLine": 2}
    outcome = ToolOutcome([{"type": "text", "text": "ok"}], details)
    card = tool_card("edit", {"path": "x.txt"}, outcome, tmp_path)
    assert (card.added, card.removed, card.diff) == (1, 1, details["diff"].split("\n"))


async def test_writing_a_new_file_says_created_and_shows_its_lines_added(ctx, tmp_path):
    card = await run("write", {"path": "src/new.py", "content": "a = 1\nb = 2\n"}, ctx)
    assert (card.title, card.created, card.added, card.removed) == (
        "Created src/new.py",
        True,
        2,
        0,
    )
    assert card.diff == ["@@ -0,0 +1,2 @@", "+a = 1", "+b = 2"]
    assert card.size_bytes == 12


async def test_overwriting_a_file_shows_what_changed(ctx, tmp_path):
    (tmp_path / "old.txt").write_text("one\ntwo\nthree\n")
    card = await run("write", {"path": "old.txt", "content": "one\n2\nthree\nfour\n"}, ctx)
    assert (card.title, card.created, card.size_bytes) == ("Wrote old.txt", False, 17)
    assert (card.added, card.removed) == (2, 1)
    assert card.diff == ["@@ -1,3 +1,4 @@", " one", "-two", "+2", " three", "+four"]


async def test_lines_that_look_like_file_headers_stay_in_the_diff(ctx, tmp_path):
    (tmp_path / "q.sql").write_text("-- a comment\nselect 1;\n")
    card = await run("write", {"path": "q.sql", "content": "++ added\nselect 1;\n"}, ctx)
    assert card.diff == ["@@ -1,2 +1,2 @@", "--- a comment", "+++ added", " select 1;"]
    assert (card.added, card.removed) == (1, 1)


async def test_overwriting_a_big_file_says_wrote_with_no_diff(ctx, tmp_path):
    (tmp_path / "big.txt").write_text("x\n" * 200_000)
    card = await run("write", {"path": "big.txt", "content": "small\n"}, ctx)
    assert (card.title, card.diff, card.added) == ("Wrote big.txt", None, None)


def test_a_change_through_the_editor_can_be_undone_there(tmp_path):
    details = {"path": str(tmp_path / "a.py"), "bytes": 3, "created": False, "viaEditor": True}
    card = tool_card(
        "write", {"path": "a.py", "content": "abc"}, ToolOutcome([], details), tmp_path
    )
    assert card.undo_in_editor is True


# ------------------------------------------------------------------------------ bash


async def test_a_failing_command_shows_its_output_and_exit_code(ctx):
    card = await run("bash", {"command": "echo out; echo err >&2; exit 3"}, ctx)
    assert (card.kind, card.status, card.status_reason, card.exit_code) == (
        "bash",
        "failed",
        "exit 3",
        3,
    )
    assert card.title == card.command == "echo out; echo err >&2; exit 3"
    assert card.output is not None and "out" in card.output and "err" in card.output
    assert "Command exited" not in card.output
    assert card.output_bytes == len(b"out\nerr\n")
    assert not card.killed and not card.timed_out


async def test_a_command_that_succeeds_silently_has_empty_output(ctx):
    card = await run("bash", {"command": "true"}, ctx)
    assert (card.status, card.exit_code, card.output, card.status_reason) == ("done", 0, "", None)


async def test_a_replayed_command_tells_how_long_it_ran(ctx):
    arguments = {"command": "echo hi"}
    result = await BashTool().execute(arguments, ctx)
    ran = result.details["durationMs"]
    # replayed from the session: no live duration, the recorded one
    assert card_of("bash", arguments, result, Path(ctx.cwd)).duration_ms == ran
    # live: the recorded run time, not the wait since the call started (a permission question)
    live = tool_card(
        "bash", arguments, ToolOutcome(result.content, result.details), ctx.cwd, 90_000
    )
    assert live.duration_ms == ran


async def test_a_killed_command_says_killed(ctx):
    card = await run("bash", {"command": "echo before; kill -9 $$"}, ctx)
    assert (card.status, card.killed, card.status_reason) == ("failed", True, "killed")
    assert card.output == "before"


async def test_a_command_that_timed_out_says_so(ctx):
    card = await run("bash", {"command": "echo started; sleep 30", "timeout": 1}, ctx)
    assert (card.status, card.timed_out, card.status_reason) == ("failed", True, "timed out")
    assert card.output == "started"


async def test_long_output_keeps_its_tail_and_whole_size(ctx):
    card = await run("bash", {"command": "seq 1 5000"}, ctx)
    assert card.output is not None
    shown = card.output.split("\n")
    assert len(shown) == MAX_OUTPUT_LINES and shown[-1] == "5000"
    assert card.output_truncated is True
    assert card.output_bytes == len("".join(f"{n}\n" for n in range(1, 5001)).encode())
    assert card.full_output_path is not None and Path(card.full_output_path).exists()


def test_a_running_command_carries_the_output_so_far(tmp_path):
    partial = ToolOutcome([{"type": "text", "text": "1\n2"}], {"truncated": False}, finished=False)
    card = tool_card("bash", {"command": "seq 1 3"}, partial, tmp_path)
    assert (card.status, card.output, card.exit_code) == ("running", "1\n2", None)


# ------------------------------------------------------------------------------ search


async def test_grep_counts_matches_and_links_each_to_its_line(ctx, tmp_path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "a.py").write_text("x = 1\n# TODO one\n")
    (tmp_path / "src" / "pkg" / "b.py").write_text("# TODO two\n")
    card = await run("grep", {"pattern": "TODO", "path": "src"}, ctx)
    assert (card.kind, card.title, card.query, card.result_count) == (
        "search",
        "grep TODO in src",
        "TODO",
        2,
    )
    assert sorted(card.results or [], key=lambda result: result.path) == [
        ToolCardResult("src/a.py", 2, "# TODO one"),
        ToolCardResult("src/pkg/b.py", 1, "# TODO two"),
    ]
    assert card.more_results is False


async def test_grep_with_context_counts_only_the_matches(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    card = await run("grep", {"pattern": "two", "context": 1}, ctx)
    assert card.result_count == 1 and card.results == [ToolCardResult("a.txt", 2, "two")]


async def test_grep_at_its_limit_says_there_is_more(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("x\n" * 5)
    card = await run("grep", {"pattern": "x", "limit": 2}, ctx)
    assert (card.result_count, card.more_results) == (2, True)


async def test_find_and_ls_list_their_paths(ctx, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("")
    (tmp_path / "b.py").write_text("")
    found = await run("find", {"pattern": "*.py"}, ctx)
    assert (found.title, found.result_count) == ("find *.py", 2)
    assert sorted(result.path for result in found.results or []) == ["b.py", "src/a.py"]
    listed = await run("ls", {"path": "src"}, ctx)
    assert (listed.title, listed.query, listed.result_count) == ("ls src", None, 1)
    assert listed.results == [ToolCardResult("src/a.py")]
    assert to_json(listed)["results"] == [{"path": "src/a.py"}]
    assert to_json(found)["arguments"] == [{"name": "pattern", "value": "*.py"}]


async def test_nothing_found_is_zero_results(ctx):
    card = await run("grep", {"pattern": "absent"}, ctx)
    assert (card.result_count, card.results) == (0, [])


# ------------------------------------------------------------------------------ MCP, others


def test_an_mcp_tool_names_its_server_and_lists_its_arguments(tmp_path):
    arguments = {"repo": "pi/lsp", "labels": ["bug", "ui"], "limit": 5}
    outcome = ToolOutcome([{"type": "text", "text": "3 issues"}], None)
    card = tool_card("mcp__github__list_issues", arguments, outcome, tmp_path)
    assert (card.kind, card.server, card.tool, card.title) == (
        "mcp",
        "github",
        "list_issues",
        "github · list_issues",
    )
    assert card.arguments == [
        ToolCardArgument("repo", "pi/lsp"),
        ToolCardArgument("labels", '["bug", "ui"]'),
        ToolCardArgument("limit", "5"),
    ]
    assert json.loads(card.raw_arguments) == arguments
    assert card.text == "3 issues"


def test_an_extension_tool_shows_its_name_and_answer(tmp_path):
    image = {"type": "image", "data": "AAAA", "mimeType": "image/gif"}
    outcome = ToolOutcome([{"type": "text", "text": "drawn"}, image], {"any": 1})
    card = tool_card("draw_chart", {"series": "a"}, outcome, tmp_path)
    assert (card.kind, card.tool, card.title, card.text) == (
        "other",
        "draw_chart",
        "draw_chart",
        "drawn",
    )
    assert card.images == [ToolCardImage("image/gif", 3)]


async def test_a_failed_edit_is_titled_as_not_done(ctx, tmp_path):
    (tmp_path / "app.py").write_text("x = 1\n")
    edits = [{"oldText": "absent", "newText": "y"}]
    card = await run("edit", {"path": "app.py", "edits": edits}, ctx)
    assert (card.status, card.title) == ("failed", "Edit app.py")
    assert card.status_reason == "Could not find the text to replace in app.py."
    assert card.text is not None and card.text.startswith(card.status_reason + " oldText must")


def test_a_failure_says_why_in_the_header(tmp_path):
    outcome = ToolOutcome([{"type": "text", "text": "File not found: gone.py"}], None, True)
    card = tool_card("read", {"path": "gone.py"}, outcome, tmp_path)
    assert (card.status, card.status_reason) == ("failed", "File not found: gone.py")


def test_a_denied_call_says_who_denied_it(tmp_path):
    question = PermissionQuestion(tool_name="bash", subject="rm -rf build", session_grant="bash")
    refusal = _refused(question, "denied", "the user denied it")
    card = card_of("bash", {"command": "rm -rf build"}, refusal, tmp_path)
    assert (card.status, card.status_reason, card.exit_code) == (
        "denied",
        "the user denied it",
        None,
    )


def test_the_card_on_the_wire_leaves_out_what_its_kind_has_not(tmp_path):
    card = tool_card("ls", {}, ToolOutcome([{"type": "text", "text": "a"}], None), tmp_path)
    assert set(to_json(card)) == {
        "kind",
        "title",
        "status",
        "arguments",
        "rawArguments",
        "path",
        "resultCount",
        "results",
        "moreResults",
    }


def test_arguments_with_an_integer_past_64_bits_still_show(tmp_path):
    card = tool_card("other_tool", {"big": 2**70}, None, tmp_path)
    assert card.raw_arguments == '{\n  "big": 1180591620717411303424\n}'
    assert card.arguments == [ToolCardArgument("big", "1180591620717411303424")]
