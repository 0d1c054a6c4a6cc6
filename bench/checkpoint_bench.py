"""File-checkpoint benchmark: restoring the files of 200 changed files of 20 KB each.

One turn of the agent (answered by the in-process model double, so no model time counts)
rewrites 200 text files of 20 KB each with ``write``; the benchmark then navigates back to the
prompt before that turn with ``restoreFiles`` and forward again, and prints:

- the ``pi/fileChanges`` preview (200 unified diffs) and the navigation with ``restoreFiles``
  when the edit goes to an editor that accepts it at once (the server's own time: reading the
  current contents, the conflict checks, the blobs, building the one workspace edit, the ledger),
- the same navigation writing the disk itself (no editor connected),
- the size of the checkpoint store for that session, and the bytes of the files it covers.

pi has no file checkpoints, so there is no pi figure to set against these. Prints figures,
asserts nothing; ``--files`` and ``--size`` change the workload, ``--repeat`` the repetitions
(the median is printed).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout, however the package is installed

from pi_lsp.agent.resource_service import ResourceService
from pi_lsp.config import load_config
from pi_lsp.llm.double import ModelDouble, replies
from pi_lsp.services import Services
from pi_lsp.tools.base import AppliedEdits, FileEdit

OPTIONS = {"model": "openai/double", "contextWindow": 10_000_000, "tokenizer": "chars4"}


class AcceptingEditor:
    """An editor that accepts every workspace edit at once (its own work is not measured)."""

    def open_document_text(self, path: Path) -> str | None:
        return None

    async def apply_edit(self, path: Path, new_text: str) -> bool:
        return False

    async def apply_file_edits(self, edits: Sequence[FileEdit], label: str) -> AppliedEdits:
        self.last_edit_files = len(edits)
        return AppliedEdits(True)


def services_for(workspace: Path, editor) -> Services:
    resources = ResourceService(workspace, workspace / ".agent-dir", trusted=True)
    config = load_config(
        workspace, OPTIONS, pi_settings=resources.snapshot.settings.settings.merged
    )
    return Services.create(config, resources, lambda _: None, client=ModelDouble(), editor=editor)


WORDS = ["def", "return", "self", "value", "index", "items", "count", "result", "path", "if"]


def file_text(index: int, size: int, version: str) -> str:
    """Code-like text that compresses about as well as code does (not one repeated line)."""
    chooser = random.Random(f"{index}-{version}")
    lines, total = [], 0
    while total < size:
        words = chooser.choices(WORDS, k=chooser.randint(3, 9))
        line = "    " * chooser.randint(0, 3) + " ".join(words) + f"_{chooser.randrange(10_000)}\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)[:size]


async def one_session(workspace: Path, files: int, size: int, editor) -> dict[str, float]:
    for index in range(files):
        (workspace / "src" / f"f{index:04d}.py").write_text(file_text(index, size, "old"))
    services = services_for(workspace, editor)
    runtime = services.sessions.current()
    calls = [
        (f"c{index}", "write", {"path": name, "content": file_text(index, size, "new")})
        for index, name in enumerate(f"src/f{index:04d}.py" for index in range(files))
    ]
    services.agent.client.script(replies.tool_calls(calls), replies.text("Rewrote them all."))
    started = time.perf_counter()
    await services.agent.prompt(runtime, "rewrite every file", [], None)
    turn_ms = (time.perf_counter() - started) * 1000
    user = next(e.id for e in runtime.session.branch() if e.type == "message")
    leaf = runtime.session.leaf_id
    navigator = services.navigator

    started = time.perf_counter()
    preview = await navigator.file_changes(runtime, user)
    preview_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    back = await navigator.navigate(runtime, user, restore_files=True)
    back_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    forward = await navigator.navigate(runtime, leaf, restore_files=True)
    forward_ms = (time.perf_counter() - started) * 1000
    assert len(preview.files) == len(back.files) == len(forward.files) == files
    assert {file.action for file in back.files} == {"restored"}, back.files[:3]
    store = services.agent.checkpoint_recorder.store_for(runtime)
    store_bytes = sum(path.stat().st_size for path in store.root.rglob("*") if path.is_file())
    return {
        "turn": turn_ms,
        "preview": preview_ms,
        "back": back_ms,
        "forward": forward_ms,
        "store": store_bytes,
    }


async def measure(files: int, size: int, repeat: int, editor_factory) -> dict[str, float]:
    runs = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="pi-lsp-checkpoint-bench-") as folder:
            workspace = Path(folder)
            (workspace / "src").mkdir()
            runs.append(await one_session(workspace, files, size, editor_factory()))
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--size", type=int, default=20_000, help="bytes per file")
    parser.add_argument("--repeat", type=int, default=5)
    arguments = parser.parse_args()
    files, size = arguments.files, arguments.size
    print(f"{files} files of {size / 1000:g} KB changed in one turn; median of {arguments.repeat}")
    editor = asyncio.run(measure(files, size, arguments.repeat, AcceptingEditor))
    disk = asyncio.run(measure(files, size, arguments.repeat, lambda: None))
    print(f"  pi/fileChanges preview (200 diffs)           {editor['preview']:8.1f} ms")
    print(f"  navigate back, restoreFiles (editor applies) {editor['back']:8.1f} ms")
    print(f"  navigate forward, restoreFiles (editor)      {editor['forward']:8.1f} ms")
    print(f"  navigate back, restoreFiles (disk writes)    {disk['back']:8.1f} ms")
    print(f"  navigate forward, restoreFiles (disk)        {disk['forward']:8.1f} ms")
    print(f"  the turn itself (200 writes recorded)        {disk['turn']:8.1f} ms")
    covered = 2 * files * size
    print(
        f"  checkpoint store: {editor['store'] / 1e6:.2f} MB on disk for {covered / 1e6:.1f} MB "
        f"of file contents (before and after), zlib-compressed, content-addressed"
    )


if __name__ == "__main__":
    main()
