"""``pi-lsp demo``: a complete pi-lsp story through the real server, printed as a transcript.

Responsible for the whole demo: writing a small project with a bug, starting ``python -m pi_lsp``
over stdio with pi-lsp's own client (``pi_lsp.client``), choosing the model (a scripted
OpenAI-compatible server on 127.0.0.1 playing the story, unless ``PI_LSP_MODEL`` or ``--model``
names a real one), and running the story an editor would run: a prompt the model answers with
``read`` and ``edit`` tool calls, a second prompt, the session tree, a navigation back to the first
answer and a fork there. It prints what happens and, at the end, where the workspace and the
session file are.

Only the argument parser is built at import time: every ``pi-lsp`` command imports this module to
build its command line, and must not pay for asyncio, the client, aiohttp or the scripted server.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import attrs

from pi_lsp.errors import PiError

if TYPE_CHECKING:
    from pi_lsp.client import PiClient

DEFAULT_DIRECTORY_NAME = "pi-lsp-demo"
SESSION_NAME = "pi-lsp demo"
SCRIPTED_MODEL = "openai/scripted"
SCRIPTED_TIMEOUT_SECONDS = 60.0
REAL_MODEL_TIMEOUT_SECONDS = 600.0
RESULT_LINE_LENGTH = 72

BUGGY_CALC = '''"""A tiny calculator module for the pi-lsp demo."""


def total(numbers):
    """The sum of numbers."""
    return sum(numbers)


def average(numbers):
    """The arithmetic mean of a non-empty list of numbers."""
    return total(numbers) / (len(numbers) + 1)
'''
AGENTS_MD = """# pi-lsp demo project

Keep changes minimal and answer in one or two sentences.
"""
BUGGY_LINE = "return total(numbers) / (len(numbers) + 1)"
FIXED_LINE = "return total(numbers) / len(numbers)"

FIRST_PROMPT = (
    "average() in calc.py returns wrong numbers. Read calc.py, fix the bug with the edit tool, "
    "and tell me in one sentence what was wrong."
)
SECOND_PROMPT = "Write a one-line pytest assertion that would have caught that bug."
FIRST_ANSWER = (
    "average() divided the total by len(numbers) + 1 instead of len(numbers), so every mean "
    "came out too small; it now divides by the number of items."
)
SECOND_ANSWER = "`assert average([2, 4, 6]) == 4` (the buggy version returned 3.0)."


class DemoError(PiError):
    """The demo could not run its story; the message says which step failed and why."""


def add_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "demo",
        help="run a complete pi-lsp story through the real server and print it",
        description=(
            "Create a small project with a bug in DIR, start the pi-lsp server over stdio and run "
            "a story through it: a prompt the model answers with read and edit tool calls, a "
            "second prompt, the session tree, a navigation back to the first answer and a fork "
            "there. Uses a scripted local model unless PI_LSP_MODEL or --model names a real one."
        ),
    )
    parser.add_argument(
        "directory",
        nargs="?",
        metavar="DIR",
        type=Path,
        help=f"the demo workspace (default: ./{DEFAULT_DIRECTORY_NAME}; must be empty or new)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="run in DIR even if it is not empty, keeping its files and earlier sessions "
        "(calc.py and AGENTS.md are rewritten)",
    )
    parser.add_argument(
        "--model", help="a litellm model string to use instead of the scripted model"
    )
    parser.set_defaults(handler=run_demo)


def run_demo(arguments: argparse.Namespace) -> int:
    """The ``demo`` command: prepare the workspace, run the story, report where its files are."""
    _tolerate_unencodable_output()
    workspace = prepare_workspace(
        arguments.directory or Path.cwd() / DEFAULT_DIRECTORY_NAME, keep=arguments.keep
    )
    model = _requested_model(arguments.model)
    import asyncio

    try:
        asyncio.run(_run_story(workspace, model))
    except PiError:
        raise
    except Exception as error:  # noqa: BLE001 — a demo ends with one line, whatever went wrong
        raise DemoError(f"demo failed: {_describe(error)}") from None
    return 0


def prepare_workspace(directory: Path, *, keep: bool) -> Path:
    """Write the buggy project into ``directory``, refusing to mix it into a non-empty folder."""
    workspace = directory.expanduser().resolve()
    if workspace.exists() and not workspace.is_dir():
        raise DemoError(f"{workspace} exists and is not a directory")
    if workspace.is_dir() and any(workspace.iterdir()) and not keep:
        raise DemoError(
            f"{workspace} is not empty; give an empty or "
            "new DIR, or pass --keep to run there anyway"
        )
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "calc.py").write_text(BUGGY_CALC, encoding="utf-8")
    (workspace / "AGENTS.md").write_text(AGENTS_MD, encoding="utf-8")
    return workspace


def _requested_model(option: str | None) -> str | None:
    """The real model to use, or ``None`` for the scripted one."""
    return (option or os.environ.get("PI_LSP_MODEL", "")).strip() or None


def _tolerate_unencodable_output() -> None:
    # Previews contain arrows and ellipses; a terminal
    # without UTF-8 should get "?" rather than a crash.
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")


def _describe(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "the server did not answer in time"
    return str(error) or type(error).__name__


# ---------------------------------------------------------------------------------------- the story


@attrs.define
class StoryState:
    """What later steps need from earlier ones."""

    session_id: str = ""
    session_path: str = ""
    first_answer_id: str = ""
    fork_path: str = ""


async def _run_story(workspace: Path, real_model: str | None) -> None:
    scripted = None
    try:
        if real_model is None:
            scripted = await _start_scripted_model()
            backend = _scripted_backend(scripted.base_url)
        else:
            backend = _real_backend(real_model)
        print(f"pi-lsp demo in {workspace}")
        print(f"model: {backend.description}")
        async with DemoClient(workspace, backend) as client:
            await _tell_story(client, workspace)
    finally:
        if scripted is not None:
            await scripted.stop()


async def _tell_story(client: DemoClient, workspace: Path) -> None:
    state = StoryState()
    new_session = await client.request("pi/newSession", {"name": SESSION_NAME})
    state.session_id, state.session_path = new_session["sessionId"], new_session["path"]
    _heading("1. prompt: the model reads calc.py, fixes it and answers")
    print(
        "(the server loads litellm in the background when it starts; the first answer waits for it)"
    )
    first = await client.prompt(FIRST_PROMPT)
    state.first_answer_id = first["leafId"]
    _heading("2. a second prompt")
    await client.prompt(SECOND_PROMPT)
    _heading("3. pi/tree")
    await _print_tree(client, state.session_id)
    _heading("4. pi/navigate back to the first answer")
    await _navigate_to_first_answer(client, state)
    _heading("5. pi/fork at the first answer")
    await _fork_at_first_answer(client, state)
    _print_summary(workspace, state)


async def _print_tree(client: DemoClient, session_id: str) -> None:
    document = await client.request("pi/tree", {"sessionId": session_id})
    print("  (* active path, @ leaf)")
    for line in render_tree(document):
        print("  " + line)


async def _navigate_to_first_answer(client: DemoClient, state: StoryState) -> None:
    result = await client.request(
        "pi/navigate", {"sessionId": state.session_id, "targetId": state.first_answer_id}
    )
    print(
        f"leaf is now {result['leafId']}, the first answer: "
        "a new prompt would start a branch from there;"
    )
    print("the second prompt and its answer stay in the file, off the active path.")
    await _print_tree(client, state.session_id)


async def _fork_at_first_answer(client: DemoClient, state: StoryState) -> None:
    fork = await client.request(
        "pi/fork", {"sessionId": state.session_id, "entryId": state.first_answer_id}
    )
    state.fork_path = fork["path"]
    print(f"new session {fork['sessionId']} (parent {fork['parentSessionId']})")
    print(f"file: {fork['path']}")
    print("it holds the path from the root to the first answer:")
    await _print_tree(client, fork["sessionId"])


def _print_summary(workspace: Path, state: StoryState) -> None:
    _heading("done")
    print(f"workspace:    {workspace}")
    print(f"session file: {state.session_path}")
    print(f"fork:         {state.fork_path}")
    print(f"open the session in pi:  cd {workspace} && pi --session {state.session_path}")


def _heading(title: str) -> None:
    print(f"\n== {title} ".ljust(72, "="))


# ------------------------------------------------------------------------------------ the tree view


def render_tree(document: dict[str, Any]) -> list[str]:
    """The lines of a ``pi/tree`` result, indented like pi's ``/tree``: one step per branch point.

    A chain of single children stays in one column (as in pi), so long sessions do not drift right.
    """
    entries = {entry["id"]: entry for entry in document["entries"]}
    children: dict[str, list[str]] = document["children"]
    active = set(document["activePath"])
    lines = []
    stack = [(root, 0) for root in reversed(document["roots"])]
    while stack:
        entry_id, indent = stack.pop()
        lines.append(
            _tree_line(
                entries[entry_id], indent, entry_id == document["leafId"], entry_id in active
            )
        )
        below = children.get(entry_id, [])
        child_indent = indent + 1 if len(below) > 1 else indent
        stack.extend((child, child_indent) for child in reversed(below))
    return lines


def _tree_line(entry: dict[str, Any], indent: int, is_leaf: bool, is_active: bool) -> str:
    marker = "@" if is_leaf else ("*" if is_active else " ")
    kind = entry.get("role") or entry["type"]
    label = f" [{entry['label']}]" if entry.get("label") else ""
    return f"{marker} {'  ' * indent}{entry['id']} {kind}{label}: {entry['preview']}"


# ------------------------------------------------------------------------------- the model backends


@attrs.frozen
class Backend:
    """Which model the server talks to: its ``initializationOptions`` and environment changes."""

    description: str
    options: dict[str, Any]
    environment: dict[str, str | None]
    timeout: float


def _scripted_backend(base_url: str) -> Backend:
    return Backend(
        description=(
            f"scripted (a local OpenAI-compatible server at {base_url} playing the story; "
            "set PI_LSP_MODEL or pass --model to use a real model)"
        ),
        options={"model": SCRIPTED_MODEL, "apiBase": base_url},
        # The scripted server must win over whatever model the user configured, and litellm must
        # not fetch its price list from the internet for a model that costs nothing.
        environment={
            "PI_LSP_MODEL": None,
            "PI_LSP_API_BASE": None,
            "PI_LSP_API_KEY": None,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        },
        timeout=SCRIPTED_TIMEOUT_SECONDS,
    )


def _real_backend(model: str) -> Backend:
    return Backend(
        description=f"{model} (a real model: the prompts are the demo's, the answers are its own)",
        options={"model": model},
        # PI_LSP_MODEL outranks the model setting in the server, so --model must go there too.
        environment={"PI_LSP_MODEL": model},
        timeout=REAL_MODEL_TIMEOUT_SECONDS,
    )


async def _start_scripted_model():
    from pi_lsp.scripted_llm import ScriptedLLM

    scripted = ScriptedLLM(_story_replies())
    await scripted.start()
    return scripted


def _story_replies() -> tuple:
    from pi_lsp.scripted_llm import replies

    fix = {"path": "calc.py", "edits": [{"oldText": BUGGY_LINE, "newText": FIXED_LINE}]}
    # A small delay between chunks, so the answers visibly stream in like a real model's.
    return (
        replies.tool_calls(
            [("call_read_calc", "read", {"path": "calc.py"})], text="Let me look at calc.py."
        ),
        replies.tool_calls(
            [("call_fix_average", "edit", fix)], text="The divisor is off by one; fixing it."
        ),
        replies.slow_text(FIRST_ANSWER, chunks=16, chunk_delay=0.03),
        replies.slow_text(SECOND_ANSWER, chunks=8, chunk_delay=0.03),
    )


# --------------------------------------------------------------------------------------- the client


class DemoClient:
    """pi-lsp's own client (``pi_lsp.client``) on ``python -m pi_lsp``, printing each turn's events
    as they arrive."""

    def __init__(self, workspace: Path, backend: Backend) -> None:
        self._workspace = workspace
        self._backend = backend
        self._client: PiClient | None = None
        self._printer = TurnPrinter()

    @property
    def _started(self) -> PiClient:
        if self._client is None:
            raise DemoError("the language client has not been started")
        return self._client

    async def __aenter__(self) -> Self:
        import logging

        from lsprotocol import types

        from pi_lsp.client import PiClient

        # pygls warns on stderr about things the demo does not care about.
        logging.getLogger("pygls").setLevel(logging.ERROR)
        self._client = client = PiClient("pi-lsp-demo", timeout=self._backend.timeout)
        client.events.listen(self._printer.on_event)
        client.feature(types.WINDOW_SHOW_MESSAGE)(
            lambda params: print(f"[server] {params.message}")
        )
        await client.start_server(env=_server_environment(self._backend))
        try:
            result = await client.initialize_workspace(self._workspace, self._backend.options)
        except BaseException:
            await self.__aexit__(*sys.exc_info())
            raise
        info = result.server_info
        print(
            f"server: {sys.executable} -m pi_lsp over stdio ({info.name} {info.version})"
            if info
            else "server: started"
        )
        return self

    async def __aexit__(self, exc_type, exc, traceback) -> None:
        # Asked before stopping: only a server that ended on its own explains the failure.
        reason = await self._started.exit_reason() if exc is not None else None
        await self._started.close()
        if reason:
            raise DemoError(reason) from None

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a ``pi/*`` request; its JSON result, or ``DemoError`` naming the method."""
        from pi_lsp.client import PiRequestError

        try:
            return await self._started.request(method, params)
        except (PiRequestError, TimeoutError) as error:
            raise DemoError(str(error)) from None

    async def prompt(self, text: str) -> dict[str, Any]:
        """Run a prompt, printing the streamed answer and the
        tool calls; fails unless the turn stops normally."""
        print(f"> {text}\n")
        self._printer.start()
        try:
            result = await self.request("pi/prompt", {"text": text})
        finally:
            self._printer.stop()
        if result["stopReason"] != "stop":
            reason = (
                result.get("errorMessage")
                or f"the turn ended with stopReason {result['stopReason']}"
            )
            raise DemoError(f"pi/prompt failed: {reason}")
        print(f"\n(turn ended: {result['stopReason']}, leaf {result['leafId']})")
        return result


def _server_environment(backend: Backend) -> dict[str, str]:
    environment = dict(os.environ)
    # The demo's sessions belong in its workspace, wherever the user keeps their own.
    environment.pop("PI_CODING_AGENT_SESSION_DIR", None)
    for key, value in backend.environment.items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    return environment


# ------------------------------------------------------------------------------ the turn transcript


class TurnPrinter:
    """Prints the ``pi/event`` notifications of the
    running prompt: answer text, tool calls, results."""

    def __init__(self) -> None:
        self._active = False
        self._mid_line = False

    def start(self) -> None:
        self._active, self._mid_line = True, False

    def stop(self) -> None:
        self._end_line()
        self._active = False

    def on_event(self, params: dict[str, Any]) -> None:
        if not self._active:
            return  # tree_changed after navigations and the like: the steps print their own results
        event = params["event"]
        handler = getattr(self, "_on_" + event["type"], None)
        if handler is not None:
            handler(event)

    def _on_text_delta(self, event: dict[str, Any]) -> None:
        self._write(event["delta"])

    def _on_message_end(self, event: dict[str, Any]) -> None:
        if event["message"].get("role") == "assistant":
            self._end_line()

    def _on_tool_execution_start(self, event: dict[str, Any]) -> None:
        self._end_line()
        arguments = json.dumps(event.get("arguments"), ensure_ascii=False)
        print(f"  [tool call] {event['name']} {arguments}")

    def _on_tool_execution_end(self, event: dict[str, Any]) -> None:
        outcome = "error" if event["isError"] else "ok"
        print(f"  [result]    {outcome}: {tool_result_line(event)}")
        diff = (
            (event.get("details") or {}).get("diff")
            if isinstance(event.get("details"), dict)
            else None
        )
        for line in (diff or "").splitlines():
            print(f"                {line}")

    def _on_retry(self, event: dict[str, Any]) -> None:
        self._end_line()
        print(f"  [retry {event['attempt']}/{event['maxAttempts']}] {event.get('errorMessage')}")

    def _on_error(self, event: dict[str, Any]) -> None:
        self._end_line()
        print(f"  [error] {event['message']}")

    def _write(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()
        self._mid_line = not text.endswith("\n")

    def _end_line(self) -> None:
        if self._mid_line:
            print()
            self._mid_line = False


def tool_result_line(event: dict[str, Any]) -> str:
    """One short line saying what a tool returned: its
    first line of text and how many lines there were."""
    text = "\n".join(
        block.get("text", "") for block in event.get("content") or [] if block.get("type") == "text"
    )
    lines = text.splitlines()
    first = next((line.strip() for line in lines if line.strip()), "(no text)")
    if len(first) > RESULT_LINE_LENGTH:
        first = first[: RESULT_LINE_LENGTH - 1] + "…"
    return first if len(lines) <= 1 else f"{first}  ({len(lines)} lines)"
