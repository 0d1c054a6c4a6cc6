"""Tools over a client that reads and writes every file (``ClientFileSystem``, ACP's ``fs/*``):
reads see its text, writes go through it, and a client that cannot falls back to the disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_lsp.tools import ToolContext, default_tools, tools_by_name
from pi_lsp.tools.base import ClientFileSystem, NoEditor


class FakeClientFiles(NoEditor):
    """Buffers by path; ``available=False`` is a client that refuses every call."""

    def __init__(self, buffers: dict[Path, str], available: bool = True) -> None:
        self.buffers = buffers
        self.available = available
        self.writes: list[Path] = []

    async def read_text(self, path: Path) -> str | None:
        return self.buffers.get(path) if self.available else None

    async def write_text(self, path: Path, text: str) -> bool:
        if not self.available:
            return False
        self.writes.append(path)
        self.buffers[path] = text
        return True


@pytest.fixture
def tools():
    return tools_by_name(default_tools())


async def test_read_and_edit_go_through_the_client(tools, tmp_path: Path):
    app = tmp_path / "app.py"
    app.write_text("x = 1\n")
    client = FakeClientFiles({app: "x = 2  # unsaved\n"})
    assert isinstance(client, ClientFileSystem)
    context = ToolContext(cwd=tmp_path, editor=client)
    read = await tools["read"].execute({"path": "app.py"}, context)
    assert read.content[0]["text"] == "x = 2  # unsaved\n"
    assert read.details["source"] == "editor"
    edit = {"path": "app.py", "edits": [{"oldText": "x = 2", "newText": "x = 3"}]}
    result = await tools["edit"].execute(edit, context)
    assert not result.is_error
    assert client.buffers[app] == "x = 3  # unsaved\n"
    assert client.writes == [app]
    assert app.read_text() == "x = 1\n"  # the client owns the file now


async def test_a_client_that_cannot_leaves_the_tools_to_the_disk(tools, tmp_path: Path):
    app = tmp_path / "app.py"
    app.write_text("x = 1\n")
    context = ToolContext(cwd=tmp_path, editor=FakeClientFiles({}, available=False))
    read = await tools["read"].execute({"path": "app.py"}, context)
    assert read.details["source"] == "disk"
    await tools["write"].execute({"path": "new.txt", "content": "hi\n"}, context)
    assert (tmp_path / "new.txt").read_text() == "hi\n"
