"""Tool plumbing: argument checking, the registry and specs, truncation, the output accumulator."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

from pi_lsp.tools import (
    NoEditor,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    default_tools,
    tool_specs,
    tools_by_name,
    validate_arguments,
)
from pi_lsp.tools.accumulator import OutputAccumulator
from pi_lsp.tools.paths import expand_path, resolve_to_cwd
from pi_lsp.tools.truncate import format_size, truncate_head, truncate_line, truncate_tail

# ---------------------------------------------------------------------------- registry / specs

PI_PARAMETERS = {
    "read": ({"path", "offset", "limit"}, ["path"]),
    "bash": ({"command", "timeout"}, ["command"]),
    "edit": ({"path", "edits"}, ["path", "edits"]),
    "write": ({"path", "content"}, ["path", "content"]),
    "grep": ({"pattern", "path", "glob", "ignoreCase", "literal", "context", "limit"}, ["pattern"]),
    "find": ({"pattern", "path", "limit"}, ["pattern"]),
    "ls": ({"path", "limit"}, []),
}


def test_default_tools_in_pi_order_with_pi_parameter_names():
    specs = tool_specs(default_tools())
    assert [spec["name"] for spec in specs] == [
        "read",
        "bash",
        "edit",
        "write",
        "grep",
        "find",
        "ls",
    ]
    for spec in specs:
        names, required = PI_PARAMETERS[spec["name"]]
        params = spec["parameters"]
        assert params["type"] == "object"
        assert set(params["properties"]) == names
        assert sorted(params.get("required", [])) == sorted(required)
        assert spec["description"]
        assert set(spec) == {"name", "description", "parameters"}
    edit = next(spec for spec in specs if spec["name"] == "edit")
    item = edit["parameters"]["properties"]["edits"]["items"]
    assert set(item["properties"]) == {"oldText", "newText"}
    assert sorted(item["required"]) == ["newText", "oldText"]


def test_tools_import_neither_pygls_nor_litellm():
    code = (
        "import sys, pi_lsp.tools; "
        "bad = [m for m in ('pygls', 'litellm', 'lsprotocol') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_unknown_keys_pass_and_missing_required_is_an_error_result(tmp_path: Path):
    tools = tools_by_name(default_tools())
    context = ToolContext(cwd=tmp_path)
    result = await tools["read"].execute({}, context)
    assert result.is_error
    assert 'Invalid arguments for tool "read"' in result.text
    assert "path: required but missing" in result.text
    result = await tools["write"].execute({"path": 3.5, "content": ["x"]}, context)
    assert result.is_error
    assert "content: expected a string, got array" in result.text
    result = await tools["bash"].execute("echo hi", context)
    assert result.is_error and "expected an object" in result.text


def test_validation_coerces_like_pi():
    schema = default_tools()[0].parameters  # read
    args, problem = validate_arguments("read", schema, {"path": 12, "offset": "5", "limit": None})
    assert problem is None
    assert args == {"path": "12", "offset": 5}
    _, problem = validate_arguments("read", schema, {"path": "a", "offset": "five"})
    assert problem is not None and "offset: expected a number, got string" in problem
    _, problem = validate_arguments("read", schema, {"path": "a", "offset": True})
    assert problem is not None and "offset" in problem
    grep = tools_by_name(default_tools())["grep"].parameters
    args, problem = validate_arguments(
        "grep", grep, {"pattern": "x", "ignoreCase": "true", "literal": 0}
    )
    assert problem is None and args == {"pattern": "x", "ignoreCase": True, "literal": False}
    edit = tools_by_name(default_tools())["edit"].parameters
    _, problem = validate_arguments("edit", edit, {"path": "a", "edits": [{"oldText": "x"}]})
    assert problem is not None and "edits[0].newText: required but missing" in problem


async def test_tool_failures_become_error_results(tmp_path: Path):
    class Broken(Tool):
        name = "broken"
        description = "fails"
        parameters: ClassVar[dict[str, Any]] = {
            "type": "object",
            "properties": {"how": {"type": "string"}},
            "required": ["how"],
        }

        async def run(self, arguments, context):
            if arguments["how"] == "tool":
                raise ToolError("nope", {"why": 1})
            if arguments["how"] == "os":
                (tmp_path / "missing" / "file").read_text()
            raise RuntimeError("bug")

    context = ToolContext(cwd=tmp_path)
    result = await Broken().execute({"how": "tool"}, context)
    assert result == ToolResult(
        content=[{"type": "text", "text": "nope"}], details={"why": 1}, is_error=True
    )
    result = await Broken().execute({"how": "os"}, context)
    assert (
        result.is_error and "No such file or directory" in result.text and "ENOENT" in result.text
    )
    result = await Broken().execute({"how": "bug"}, context)
    assert result.is_error and "RuntimeError: bug" in result.text


async def test_no_editor_bridge():
    editor = NoEditor()
    assert editor.open_document_text(Path("/x")) is None
    assert await editor.apply_edit(Path("/x"), "y") is False


def test_context_update_callback_errors_are_contained(tmp_path: Path):
    seen = []

    def listener(result):
        seen.append(result)
        raise ValueError("listener bug")

    context = ToolContext(cwd=str(tmp_path), on_update=listener)
    assert isinstance(context.cwd, Path)
    context.emit_update(ToolResult())
    assert len(seen) == 1


# ---------------------------------------------------------------------------- paths


def test_paths_expand_home_at_prefix_and_file_urls(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert expand_path("~") == str(tmp_path)
    assert expand_path("~/a/b") == str(tmp_path / "a" / "b")
    assert expand_path("@src/x.py") == "src/x.py"
    assert expand_path("file:///tmp/a%20b") == "/tmp/a b"
    assert expand_path("a\u00a0b") == "a b"
    cwd = tmp_path / "ws"
    assert resolve_to_cwd("src/../x.py", cwd) == cwd / "x.py"
    assert resolve_to_cwd("/abs/x", cwd) == Path("/abs/x")
    assert resolve_to_cwd("~/y", cwd) == tmp_path / "y"


# ---------------------------------------------------------------------------- truncation


def test_truncate_head_by_lines_and_bytes():
    text = "\n".join(f"line {i}" for i in range(1, 11))
    result = truncate_head(text, max_lines=3)
    assert result["content"] == "line 1\nline 2\nline 3"
    assert result["truncated"] and result["truncatedBy"] == "lines"
    assert result["totalLines"] == 10 and result["outputLines"] == 3
    result = truncate_head(text, max_bytes=15)
    assert result["content"] == "line 1\nline 2"
    assert result["truncatedBy"] == "bytes"
    result = truncate_head("x" * 100 + "\nshort", max_bytes=50)
    assert result["firstLineExceedsLimit"] and result["content"] == ""
    untouched = truncate_head("a\nb\n")
    assert not untouched["truncated"] and untouched["totalLines"] == 2


def test_truncate_tail_keeps_the_end_and_may_cut_the_last_line():
    text = "\n".join(str(i) for i in range(1, 101))
    result = truncate_tail(text, max_lines=5)
    assert result["content"] == "96\n97\n98\n99\n100"
    assert result["truncatedBy"] == "lines"
    result = truncate_tail("head\n" + "é" * 40, max_bytes=21)
    assert result["lastLinePartial"]
    assert result["content"] == "é" * 10  # never splits a character
    assert result["outputBytes"] == 20


def test_truncate_line_and_format_size():
    assert truncate_line("abc", 5) == ("abc", False)
    assert truncate_line("abcdefgh", 5) == ("abcde... [truncated]", True)
    assert format_size(10) == "10B"
    assert format_size(51200) == "50.0KB"
    assert format_size(3 * 1024 * 1024) == "3.0MB"


# ---------------------------------------------------------------------------- accumulator


def test_accumulator_keeps_a_bounded_tail_and_spills_to_a_temp_file(tmp_path: Path):
    acc = OutputAccumulator(max_lines=10, max_bytes=100, temp_dir=tmp_path)
    acc.append(b"small\n")
    snap = acc.snapshot()
    assert snap["content"] == "small\n" and snap["fullOutputPath"] is None
    everything = b"".join(f"row {i}\n".encode() for i in range(1000))
    for start in range(0, len(everything), 37):  # odd chunk sizes
        acc.append(everything[start : start + 37])
    acc.append("é".encode()[:1])  # half a character, completed at the end
    acc.append("é".encode()[1:] + b"\n")
    acc.finish()
    snap = acc.snapshot(persist_if_truncated=True)
    acc.close()
    truncation = snap["truncation"]
    assert truncation["truncated"] and truncation["totalLines"] == 1002
    assert snap["content"].endswith("row 999\né")
    assert len(snap["content"].split("\n")) <= 10
    full = Path(snap["fullOutputPath"]).read_bytes()
    assert full == b"small\n" + everything + "é\n".encode()
    assert len(acc._tail.encode()) <= 4 * 100 + 100  # memory stays bounded
