"""File tracking: which tool calls count, read/modified lists, JavaScript sort, summary blocks."""

from __future__ import annotations

from builders import assistant_message, text, tool_call, user_message
from hypothesis import given
from hypothesis import strategies as st

from pi_lsp.compaction.file_ops import (
    FileOps,
    add_details_file_lists,
    compute_file_lists,
    extract_file_ops_from_message,
    format_file_operations,
    js_default_sort,
)


def test_only_read_write_edit_with_a_path_count():
    file_ops = FileOps()
    message = assistant_message(
        text("working"),
        tool_call("read", path="a.py"),
        tool_call("write", path="b.py", content="x"),
        tool_call("edit", path="c.py"),
        tool_call("bash", command="cat d.py", path="d.py"),
        tool_call("read", path=""),
        tool_call("read", path=5),
        tool_call("read"),
        {"type": "toolCall", "name": "read"},  # no arguments at all
    )
    extract_file_ops_from_message(message, file_ops)
    assert file_ops == FileOps(read={"a.py"}, written={"b.py"}, edited={"c.py"})


def test_non_assistant_messages_are_ignored():
    file_ops = FileOps()
    extract_file_ops_from_message(user_message([tool_call("read", path="a.py")]), file_ops)
    extract_file_ops_from_message({"role": "assistant", "content": "read a.py"}, file_ops)
    assert file_ops == FileOps()


def test_calls_a_tool_result_records_as_nested_count_as_pi_16_counts_them():
    file_ops = FileOps()
    result = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "codemode",
        "content": [text("done")],
        "nestedCalls": {
            "calls": [
                {"name": "read", "arguments": {"path": "a.py"}},
                {"name": "edit", "arguments": {"path": "b.py"}},
                {"name": "bash", "arguments": {"command": "ls"}},
                {"name": "write"},
                "not a call",
            ]
        },
        "isError": False,
    }
    extract_file_ops_from_message(result, file_ops)
    extract_file_ops_from_message({"role": "toolResult", "nestedCalls": "odd"}, file_ops)
    assert file_ops == FileOps(read={"a.py"}, edited={"b.py"})


def test_paths_are_taken_verbatim():
    file_ops = FileOps()
    extract_file_ops_from_message(
        assistant_message(tool_call("read", path="./a.py"), tool_call("read", path="a.py")),
        file_ops,
    )
    assert compute_file_lists(file_ops).read_files == ["./a.py", "a.py"]


def test_read_then_modified_only_counts_as_modified():
    lists = compute_file_lists(FileOps(read={"b", "a", "m"}, written={"w"}, edited={"m"}))
    assert lists.read_files == ["a", "b"]
    assert lists.modified_files == ["m", "w"]


def test_sort_is_utf16_code_unit_order():
    # U+1F600 is encoded as surrogates (0xD83D…), which sort before U+FF21 in JavaScript,
    # while Python's code point order puts the emoji last.
    paths = ["\uff21.md", "\U0001f600.md", "z.md"]
    assert sorted(paths) == ["z.md", "\uff21.md", "\U0001f600.md"]
    assert js_default_sort(paths) == ["z.md", "\U0001f600.md", "\uff21.md"]


def test_details_seed_read_and_edited():
    file_ops = FileOps()
    add_details_file_lists({"readFiles": ["r"], "modifiedFiles": ["m"]}, file_ops)
    add_details_file_lists({"readFiles": "not a list"}, file_ops)
    add_details_file_lists(None, file_ops)
    assert file_ops == FileOps(read={"r"}, edited={"m"})


def test_format_file_operations():
    assert format_file_operations([], []) == ""
    assert format_file_operations(["a", "b"], []) == "\n\n<read-files>\na\nb\n</read-files>"
    assert format_file_operations([], ["m"]) == "\n\n<modified-files>\nm\n</modified-files>"
    assert format_file_operations(["a"], ["m"]) == (
        "\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nm\n</modified-files>"
    )


paths = st.text(min_size=1, max_size=6)


@given(st.sets(paths), st.sets(paths), st.sets(paths))
def test_file_lists_are_sorted_disjoint_and_complete(read, written, edited):
    lists = compute_file_lists(FileOps(read=set(read), written=set(written), edited=set(edited)))

    def utf16(path):
        return path.encode("utf-16-be", "surrogatepass")

    for files in (lists.read_files, lists.modified_files):
        assert [utf16(path) for path in files] == sorted(utf16(path) for path in files)
    assert not set(lists.read_files) & set(lists.modified_files)
    assert set(lists.read_files) | set(lists.modified_files) == read | written | edited
    assert set(lists.modified_files) == written | edited
