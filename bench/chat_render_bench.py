"""What a long session costs the VS Code chat webview: opening a session of 2,000 messages in a
real VS Code (code-server, driven by Chromium through playwright-core) and scrolling through it.

The session is a realistic conversation written the way pi writes one: turns of a prompt naming a
file, an answer with thinking and a ``read`` call, the file's text as the tool result, and an
answer in markdown with a highlighted code block. The chat loads the tail (``pi/messages``, 100
entries), then each earlier page as the user scrolls to the top, until all 2,000 are in the view;
then it is scrolled from the top to the bottom by the mouse wheel.

Printed (``bench/chat_render.mjs`` measures inside the webview, with its own clock):
- first render: from choosing the session in "Resume Session…" to the last message painted;
- all pages: from the first scroll to the top to all 2,000 messages in the view, and the webview's
  long tasks (over 50 ms) meanwhile;
- scroll: the frame times while wheeling through the whole transcript (median, 95th percentile,
  worst) and the long tasks.

``--ref main`` measures the extension of another commit (its ``editors/vscode`` exported from git
and built with this checkout's packages), for the before/after figures in docs/performance.md.
pi has no webview, so there is no pi ratio here.

    python bench/chat_render_bench.py [--ref main] [--messages 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pi_lsp.session import entries as build
from pi_lsp.session.js_json import dumps
from pi_lsp.session.timestamps import epoch_ms_to_iso
from tests.editors.vscode.test_vscode import (
    EXTENSION,
    Processes,
    _hermetic_environment,
    _start_code_server,
    _start_scripted_llm,
    _user_settings,
    _workspace,
)

SESSION_NAME = "Render bench"
CODE = "\n".join(f"def step_{index}(value):\n    return value + {index}\n" for index in range(12))
PACKAGE = [
    "npx",
    "vsce",
    "package",
    "--no-dependencies",
    "--no-rewrite-relative-links",
    "--allow-missing-repository",
    "--skip-license",
    "--allow-package-all-secrets",
]


def _turn(turn: int, clock: int) -> list[dict]:
    """One turn of four messages: prompt, a read call, its result, the answer."""
    path = f"src/module_{turn % 20}.py"
    call = f"call_{turn:06d}"
    model = {"api": "openai-completions", "provider": "openai", "model": "scripted"}
    answer = (
        f"Turn {turn}: `step_3` in `{path}` adds **3**; the fix:\n\n"
        f"```python\ndef step_3(value):\n    return value + 3  # turn {turn}\n```\n\n"
        "- keep the other steps\n- run the tests again"
    )
    return [
        {
            "role": "user",
            "content": [{"type": "text", "text": f"Turn {turn}: what does {path}:4 do?"}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": f"Reading {path} first. " * 8},
                {"type": "toolCall", "id": call, "name": "read", "arguments": {"path": path}},
            ],
            "stopReason": "toolUse",
            **model,
        },
        {
            "role": "toolResult",
            "toolCallId": call,
            "toolName": "read",
            "content": [{"type": "text", "text": CODE}],
            "isError": False,
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": answer}],
            "stopReason": "stop",
            **model,
        },
    ]


def write_session(path: Path, cwd: Path, messages: int) -> None:
    clock = 1_767_225_600_000
    used: set[str] = set()
    lines = [dumps(build.header("render-bench", epoch_ms_to_iso(clock), str(cwd)))]
    info_id = build.new_entry_id(used)
    used.add(info_id)
    lines.append(dumps(build.session_info(info_id, None, epoch_ms_to_iso(clock), SESSION_NAME)))
    parent = info_id
    for turn in range(messages // 4):
        for message in _turn(turn, clock):
            clock += 1000
            entry_id = build.new_entry_id(used)
            used.add(entry_id)
            lines.append(
                dumps(
                    build.message(
                        entry_id, parent, epoch_ms_to_iso(clock), message | {"timestamp": clock}
                    )
                )
            )
            parent = entry_id
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def _export(ref: str, into: Path) -> Path:
    """The extension folder of `ref`, with this checkout's packages."""
    archive = subprocess.run(
        ["git", "archive", ref, "editors/vscode"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    folder = into / "editors" / "vscode"
    (folder / "node_modules").symlink_to(EXTENSION / "node_modules")
    return folder


def package(extension: Path, output: Path) -> Path:
    """A .vsix without the bundled server (the settings point at this checkout's pi-lsp)."""
    subprocess.run([*PACKAGE, "-o", str(output)], cwd=extension, check=True, capture_output=True)
    return output


def measure(vsix: Path, root: Path, messages: int) -> dict:
    environment = _hermetic_environment(root / "home")
    workspace = _workspace(root)
    for index in range(20):
        module = workspace / "src" / f"module_{index}.py"
        module.parent.mkdir(exist_ok=True)
        module.write_text(CODE)
    processes = Processes()
    logs = root / "logs"
    logs.mkdir()
    try:
        llm = _start_scripted_llm(processes, root, environment, logs)
        _user_settings(root / "user-data", f"{llm}/v1")
        url = _start_code_server(processes, root, workspace, environment, vsix, logs)
        # The driver copies it into the sessions once the server runs (it opens the newest).
        session = root / "2026-01-01T00-00-00-000Z_render.jsonl"
        write_session(session, workspace, messages)
        driver = subprocess.run(
            ["node", str(ROOT / "bench" / "chat_render.mjs")],
            cwd=EXTENSION,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
            env={
                **_hermetic_environment(root / "chromium-home"),
                "PI_BENCH_URL": url,
                "PI_BENCH_SESSION": str(session),
                "PI_BENCH_SESSION_NAME": SESSION_NAME,
                "PI_BENCH_WORKSPACE": str(workspace),
                "PI_BENCH_MESSAGES": str(messages),
                "PI_BENCH_ARTIFACTS": str(logs),
            },
        )
    finally:
        processes.stop_all()
    lines = [line for line in driver.stdout.splitlines() if line.startswith("{")]
    if driver.returncode != 0 or not lines:
        raise SystemExit(
            f"chat_render.mjs failed:\n{driver.stdout[-3000:]}\n{driver.stderr[-3000:]}"
        )
    return json.loads(lines[-1])


def _print(label: str, figures: dict) -> None:
    scroll, pages = figures["scroll"], figures["pages"]
    print(f"{label}:")
    print(
        f"  first render (tail of {figures['tailItems']} items): {figures['firstRenderMs']:.0f} ms"
    )
    print(
        f"  all {figures['items']} items loaded: {pages['ms']:.0f} ms over {pages['loads']} pages; "
        f"long tasks {pages['longTasks']} ({pages['longTaskMs']:.0f} ms, "
        f"worst {pages['worstLongTaskMs']:.0f} ms)"
    )
    print(
        f"  scroll through: {scroll['frames']} frames, median {scroll['medianMs']:.1f} ms, "
        f"p95 {scroll['p95Ms']:.1f} ms, worst {scroll['worstMs']:.1f} ms; long tasks "
        f"{scroll['longTasks']} ({scroll['longTaskMs']:.0f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ref", help="measure the extension of this git ref instead of the checkout"
    )
    parser.add_argument("--messages", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="chat-render-") as scratch:
        root = Path(scratch)
        extension = _export(args.ref, root / "source") if args.ref else EXTENSION
        vsix = package(extension, root / "pi-lsp.vsix")
        (root / "run").mkdir()
        figures = measure(vsix, root / "run", args.messages)
    _print(args.ref or "this checkout", figures)
    if os.environ.get("PI_BENCH_JSON"):
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
