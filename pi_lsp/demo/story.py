"""The demo's story, step by step, through the real server: what an editor user does, what the
server answers, and the facts each step checks (in the session file, on disk, in the requests the
scripted model received).

1. a prompt the model answers with ``read`` and ``edit`` calls on ``calc.py``;
2. a second prompt;
3. the user opens ``TODO.md`` and edits and saves ``test_calc.py`` in the editor;
4. ``pi/compact`` with focus instructions: the summary with its file lists (the agent's files and
   the editor's), the context size before and after, the editor's files recorded;
5. a third prompt: the request carries the summary instead of the old messages;
6. ``pi/navigate`` back to the third prompt with ``summarize``: the branch summary, the editor text;
7. the same navigation with ``restoreFiles``: ``calc.py`` as it was there, then forward again;
8. the tree and a fork; then where the session file is and how to open it in pi.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs

from pi_lsp.demo import script
from pi_lsp.demo.client import KEEP_RECENT_TOKENS, DemoClient, real_backend, scripted_backend
from pi_lsp.demo.errors import DemoError
from pi_lsp.demo.transcript import Transcript, message_line, render_tree, tokens_text

SESSION_NAME = "pi-lsp demo"
EDITOR_FILE_OPS_TYPE = "pi-lsp.editor-file-ops"
COMPACTED_CONTEXT_START = "The conversation history before this point was compacted"
PI_PACKAGE = "@earendil-works/pi-coding-agent@0.84.2"


async def run_story(workspace: Path, real_model: str | None, transcript: Transcript) -> None:
    """Start the model (the scripted one unless ``real_model``) and the server, tell the story."""
    scripted = None
    transcript.say(f"pi-lsp demo in {workspace}")
    try:
        async with DemoClient(workspace, transcript, real_model) as client:
            if real_model is None:
                from pi_lsp.scripted_llm import ScriptedLLM

                scripted = ScriptedLLM(script.scripted_replies())
                await scripted.start()
                backend = scripted_backend(scripted.base_url)
            else:
                backend = real_backend(real_model)
            transcript.say(f"model: {backend.description}")
            await client.initialize(backend)
            await Story(client, workspace, transcript, scripted).tell()
    finally:
        if scripted is not None:
            await scripted.stop()
    if scripted is not None and transcript.failed_checks:
        raise DemoError(
            f"{len(transcript.failed_checks)} of {transcript.check_count} checks failed: "
            + "; ".join(transcript.failed_checks)
        )


@attrs.define
class Story:
    """The steps, and what later steps need from earlier ones."""

    client: DemoClient
    workspace: Path
    out: Transcript
    scripted: Any
    """The scripted model server (its recorded requests), or None with a real model."""
    session_id: str = ""
    session_path: str = ""
    third_prompt_id: str = ""
    third_answer_id: str = ""
    context_before_compaction: dict[str, Any] | None = None

    async def tell(self) -> None:
        created = await self.client.request("pi/newSession", {"name": SESSION_NAME})
        self.session_id, self.session_path = created["sessionId"], created["path"]
        await self.first_prompt()
        await self.second_prompt()
        self.editor_reads_and_saves()
        await self.compact()
        await self.third_prompt()
        await self.navigate_with_summary()
        await self.navigate_with_files()
        await self.tree_and_fork()

    # ------------------------------------------------------------------ the steps

    async def first_prompt(self) -> None:
        self.out.title("1. prompt: the model reads calc.py, fixes it and answers")
        self.out.say("(the server loads litellm in the background; the first answer waits for it)")
        await self.client.prompt(script.FIRST_PROMPT)
        self.out.check(
            script.FIXED_LINE in self._read("calc.py"), "calc.py is fixed on disk by the agent"
        )

    async def second_prompt(self) -> None:
        self.out.title("2. a second prompt")
        await self.client.prompt(script.SECOND_PROMPT)

    def editor_reads_and_saves(self) -> None:
        self.out.title("3. the editor: the user opens two files, adds a test, saves")
        self.client.open_document("TODO.md")
        self.client.open_document("test_calc.py")
        self.client.edit_and_save_document(
            "test_calc.py", self._read("test_calc.py") + script.USER_TEST
        )
        self.out.lines(
            [
                "textDocument/didOpen    TODO.md",
                "textDocument/didOpen    test_calc.py",
                "textDocument/didChange  test_calc.py  (+ test_average)",
                "textDocument/didSave    test_calc.py",
                "",
                "An opened document counts as read, a saved change as modified, as if the",
                "agent had done it. The server records them with the next prompt or compaction.",
            ]
        )

    async def compact(self) -> None:
        self.out.title("4. pi/compact with focus instructions")
        self.context_before_compaction = (await self._state())["contextUsage"]
        self.out.say(f"context before: {tokens_text(self.context_before_compaction)}")
        self.out.say(f'> pi/compact  instructions: "{script.COMPACT_FOCUS}"\n')
        result = await self.client.request(
            "pi/compact", {"sessionId": self.session_id, "instructions": script.COMPACT_FOCUS}
        )
        self.out.lines(result["summary"].splitlines(), indent="  | ")
        self.out.say(
            f"\ncompaction entry {result['entryId']}; kept verbatim from "
            f"{result['firstKeptEntryId']} on: {self._kept_messages(result['firstKeptEntryId'])}"
        )
        self.out.say(
            f"(the demo keeps {KEEP_RECENT_TOKENS} recent tokens, compaction.keepRecentTokens;"
            "\n pi's default of 20000 would keep the whole of this short story)"
        )
        after = (await self._state())["contextUsage"]
        self.out.say(f"context after: {tokens_text(after)}")
        records = [
            entry
            for entry in self._entries()
            if entry.get("type") == "custom" and entry.get("customType") == EDITOR_FILE_OPS_TYPE
        ]
        self.out.say(
            f"the editor's files, recorded after it ({EDITOR_FILE_OPS_TYPE}, pi ignores it):"
        )
        for record in records:
            self.out.say("  " + json.dumps(record["data"]))
        self.out.check(
            any(
                record["data"] == {"readFiles": ["TODO.md"], "modifiedFiles": ["test_calc.py"]}
                and record["parentId"] == result["entryId"]
                for record in records
            ),
            "the session records TODO.md as read and test_calc.py as modified in the editor",
        )
        self._check_compaction(result)

    def _check_compaction(self, result: dict[str, Any]) -> None:
        entry = self._entry(result["entryId"])
        self.out.check(
            entry is not None and entry["type"] == "compaction",
            f"compaction entry {result['entryId']} is in the session file",
        )
        self.out.check(
            "TODO.md" in result["readFiles"] and "<read-files>\nTODO.md" in result["summary"],
            "<read-files> lists TODO.md, opened in the editor",
        )
        self.out.check(
            {"calc.py", "test_calc.py"} <= set(result["modifiedFiles"])
            and "test_calc.py" in result["summary"].split("<modified-files>")[-1],
            "<modified-files> lists calc.py (the agent's edit), test_calc.py (the editor's save)",
        )
        if self.scripted is not None:
            asked = json.dumps(self.scripted.requests[-1]["messages"])
            self.out.check(
                f"Additional focus: {script.COMPACT_FOCUS}" in asked,
                "the focus instructions reached the model",
            )

    async def third_prompt(self) -> None:
        self.out.title("5. a third prompt: its request carries the summary")
        first_request = len(self.scripted.requests) if self.scripted is not None else 0
        result = await self.client.prompt(script.THIRD_PROMPT)
        self.third_prompt_id, self.third_answer_id = result["userEntryId"], result["leafId"]
        if self.scripted is not None:
            messages = self.scripted.requests[first_request]["messages"]
            self.out.say("\nthe messages of the request the model received for it:")
        else:
            messages = self._context_messages()
            self.out.say("\n(a real model's requests are not recorded here; the messages pi-lsp")
            self.out.say(" built for it from the session file, after the system prompt:)")
        self.out.lines([message_line(message) for message in messages])
        texts = [json.dumps(message.get("content")) for message in messages]
        self.out.check(
            any(COMPACTED_CONTEXT_START in text for text in texts)
            and not any("Read calc.py, fix the bug" in text for text in texts),
            "it carries the summary; the first prompt and its tool calls are gone",
        )
        after = (await self._state())["contextUsage"]
        self.out.say(
            f"\ncontext before the compaction: {tokens_text(self.context_before_compaction)}"
        )
        self.out.say(f"context now, third prompt included: {tokens_text(after)}")

    async def navigate_with_summary(self) -> None:
        self.out.title("6. pi/navigate back to the third prompt, with summarize: true")
        landing = (self._entry(self.third_prompt_id) or {}).get("parentId")
        result = await self.client.request(
            "pi/navigate",
            {"sessionId": self.session_id, "targetId": self.third_prompt_id, "summarize": True},
        )
        summary_id = result["summaryEntryId"]
        page = await self.client.request("pi/messages", {"sessionId": self.session_id, "limit": 1})
        summary = page["entries"][-1].get("summary", "") if page["entries"] else ""
        self.out.say(f"branch summary {summary_id}, the new leaf:")
        self.out.lines(summary.splitlines(), indent="  | ")
        self.out.say(f"\neditorText, for the editor's input box: {result['editorText']!r}")
        self.out.say("calc.py stays as the agent left it: nothing asked to restore files.")
        entry = self._entry(summary_id) if summary_id else None
        self.out.check(
            entry is not None
            and entry["type"] == "branch_summary"
            and entry.get("parentId") == landing
            and result["leafId"] == summary_id,
            f"summary entry attached where the user landed ({landing}, the third prompt's parent)",
        )
        self.out.check(
            result["editorText"] == script.THIRD_PROMPT, "the third prompt is back in the editor"
        )

    async def navigate_with_files(self) -> None:
        self.out.title("7. the same navigation with restoreFiles, and forward again")
        await self._navigate(self.third_answer_id)
        self.out.say(f"pi/navigate to the third answer {self.third_answer_id}: the leaf is back.")
        self.out.say("pi/fileChanges previews going back to the third prompt:")
        preview = await self.client.request(
            "pi/fileChanges", {"sessionId": self.session_id, "toId": self.third_prompt_id}
        )
        for file in preview["files"]:
            self.out.lines(file["diff"].splitlines()[2:], indent="    ")
        back = await self._navigate(self.third_prompt_id, restore_files=True)
        self.out.say(f"pi/navigate back with restoreFiles: {_file_outcomes(back)}")
        calc = self._read("calc.py")
        self.out.check(
            script.FIXED_LINE in calc and script.EMPTY_LIST_GUARD not in calc,
            "calc.py is back as it was there: fixed, without the empty-list guard",
        )
        forward = await self._navigate(self.third_answer_id, restore_files=True)
        self.out.say(
            f"\npi/navigate forward again to {self.third_answer_id} with restoreFiles: "
            + _file_outcomes(forward)
        )
        self.out.check(
            script.EMPTY_LIST_GUARD in self._read("calc.py"),
            "forward again, calc.py has the guard back",
        )

    async def tree_and_fork(self) -> None:
        self.out.title("8. pi/tree, and pi/fork at the third answer")
        document = await self.client.request("pi/tree", {"sessionId": self.session_id})
        self.out.say("  (* active path, @ leaf)")
        self.out.lines(render_tree(document))
        fork = await self.client.request(
            "pi/fork", {"sessionId": self.session_id, "entryId": self.third_answer_id}
        )
        self.out.say(
            f"\npi/fork made session {fork['sessionId']}: the path from the root to the third "
            "answer"
        )
        self.out.title("done")
        self.out.say(f"workspace:    {self.workspace}")
        self.out.say(f"session file: {self.session_path}")
        self.out.say(f"fork:         {fork['path']}")
        self.out.say(f"open the session in pi 0.84.2 (npm install -g {PI_PACKAGE}):")
        self.out.say(f"  cd {self.workspace} && pi --session {self.session_path}")

    # ------------------------------------------------------------------ helpers

    async def _navigate(self, target_id: str, *, restore_files: bool = False) -> dict[str, Any]:
        params: dict[str, Any] = {"sessionId": self.session_id, "targetId": target_id}
        if restore_files:
            params["restoreFiles"] = True
        return await self.client.request("pi/navigate", params)

    async def _state(self) -> dict[str, Any]:
        return await self.client.request("pi/state", {"sessionId": self.session_id})

    def _read(self, relative_path: str) -> str:
        return (self.workspace / relative_path).read_text(encoding="utf-8")

    def _entries(self) -> list[dict[str, Any]]:
        """The session file's entries, as the server has written them so far."""
        lines = Path(self.session_path).read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines[1:] if line.strip()]

    def _entry(self, entry_id: str) -> dict[str, Any] | None:
        return next((entry for entry in self._entries() if entry.get("id") == entry_id), None)

    def _kept_messages(self, first_kept_id: str) -> str:
        """The messages a compaction keeps, as their roles (in pi's order: the file's)."""
        entries = self._entries()
        start = next((i for i, entry in enumerate(entries) if entry.get("id") == first_kept_id), 0)
        roles = [
            entry["message"].get("role", "?")
            for entry in entries[start:]
            if entry.get("type") == "message" and isinstance(entry.get("message"), dict)
        ]
        return ", ".join(roles) or "nothing"

    def _context_messages(self) -> list[dict[str, Any]]:
        """The messages pi-lsp built for the third prompt from the session file, as the model
        gets them (pi's own roles turned into user text); the system prompt is not in the file."""
        from pi_lsp.session.messages import convert_to_llm
        from pi_lsp.session.session import Session

        with Session.open(Path(self.session_path), writable=False) as session:
            context = session.build_context(self.third_prompt_id)
        return [dict(message) for message in convert_to_llm(context.messages)]


def _file_outcomes(result: dict[str, Any]) -> str:
    files = result.get("files") or []
    return ", ".join(f"{Path(file['path']).name} {file['action']}" for file in files) or "none"
