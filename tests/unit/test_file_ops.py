"""File tracking: which tool calls count, read/modified lists, JavaScript sort, summary blocks."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pi_lsp.compaction.file_ops import (
    DETAILS_FILE_LIST_CAP,
    EditorFileOps,
    FileOps,
    SummaryFileLists,
    add_details_file_lists,
    compute_file_lists,
    extract_file_ops_from_message,
    format_bounded_file_operations,
    js_default_sort,
    summary_file_lists,
    with_editor_file_ops,
)
from tests.builders import assistant_message, text, tool_call, user_message


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


def test_lists_within_the_limit_are_formatted_as_pi_formats_them():
    def formatted(read_files: list[str], modified_files: list[str]) -> str:
        return format_bounded_file_operations(SummaryFileLists(read_files, modified_files), 50)

    assert formatted([], []) == ""
    assert formatted(["a", "b"], []) == "\n\n<read-files>\na\nb\n</read-files>"
    assert formatted([], ["m"]) == "\n\n<modified-files>\nm\n</modified-files>"
    assert formatted(["a"], ["m"]) == (
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


# ------------------------------------------------------------------ pi-lsp's bounded lists


def reads_at(paths: list[str], start_ms: int = 1000) -> FileOps:
    """One read per path, each a second after the one before."""
    file_ops = FileOps()
    for index, path in enumerate(paths):
        message = assistant_message(tool_call("read", path=path), timestamp=start_ms + 1000 * index)
        extract_file_ops_from_message(message, file_ops)
    return file_ops


def test_lists_run_from_the_most_recently_touched_path():
    file_ops = reads_at(["a.py", "b.py", "c.py", "a.py"])  # a.py read again last
    extract_file_ops_from_message(
        assistant_message(tool_call("edit", path="b.py"), timestamp=500), file_ops
    )  # an older edit still makes b.py modified, at its latest touch
    lists = summary_file_lists(file_ops)
    assert lists.read_files == ["a.py", "c.py"] and lists.modified_files == ["b.py"]
    assert compute_file_lists(file_ops).read_files == ["a.py", "c.py"]  # pi's order is untouched


def test_the_text_shows_the_newest_paths_and_counts_the_older_ones():
    paths = [f"src/module_{index:03}.py" for index in range(60)]
    lists = summary_file_lists(reads_at(paths))
    assert len(lists.read_files) == 60  # details keep them all
    text = format_bounded_file_operations(lists, 50)
    lines = text.strip().splitlines()
    assert lines[0] == "<read-files>" and lines[-1] == "</read-files>"
    assert lines[1:51] == list(reversed(paths))[:50]
    assert lines[51] == "(10 older files not listed)"
    one_older = format_bounded_file_operations(summary_file_lists(reads_at(paths[:3])), 2)
    assert "(1 older file not listed)" in one_older
    assert format_bounded_file_operations(summary_file_lists(reads_at(paths[:3])), 50) == (
        "\n\n<read-files>\nsrc/module_002.py\nsrc/module_001.py\nsrc/module_000.py\n</read-files>"
    )


def test_details_keep_at_most_the_hard_cap_newest_first():
    paths = [f"f{index}" for index in range(DETAILS_FILE_LIST_CAP + 5)]
    lists = summary_file_lists(reads_at(paths))
    assert len(lists.read_files) == DETAILS_FILE_LIST_CAP
    assert lists.read_files[0] == paths[-1] and paths[0] not in lists.read_files


def test_files_that_are_gone_leave_the_read_list_and_deleted_modified_files_are_marked():
    file_ops = reads_at(["kept.md", "gone.md"])
    for path in ("removed.py", "kept.py"):
        extract_file_ops_from_message(
            assistant_message(tool_call("write", path=path), timestamp=9000), file_ops
        )
    existing = {"kept.md", "kept.py"}
    lists = summary_file_lists(file_ops, existing.__contains__)
    assert lists.read_files == ["kept.md"]
    assert lists.modified_files == ["kept.py", "removed.py"]  # still modified, for the record
    assert lists.deleted_files == {"removed.py"}
    assert "<modified-files>\nkept.py\nremoved.py (deleted)\n</modified-files>" in (
        format_bounded_file_operations(lists, 50)
    )


def test_carried_over_paths_are_older_than_anything_new_and_keep_their_order():
    file_ops = FileOps()
    add_details_file_lists({"readFiles": ["newer.md", "older.md"], "modifiedFiles": []}, file_ops)
    extract_file_ops_from_message(
        assistant_message(tool_call("read", path="fresh.md"), timestamp=0), file_ops
    )
    assert summary_file_lists(file_ops).read_files == ["fresh.md", "newer.md", "older.md"]


def test_editor_records_are_placed_by_their_time():
    file_ops = reads_at(["a.py", "b.py"])  # at 1000 and 2000
    merged = with_editor_file_ops(file_ops, [EditorFileOps(["opened.md"], ["saved.py"], 1500)])
    lists = summary_file_lists(merged)
    assert lists.read_files == ["b.py", "opened.md", "a.py"]
    assert lists.modified_files == ["saved.py"]
    assert "opened.md" not in file_ops.last_touched  # the plan's own record is left as it was
