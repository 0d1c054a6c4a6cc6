"""Small builders for pi session entries and messages, in the style of pi-mono's own tests.

Entries get sequential ids (``test-id-1``, ``test-id-2``, …) and, unless told otherwise, the
previous entry as parent. Timestamps advance one second per entry so message and entry times stay
ordered. Every builder returns plain dicts with pi's key order.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

from pi_lsp.compaction.settings import CompactionSettings
from pi_lsp.session.timestamps import epoch_ms_to_iso

BASE_EPOCH_MS = 1_735_689_600_000  # 2025-01-01T00:00:00.000Z
_PREVIOUS = object()


def usage(
    input: int = 0,
    output: int = 0,
    cache_read: int = 0,
    cache_write: int = 0,
    total: int | None = None,
) -> dict:
    """pi's ``Usage`` object; ``total`` defaults to the sum of the parts, as pi's tests mock it."""
    return {
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": input + output + cache_read + cache_write if total is None else total,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def user_message(content: Any, timestamp: int = BASE_EPOCH_MS) -> dict:
    return {"role": "user", "content": content, "timestamp": timestamp}


def user_text(value: str, timestamp: int = BASE_EPOCH_MS) -> dict:
    """A user message of one text block, as editors and pi send a prompt."""
    return user_message([text(value)], timestamp)


def assistant_message(
    *blocks: dict | str,
    api: str = "anthropic-messages",
    provider: str = "anthropic",
    model: str = "claude-sonnet-4-5",
    usage_: dict | None = None,
    stop_reason: str = "stop",
    timestamp: int = BASE_EPOCH_MS,
) -> dict:
    """An assistant message; plain strings become text blocks."""
    content = [
        {"type": "text", "text": block} if isinstance(block, str) else block for block in blocks
    ]
    return {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": usage_ if usage_ is not None else usage(),
        "stopReason": stop_reason,
        "timestamp": timestamp,
    }


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def thinking(value: str) -> dict:
    return {"type": "thinking", "thinking": value}


def image() -> dict:
    return {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}


def tool_call(name: str, call_id: str = "call-1", **arguments: Any) -> dict:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def tool_result(
    content: Any, call_id: str = "call-1", tool_name: str = "read", timestamp: int = BASE_EPOCH_MS
) -> dict:
    if isinstance(content, str):
        content = [text(content)]
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": tool_name,
        "content": content,
        "isError": False,
        "timestamp": timestamp,
    }


def bash_execution(command: str, output: str, exit_code: int | None = 0, **extra: Any) -> dict:
    message = {
        "role": "bashExecution",
        "command": command,
        "output": output,
        "exitCode": exit_code,
        "cancelled": False,
        "truncated": False,
        "timestamp": BASE_EPOCH_MS,
    }
    message.update(extra)
    return message


SUMMARY_HEADINGS = [
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Next Steps",
]
"""The sections every structured summary (a compaction's or a branch's) has, in order."""


def words(count: int) -> str:
    """Text worth ``count`` tokens by pi's chars/4 estimate."""
    return "abcd" * count


def keep(tokens: int) -> CompactionSettings:
    """Compaction settings that keep about ``tokens`` recent tokens."""
    return CompactionSettings(keep_recent_tokens=tokens)


def user_entry(entry_id: str, parent_id: str | None, timestamp_ms: int, text: str) -> dict:
    """A user message entry with the id, parent and time given (for trees laid out by hand)."""
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": epoch_ms_to_iso(timestamp_ms),
        "message": user_message([{"type": "text", "text": text}], timestamp_ms),
    }


def write_session_file(
    path: Path, entries: list[dict], session_id: str = "s1", cwd: str = "/p"
) -> Path:
    """``entries`` under a version 3 session header, one JSON line each, at ``path``."""
    header = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": epoch_ms_to_iso(BASE_EPOCH_MS),
        "cwd": cwd,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(line, separators=(",", ":")) for line in [header, *entries]]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_dialogue_session(
    path: Path, session_id: str, texts: list[str], *, alternate: bool = False
) -> Path:
    """A chain of messages with the texts, ids ``<session_id>-<n>``, a second apart from
    2025-01-01; with ``alternate``, every second text is an assistant's answer."""
    entries, parent = [], None
    for number, text in enumerate(texts):
        entry_id = f"{session_id}-{number}"
        answer = alternate and number % 2 == 1
        message = {
            "role": "assistant" if answer else "user",
            "content": [{"type": "text", "text": text}] if answer else text,
            "timestamp": number,
        }
        entries.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": f"2025-01-01T00:00:{number:02d}.000Z",
                "message": message,
            }
        )
        parent = entry_id
    return write_session_file(path, entries, session_id)


class SessionBuilder:
    """Appends entries with sequential ids; by default each is a child of the previous one."""

    def __init__(self, id_prefix: str = "test-id-") -> None:
        self.entries: list[dict] = []
        self._id_prefix = id_prefix
        self._last_id: str | None = None

    def _append(self, entry_type: str, fields: dict, parent: Any) -> dict:
        entry_id = f"{self._id_prefix}{len(self.entries) + 1}"
        parent_id = self._last_id if parent is _PREVIOUS else parent
        entry = {
            "type": entry_type,
            "id": entry_id,
            "parentId": parent_id,
            "timestamp": epoch_ms_to_iso(BASE_EPOCH_MS + 1000 * len(self.entries)),
        }
        entry.update(fields)
        self.entries.append(entry)
        self._last_id = entry_id
        return entry

    def message(self, message: dict, parent: Any = _PREVIOUS) -> dict:
        return self._append("message", {"message": message}, parent)

    def user(self, content: Any, parent: Any = _PREVIOUS) -> dict:
        return self.message(user_message(content, BASE_EPOCH_MS + 1000 * len(self.entries)), parent)

    def assistant(self, *blocks: dict | str, parent: Any = _PREVIOUS, **options: Any) -> dict:
        options.setdefault("timestamp", BASE_EPOCH_MS + 1000 * len(self.entries))
        return self.message(assistant_message(*blocks, **options), parent)

    def tool_result(self, content: Any, parent: Any = _PREVIOUS, **options: Any) -> dict:
        return self.message(tool_result(content, **options), parent)

    def thinking_level(self, level: str, parent: Any = _PREVIOUS) -> dict:
        return self._append("thinking_level_change", {"thinkingLevel": level}, parent)

    def model_change(self, provider: str, model_id: str, parent: Any = _PREVIOUS) -> dict:
        return self._append("model_change", {"provider": provider, "modelId": model_id}, parent)

    def compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int = 1000,
        parent: Any = _PREVIOUS,
        **extra: Any,
    ) -> dict:
        fields = {
            "summary": summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
        fields.update(extra)
        return self._append("compaction", fields, parent)

    def branch_summary(
        self, summary: str, from_id: str = "root", parent: Any = _PREVIOUS, **extra: Any
    ) -> dict:
        fields = {"fromId": from_id, "summary": summary}
        fields.update(extra)
        return self._append("branch_summary", fields, parent)

    def custom_message(
        self, content: Any, custom_type: str = "ext", parent: Any = _PREVIOUS, **extra: Any
    ) -> dict:
        fields = {"customType": custom_type, "content": content, "display": True}
        fields.update(extra)
        return self._append("custom_message", fields, parent)

    def custom(self, custom_type: str = "state", data: Any = None, parent: Any = _PREVIOUS) -> dict:
        return self._append("custom", {"customType": custom_type, "data": data}, parent)

    def label(self, target_id: str, label: str, parent: Any = _PREVIOUS) -> dict:
        return self._append("label", {"targetId": target_id, "label": label}, parent)

    def context_edit(self, target_id: Any, replacement: Any, parent: Any = _PREVIOUS) -> dict:
        """pi 1.6's edit of an earlier entry's part of the context (``None``: leave it out)."""
        return self._append(
            "context_edit", {"targetId": target_id, "replacement": replacement}, parent
        )

    def system(self, content: Any = "", parent: Any = _PREVIOUS, **fields: Any) -> dict:
        """pi 1.6's system-role message (prompt state: ``sections``, ``toolsAdded``, …)."""
        message = {"role": "system", "content": content, **fields, "timestamp": BASE_EPOCH_MS}
        return self.message(message, parent)

    def raw(self, entry_type: str, parent: Any = _PREVIOUS, **fields: Any) -> dict:
        """An entry of any type (pi 1.x kinds such as ``usage``, or kinds no pi knows)."""
        return self._append(entry_type, fields, parent)

    def branch_from(self, entry_id: str | None) -> SessionBuilder:
        """Make the next entry a child of ``entry_id`` (``None``: a new root)."""
        self._last_id = entry_id
        return self

    def by_id(self) -> dict[str, dict]:
        return {entry["id"]: entry for entry in self.entries}

    def ids(self) -> list[str]:
        return [entry["id"] for entry in self.entries]


def conversation(turns: int) -> SessionBuilder:
    """``turns`` exchanges of a 100-token user prompt (``u0``, ``u1``, … first) and a 100-token
    answer."""
    session = SessionBuilder()
    for turn in range(turns):
        session.user(f"u{turn}" + words(100))
        session.assistant(words(100))
    return session


def split_turn_session() -> SessionBuilder:
    """Three short turns, then one long tool-using turn that the cut splits (entry ids in the
    comments)."""
    session = conversation(3)
    session.user("big task")  # 7
    session.assistant(tool_call("read", path="a.py"))  # 8
    session.tool_result(words(50))  # 9
    session.assistant(tool_call("edit", path="b.py"))  # 10
    session.tool_result(words(400))  # 11
    return session


class ScriptedModel:
    """A summarizer ``Complete`` function: records each
    request, answers with the next scripted message."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, str, int | None]] = []

    async def __call__(self, system_prompt: str, user_text: str, max_tokens: int | None) -> dict:
        self.calls.append((system_prompt, user_text, max_tokens))
        return self.answers.pop(0)

    @property
    def user_texts(self) -> list[str]:
        return [call[1] for call in self.calls]


def answer(
    *blocks: dict | str, stop_reason: str = "stop", usage_: dict | None = None, **extra
) -> dict:
    """An assistant message as a summarizer call returns it."""
    message = {
        "role": "assistant",
        "content": [text(block) if isinstance(block, str) else block for block in blocks],
        "stopReason": stop_reason,
        "usage": usage_ if usage_ is not None else usage(100, 10),
    }
    message.update(extra)
    return message


NESTED_RULE = "NESTED-RULE-7f3a: use tabs in the api package"
"""The text of the nested AGENTS.md that ``api_package`` writes."""


def api_package(workspace: Path, rules: str = NESTED_RULE) -> Path:
    """``packages/api`` in ``workspace``, with ``src/server.py`` and an AGENTS.md of ``rules``."""
    package = workspace / "packages" / "api"
    (package / "src").mkdir(parents=True, exist_ok=True)
    (package / "src" / "server.py").write_text("print('api')\n")
    (package / "AGENTS.md").write_text(rules + "\n")
    return package


def tiny_png() -> bytes:
    """A valid 1×1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0\0"))
        + chunk(b"IEND", b"")
    )
