"""read, write and edit: disk, the editor bridge (unsaved text, undoable edits), limits, errors."""

from __future__ import annotations

import asyncio
import base64
import struct
from pathlib import Path

import pytest

from pi_lsp.tools import ToolContext, default_tools, tools_by_name
from pi_lsp.tools.edit_diff import apply_edits, generate_diff_string, generate_unified_patch
from tests.builders import tiny_png


class FakeEditor:
    """Serves unsaved text for 'open' documents and records apply_edit calls."""

    def __init__(self, documents: dict[Path, str] | None = None, accept: bool = True) -> None:
        self.documents = dict(documents or {})
        self.accept = accept
        self.calls: list[tuple[Path, str]] = []

    def open_document_text(self, path: Path) -> str | None:
        return self.documents.get(path)

    async def apply_edit(self, path: Path, new_text: str) -> bool:
        self.calls.append((path, new_text))
        if not self.accept or path not in self.documents:
            return False
        self.documents[path] = new_text
        return True


@pytest.fixture
def tools():
    return tools_by_name(default_tools())


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


# ---------------------------------------------------------------------------- read


async def test_read_whole_file_relative_to_cwd(tools, ctx, tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("one\ntwo\nthree\n")
    result = await tools["read"].execute({"path": "src/a.py"}, ctx)
    assert not result.is_error
    assert result.content == [{"type": "text", "text": "one\ntwo\nthree\n"}]
    assert result.details["startLine"] == 1 and result.details["source"] == "disk"
    assert result.details["path"] == str(tmp_path / "src" / "a.py")


async def test_read_offset_and_limit_with_continuation_note(tools, ctx, tmp_path: Path):
    (tmp_path / "f.txt").write_text("\n".join(f"L{i}" for i in range(1, 21)))
    result = await tools["read"].execute({"path": "f.txt", "offset": 5, "limit": 3}, ctx)
    assert result.text == "L5\nL6\nL7\n\n[13 more lines in the file. Use offset=8 to continue.]"
    assert (result.details["startLine"], result.details["endLine"]) == (5, 7)
    result = await tools["read"].execute({"path": "f.txt", "offset": "18"}, ctx)
    assert result.text == "L18\nL19\nL20"
    result = await tools["read"].execute({"path": "f.txt", "offset": 21}, ctx)
    assert result.is_error and "past the end of the file (20 lines" in result.text


async def test_read_truncates_at_2000_lines_and_says_where_to_continue(tools, ctx, tmp_path: Path):
    (tmp_path / "big.txt").write_text("\n".join(str(i) for i in range(1, 2501)))
    result = await tools["read"].execute({"path": "big.txt"}, ctx)
    body, note = result.text.rsplit("\n\n", 1)
    assert body.split("\n")[-1] == "2000"
    assert note == "[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"
    assert result.details["truncation"]["truncatedBy"] == "lines"
    assert "content" not in result.details["truncation"]
    result = await tools["read"].execute({"path": "big.txt", "offset": 2001}, ctx)
    assert result.text.startswith("2001\n") and result.text.endswith("2500")


async def test_read_truncates_at_50kb(tools, ctx, tmp_path: Path):
    (tmp_path / "wide.txt").write_text("\n".join("x" * 999 for _ in range(100)))
    result = await tools["read"].execute({"path": "wide.txt"}, ctx)
    assert result.text.endswith(
        "[Showing lines 1-51 of 100 (50.0KB limit). Use offset=52 to continue.]"
    )
    (tmp_path / "oneline.txt").write_text("y" * 60_000 + "\nshort")
    result = await tools["read"].execute({"path": "oneline.txt"}, ctx)
    assert result.text.startswith("[Line 1 is 58.6KB, more than the 50.0KB limit.")
    assert "sed -n '1p' oneline.txt | head -c 51200" in result.text


async def test_read_errors(tools, ctx, tmp_path: Path):
    result = await tools["read"].execute({"path": "nope.txt"}, ctx)
    assert result.is_error and result.text == "File not found: nope.txt"
    (tmp_path / "d").mkdir()
    result = await tools["read"].execute({"path": "d"}, ctx)
    assert result.is_error and "is a directory" in result.text
    result = await tools["read"].execute({"path": "x", "limit": 0}, ctx)
    assert result.is_error and "limit" in result.text
    result = await tools["read"].execute({"path": "x", "offset": 1.5}, ctx)
    assert result.is_error and "offset" in result.text


async def test_read_expands_home(tools, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "notes.md").write_text("hello")
    result = await tools["read"].execute(
        {"path": "~/notes.md"}, ToolContext(cwd=tmp_path / "elsewhere")
    )
    assert result.text == "hello"


@pytest.mark.parametrize(
    ("name", "data", "mime"),
    [
        ("pic.png", tiny_png(), "image/png"),
        ("photo.jpg", b"\xff\xd8\xff\xe0" + b"\0" * 20, "image/jpeg"),
        ("anim.gif", b"GIF89a" + b"\0" * 20, "image/gif"),
        ("img.webp", b"RIFF\x10\0\0\0WEBPVP8 " + b"\0" * 10, "image/webp"),
        ("named-wrong.txt", tiny_png(), "image/png"),  # detected by content, not by name
    ],
)
async def test_read_images_as_image_blocks(tools, ctx, tmp_path: Path, name, data, mime):
    (tmp_path / name).write_bytes(data)
    result = await tools["read"].execute({"path": name}, ctx)
    assert not result.is_error
    assert result.content[0] == {"type": "text", "text": f"Read image file [{mime}]"}
    assert result.content[1] == {
        "type": "image",
        "data": base64.b64encode(data).decode(),
        "mimeType": mime,
    }


async def test_read_bmp_is_described_not_attached(tools, ctx, tmp_path: Path):
    bmp = (
        b"BM"
        + struct.pack("<IHHI", 58, 0, 0, 54)
        + struct.pack("<IiiHH", 40, 1, 1, 1, 24)
        + b"\0" * 28
    )
    (tmp_path / "a.bmp").write_bytes(bmp)
    result = await tools["read"].execute({"path": "a.bmp"}, ctx)
    assert [block["type"] for block in result.content] == ["text"]
    assert result.text.startswith("Read image file [image/bmp]")


async def test_read_prefers_the_editors_unsaved_text(tools, tmp_path: Path):
    path = tmp_path / "open.py"
    path.write_text("on disk\n")
    editor = FakeEditor({path: "unsaved 1\nunsaved 2\n", tmp_path / "new.py": "never saved"})
    context = ToolContext(cwd=tmp_path, editor=editor)
    result = await tools["read"].execute({"path": "open.py", "offset": 2}, context)
    assert result.text == "unsaved 2\n"
    assert result.details["source"] == "editor"
    result = await tools["read"].execute({"path": str(tmp_path / "new.py")}, context)
    assert result.text == "never saved"


# ---------------------------------------------------------------------------- write


async def test_write_creates_parent_folders(tools, ctx, tmp_path: Path):
    result = await tools["write"].execute({"path": "deep/er/f.txt", "content": "héllo\n"}, ctx)
    assert not result.is_error
    assert (tmp_path / "deep" / "er" / "f.txt").read_bytes() == "héllo\n".encode()
    assert result.text == "Wrote 7 bytes to deep/er/f.txt"
    assert result.details == {
        "path": str(tmp_path / "deep" / "er" / "f.txt"),
        "bytes": 7,
        "created": True,
        "viaEditor": False,
    }
    result = await tools["write"].execute({"path": "deep/er/f.txt", "content": "a\r\nb"}, ctx)
    assert (tmp_path / "deep" / "er" / "f.txt").read_bytes() == b"a\r\nb"  # written as given
    assert result.details["created"] is False


async def test_write_to_an_open_document_goes_through_the_editor(tools, tmp_path: Path):
    path = tmp_path / "open.txt"
    path.write_text("disk")
    editor = FakeEditor({path: "unsaved"})
    result = await tools["write"].execute(
        {"path": "open.txt", "content": "new"}, ToolContext(cwd=tmp_path, editor=editor)
    )
    assert editor.calls == [(path, "new")]
    assert editor.documents[path] == "new"
    assert path.read_text() == "disk"  # the editor owns the change (undoable there)
    assert result.details["viaEditor"] is True and "through the editor" in result.text


async def test_write_falls_back_to_disk_when_the_editor_refuses(tools, tmp_path: Path):
    path = tmp_path / "open.txt"
    path.write_text("disk")
    editor = FakeEditor({path: "unsaved"}, accept=False)
    result = await tools["write"].execute(
        {"path": "open.txt", "content": "new"}, ToolContext(cwd=tmp_path, editor=editor)
    )
    assert editor.calls == [(path, "new")]
    assert path.read_text() == "new"
    assert result.details["viaEditor"] is False


async def test_write_errors(tools, ctx, tmp_path: Path):
    (tmp_path / "d").mkdir()
    result = await tools["write"].execute({"path": "d", "content": "x"}, ctx)
    assert result.is_error and "is a directory" in result.text
    result = await tools["write"].execute({"path": "f"}, ctx)
    assert result.is_error and "content: required but missing" in result.text


# ---------------------------------------------------------------------------- edit


async def test_edit_several_blocks_with_diff_and_patch(tools, ctx, tmp_path: Path):
    path = tmp_path / "m.py"
    path.write_text("def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    result = await tools["edit"].execute(
        {
            "path": "m.py",
            "edits": [
                {"oldText": "return 2", "newText": "return 20"},
                {"oldText": "return 1", "newText": "return 10"},
            ],
        },
        ctx,
    )
    assert not result.is_error, result.text
    assert path.read_text() == "def a():\n    return 10\n\n\ndef b():\n    return 20\n"
    assert result.text == "Replaced 2 blocks in m.py."
    assert result.details["firstChangedLine"] == 2
    assert "-2     return 1\n+2     return 10" in result.details["diff"]
    patch = result.details["patch"]
    assert patch.startswith("--- m.py\n+++ m.py\n@@ -1,6 +1,6 @@\n")
    assert "-    return 1\n+    return 10\n" in patch


async def test_edit_not_found_names_the_edit_and_hints(tools, ctx, tmp_path: Path):
    (tmp_path / "f.txt").write_text("alpha\nbeta\n")
    result = await tools["edit"].execute(
        {"path": "f.txt", "edits": [{"oldText": "gamma", "newText": "x"}]}, ctx
    )
    assert result.is_error
    assert result.text.startswith("Could not find the text to replace in f.txt.")
    assert "exactly" in result.text and "read the file again" in result.text
    result = await tools["edit"].execute(
        {
            "path": "f.txt",
            "edits": [{"oldText": "alpha", "newText": "A"}, {"oldText": "gamma", "newText": "x"}],
        },
        ctx,
    )
    assert result.is_error and result.text.startswith("Could not find edits[1] in f.txt.")
    assert (tmp_path / "f.txt").read_text() == "alpha\nbeta\n"  # nothing applied


async def test_edit_ambiguous_overlapping_empty_and_unchanged(tools, ctx, tmp_path: Path):
    (tmp_path / "f.txt").write_text("x = 1\nx = 1\ny = 2\n")
    run = tools["edit"].execute
    result = await run({"path": "f.txt", "edits": [{"oldText": "x = 1", "newText": "x = 3"}]}, ctx)
    assert result.is_error and "Found 2 occurrences of the text to replace in f.txt" in result.text
    result = await run(
        {
            "path": "f.txt",
            "edits": [{"oldText": "1\ny", "newText": "a"}, {"oldText": "y = 2", "newText": "b"}],
        },
        ctx,
    )
    assert result.is_error and "edits[0] and edits[1] overlap in f.txt" in result.text
    result = await run({"path": "f.txt", "edits": [{"oldText": "", "newText": "b"}]}, ctx)
    assert result.is_error and "oldText is empty" in result.text
    result = await run({"path": "f.txt", "edits": [{"oldText": "y = 2", "newText": "y = 2"}]}, ctx)
    assert result.is_error and result.text.startswith("No changes made to f.txt")
    result = await run({"path": "f.txt", "edits": []}, ctx)
    assert result.is_error and "at least one" in result.text
    result = await run({"path": "missing.txt", "edits": [{"oldText": "a", "newText": "b"}]}, ctx)
    assert result.is_error and result.text == "Could not edit missing.txt: the file does not exist."


async def test_edit_keeps_crlf_and_bom(tools, ctx, tmp_path: Path):
    path = tmp_path / "win.txt"
    path.write_bytes("\ufeffone\r\ntwo\r\nthree\r\n".encode())
    result = await tools["edit"].execute(
        {"path": "win.txt", "edits": [{"oldText": "one\ntwo", "newText": "1\n2"}]}, ctx
    )
    assert not result.is_error, result.text
    assert path.read_bytes() == "\ufeff1\r\n2\r\nthree\r\n".encode()


async def test_edit_fuzzy_match_rewrites_only_touched_lines(tools, ctx, tmp_path: Path):
    path = tmp_path / "q.py"
    path.write_text("keep = \u201csmart\u201d   \nmsg = \u2018hi\u2019  \nend\n")
    result = await tools["edit"].execute(
        {"path": "q.py", "edits": [{"oldText": "msg = 'hi'", "newText": "msg = 'bye'"}]}, ctx
    )
    assert not result.is_error, result.text
    assert path.read_text() == "keep = \u201csmart\u201d   \nmsg = 'bye'\nend\n"


async def test_edit_accepts_json_string_and_legacy_arguments(tools, ctx, tmp_path: Path):
    path = tmp_path / "f.txt"
    path.write_text("a b c")
    result = await tools["edit"].execute(
        {"path": "f.txt", "edits": '[{"oldText": "a", "newText": "A"}]'}, ctx
    )
    assert not result.is_error
    result = await tools["edit"].execute({"path": "f.txt", "oldText": "b", "newText": "B"}, ctx)
    assert not result.is_error
    assert path.read_text() == "A B c"


async def test_edit_works_on_unsaved_editor_text_and_applies_through_the_editor(
    tools, tmp_path: Path
):
    path = tmp_path / "open.py"
    path.write_text("old disk text\n")
    editor = FakeEditor({path: "value = 1  # unsaved\n"})
    context = ToolContext(cwd=tmp_path, editor=editor)
    result = await tools["edit"].execute(
        {"path": "open.py", "edits": [{"oldText": "value = 1", "newText": "value = 2"}]}, context
    )
    assert not result.is_error, result.text
    assert editor.calls == [(path, "value = 2  # unsaved\n")]
    assert path.read_text() == "old disk text\n"
    assert result.details["viaEditor"] and result.details["source"] == "editor"
    # text only on disk is not found: the editor's text is the truth
    result = await tools["edit"].execute(
        {"path": "open.py", "edits": [{"oldText": "old disk", "newText": "x"}]}, context
    )
    assert result.is_error


async def test_edits_on_one_file_are_serialized(tools, ctx, tmp_path: Path):
    path = tmp_path / "f.txt"
    path.write_text("one two three four\n")
    words = ["one", "two", "three", "four"]
    results = await asyncio.gather(
        *(
            tools["edit"].execute(
                {"path": "f.txt", "edits": [{"oldText": w, "newText": w.upper()}]}, ctx
            )
            for w in words
        )
    )
    assert not any(r.is_error for r in results)
    assert path.read_text() == "ONE TWO THREE FOUR\n"


def test_display_diff_elides_long_unchanged_stretches():
    old = "\n".join(f"l{i}" for i in range(1, 31)) + "\n"
    new = old.replace("l3\n", "L3\n").replace("l25\n", "L25\n")
    diff, first = generate_diff_string(old, new)
    lines = diff.split("\n")
    assert first == 3
    assert lines[:4] == ["  1 l1", "  2 l2", "- 3 l3", "+ 3 L3"]
    assert lines[4:9] == ["  4 l4", "  5 l5", "  6 l6", "  7 l7", "    ..."]
    assert lines[9:15] == [" 21 l21", " 22 l22", " 23 l23", " 24 l24", "-25 l25", "+25 L25"]
    assert lines[-2:] == [" 29 l29", "    ..."]


def test_unified_patch_marks_missing_final_newline():
    patch = generate_unified_patch("f", "a\nb", "a\nc")
    assert (
        patch == "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline "
        "at end of file\n+c\n\\ No newline at end of file\n"
    )


def test_apply_edits_against_the_original_not_incrementally():
    # the second edit's oldText only exists in the original, not after the first edit
    assert apply_edits("ab", [("a", "b"), ("b", "c")], "f") == "bc"
