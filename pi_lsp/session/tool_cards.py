"""What the chats show of a tool call: a ``ToolCard`` built once, here, from the call's name and
arguments, its result (``content``, ``details``, ``isError``) and the workspace folder.

Each chat would otherwise have to know every tool's arguments and ``details``: the edit's patch,
the command's exit code and truncation, how a search's lines name paths, how a permission refusal
reads. A call still running has no result yet (``running``); a bash update's partial result gives
the output so far. Pure: the live events add what only the server knows (the duration), unless
the result recorded one (``bash``'s ``details.durationMs``), which replayed cards show too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import msgspec

from pi_lsp.protocol import (
    ToolCard,
    ToolCardArgument,
    ToolCardImage,
    ToolCardKind,
    ToolCardResult,
    ToolCardStatus,
)

MAX_OUTPUT_LINES = 200
MAX_TEXT_BYTES = 16 * 1024
MAX_RESULTS = 200
MCP_PREFIX = "mcp__"
SEARCH_TOOLS = ("grep", "find", "ls")
_REFUSAL = re.compile(r"was not given \((?P<why>.*)\)\. Nothing was changed\.$", re.DOTALL)
# The paragraphs a tool adds after its output (matched against the last paragraph only: a
# pattern anchored at the end of a long output would be tried at each of its positions)
_BASH_NOTICE = re.compile(r"\[Showing (?:lines|the last) [^\n]*\]")
_BASH_STATUS = re.compile(
    r"Command exited with code -?\d+|Command was killed by [^\n]+|Command aborted"
    r"|Command timed out after [^\n]+"
)
_LISTING_NOTICE = re.compile(r"\[[^\n]*\]")
_GREP_MATCH = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<text>.*)$")
_EMPTY_LISTINGS = ("No matches found", "No files found matching the pattern", "(empty directory)")


@attrs.frozen
class ToolOutcome:
    """A tool's result as the card reads it (a finished result, or a running tool's update)."""

    content: Sequence[Mapping[str, Any]]
    details: Mapping[str, Any] | None
    is_error: bool = False
    finished: bool = True


def tool_card(
    name: str,
    arguments: Mapping[str, Any] | None,
    outcome: ToolOutcome | None,
    cwd: str | os.PathLike[str],
    duration_ms: int | None = None,
) -> ToolCard:
    """The card of the call ``name(arguments)``: running while ``outcome`` is None or not
    finished; ``cwd`` (the workspace folder) makes paths inside it relative."""
    arguments = arguments if isinstance(arguments, dict) else {}
    kind, status = _kind(name), _status(outcome)
    recorded = _int(_details(outcome).get("durationMs")) if outcome and outcome.finished else None
    # what the tool recorded (a command's run time, the same when replayed) over the live wait
    duration_ms = recorded if recorded is not None else duration_ms
    facts = _FACTS[kind](name, arguments, outcome, os.path.normpath(os.fspath(cwd) or "."))
    if facts.get("status_reason") is None:
        facts["status_reason"] = _reason(status, outcome)
    if outcome is not None and status in ("failed", "denied") and kind != "bash":
        facts["text"] = facts.get("text") or _clip_bytes(_text(outcome.content))
    return ToolCard(
        kind=kind,
        title=facts.pop("title", name),
        status=status,
        arguments=_arguments(arguments),
        raw_arguments=_indented_json(arguments),
        duration_ms=duration_ms,
        **facts,
    )


def _kind(name: str) -> ToolCardKind:
    if name in ("read", "edit", "write", "bash"):
        return name  # type: ignore[return-value]
    if name in SEARCH_TOOLS:
        return "search"
    return "mcp" if name.startswith(MCP_PREFIX) else "other"


def _status(outcome: ToolOutcome | None) -> ToolCardStatus:
    if outcome is None or not outcome.finished:
        return "running"
    if _permission(outcome) is not None:
        return "denied"
    return "failed" if outcome.is_error else "done"


def _permission(outcome: ToolOutcome | None) -> Mapping[str, Any] | None:
    details = outcome.details if outcome is not None else None
    permission = details.get("permission") if isinstance(details, dict) else None
    return permission if isinstance(permission, dict) else None


def _reason(status: ToolCardStatus, outcome: ToolOutcome | None) -> str | None:
    """Why a call failed or was denied, in a few words."""
    if outcome is None or status in ("running", "done"):
        return None
    text = _text(outcome.content)
    if status == "denied":
        refusal = _REFUSAL.search(text)
        return refusal["why"] if refusal else "permission not given"
    first_line = text.strip().split("\n", 1)[0]
    if len(first_line) > 80 and ". " in first_line:
        first_line = first_line.split(". ", 1)[0] + "."  # the whole error is in ``text``
    return _clip(first_line, 200) or "failed"


def _arguments(arguments: Mapping[str, Any]) -> list[ToolCardArgument]:
    return [
        ToolCardArgument(str(key), value if isinstance(value, str) else _compact_json(value))
        for key, value in arguments.items()
    ]


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _indented_json(value: Any) -> str:
    # msgspec's encoder in C: the standard library's falls back to Python code for an indent
    try:
        return msgspec.json.format(msgspec.json.encode(value), indent=2).decode()
    except (msgspec.EncodeError, OverflowError, TypeError):  # an integer past 64 bits
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)


# ------------------------------------------------------------------------------ per kind


def _file_facts(
    arguments: Mapping[str, Any], outcome: ToolOutcome | None, cwd: str, verbs: tuple[str, ...]
) -> dict[str, Any]:
    """The title and path of a call on one file; whether the editor made the change."""
    details = _details(outcome)
    path = _shown_path(details.get("path") or arguments.get("path"), cwd)
    facts: dict[str, Any] = {"title": f"{_verb(outcome, *verbs)} {path}", "path": path}
    if "viaEditor" in details:
        facts["undo_in_editor"] = details.get("viaEditor") is True
    return facts


def _read_facts(
    name: str, arguments: Mapping[str, Any], outcome: ToolOutcome | None, cwd: str
) -> dict[str, Any]:
    details = _details(outcome)
    facts = _file_facts(arguments, outcome, cwd, ("Reading", "Read"))
    offset = _int(arguments.get("offset"))
    limit = _int(arguments.get("limit"))
    facts["start_line"] = _int(details.get("startLine")) or offset
    facts["end_line"] = _int(details.get("endLine")) or (
        (offset or 1) + limit - 1 if limit else None
    )
    facts["total_lines"] = _int(details.get("totalLines"))
    facts["size_bytes"] = _int(details.get("bytes"))
    if outcome is not None and outcome.finished:
        text = _text(outcome.content)
        if details.get("mimeType") is None:
            facts["size_bytes"] = facts["size_bytes"] or len(text.encode())
        facts["text"] = _clip_bytes(text)
        facts["images"] = _images(outcome.content, details)
    return facts


def _edit_facts(
    name: str, arguments: Mapping[str, Any], outcome: ToolOutcome | None, cwd: str
) -> dict[str, Any]:
    details = _details(outcome)
    facts = _file_facts(arguments, outcome, cwd, ("Editing", "Edited", "Edit"))
    diff = _diff_lines(details)
    if diff is not None:
        facts.update(diff=diff, added=_count(diff, "+"), removed=_count(diff, "-"))
        facts["start_line"] = _int(details.get("firstChangedLine"))
    return facts


def _write_facts(
    name: str, arguments: Mapping[str, Any], outcome: ToolOutcome | None, cwd: str
) -> dict[str, Any]:
    details = _details(outcome)
    content = arguments.get("content")
    content = content if isinstance(content, str) else ""
    created = details.get("created")
    verb = "Created" if created is True else "Wrote"
    facts = _file_facts(arguments, outcome, cwd, ("Writing", verb, "Write"))
    facts["size_bytes"] = _int(details.get("bytes")) or len(content.encode())
    if isinstance(created, bool):
        facts["created"] = created
    diff = _diff_lines(details)
    if diff is not None:  # an overwrite's patch
        facts.update(diff=diff, added=_count(diff, "+"), removed=_count(diff, "-"))
    elif created is True:
        lines = content.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        facts.update(
            diff=[f"@@ -0,0 +1,{len(lines)} @@", *("+" + line for line in lines)],
            added=len(lines),
            removed=0,
        )
    return facts


def _bash_facts(
    name: str, arguments: Mapping[str, Any], outcome: ToolOutcome | None, cwd: str
) -> dict[str, Any]:
    command = arguments.get("command")
    command = command if isinstance(command, str) else ""
    facts: dict[str, Any] = {"title": _clip(command.strip().split("\n", 1)[0], 120) or "bash"}
    facts["command"] = command
    if outcome is None:
        return facts
    details = _details(outcome)
    text = _without_last(_without_last(_text(outcome.content), _BASH_STATUS), _BASH_NOTICE)
    if outcome.finished and text == "(no output)":
        text = ""
    output, clipped = _tail(text.removesuffix("\n"))
    truncation = details.get("truncation")
    total = _int(truncation.get("totalBytes")) if isinstance(truncation, dict) else None
    facts.update(
        output=output,
        output_bytes=total or len(text.encode()),
        output_truncated=clipped or details.get("truncated") is True,
        full_output_path=_str(details.get("fullOutputPath")),
    )
    if outcome.finished:
        exit_code = _int(details.get("exitCode"))
        killed = details.get("cancelled") is True or (exit_code is not None and exit_code < 0)
        facts.update(
            exit_code=exit_code,
            killed=killed or None,
            timed_out=details.get("timedOut") is True or None,
            status_reason=_bash_reason(exit_code, killed, details, outcome),
        )
    return facts


def _bash_reason(
    exit_code: int | None, killed: bool, details: Mapping[str, Any], outcome: ToolOutcome
) -> str | None:
    if not outcome.is_error or _permission(outcome) is not None:
        return None
    if details.get("timedOut") is True:
        return "timed out"
    if details.get("cancelled") is True:
        return "aborted"
    if killed:
        return "killed"
    if exit_code is not None:
        return f"exit {exit_code}"
    return None


def _search_facts(
    name: str, arguments: Mapping[str, Any], outcome: ToolOutcome | None, cwd: str
) -> dict[str, Any]:
    query = _str(arguments.get("pattern"))
    where = _str(arguments.get("path"))
    root = _absolute(where or ".", cwd)
    shown_root = _shown_path(root, cwd)
    title = f"{name} {query}" if query else f"{name} {shown_root}"
    if query and where:
        title += f" in {shown_root}"
    facts: dict[str, Any] = {"title": title, "query": query, "path": shown_root}
    if outcome is None or not outcome.finished or outcome.is_error:
        return facts
    found = _listing_lines(_text(outcome.content))
    results = [_search_result(name, line, root, cwd) for line in found]
    results = [result for result in results if result is not None]
    limited = any(key.endswith("LimitReached") for key in _details(outcome))
    facts.update(
        result_count=len(results),
        results=results[:MAX_RESULTS],
        more_results=limited or len(results) > MAX_RESULTS,
    )
    return facts


def _listing_lines(text: str) -> list[str]:
    if text in _EMPTY_LISTINGS:
        return []
    head, _, last = text.rpartition("\n\n")
    listed = head if head and _LISTING_NOTICE.fullmatch(last) else text
    return [line for line in listed.split("\n") if line]


def _search_result(name: str, line: str, root: str, cwd: str) -> ToolCardResult | None:
    # grep and find name paths relative to the folder searched (grep in one file: its name)
    base = os.path.dirname(root) if name == "grep" and os.path.isfile(root) else root
    if name != "grep":
        return ToolCardResult(_shown_path(os.path.join(base, line.rstrip("/")), cwd))
    match = _GREP_MATCH.match(line)
    if match is None:
        return None  # a context line (``path-12- text``)
    path = _shown_path(os.path.join(base, match["path"]), cwd)
    return ToolCardResult(path, int(match["line"]), match["text"])


def _mcp_facts(
    name: str, arguments: Mapping[str, Any], outcome: ToolOutcome | None, cwd: str
) -> dict[str, Any]:
    server, _, tool = name.removeprefix(MCP_PREFIX).partition("__")
    facts: dict[str, Any] = {"title": f"{server} · {tool or server}", "server": server}
    facts["tool"] = tool or server
    return facts | _answer_facts(outcome)


def _other_facts(
    name: str, arguments: Mapping[str, Any], outcome: ToolOutcome | None, cwd: str
) -> dict[str, Any]:
    return {"title": name, "tool": name} | _answer_facts(outcome)


def _answer_facts(outcome: ToolOutcome | None) -> dict[str, Any]:
    if outcome is None or not outcome.finished:
        return {}
    return {
        "text": _clip_bytes(_text(outcome.content)),
        "images": _images(outcome.content, _details(outcome)),
    }


_FACTS = {
    "read": _read_facts,
    "edit": _edit_facts,
    "write": _write_facts,
    "bash": _bash_facts,
    "search": _search_facts,
    "mcp": _mcp_facts,
    "other": _other_facts,
}


# ------------------------------------------------------------------------------ helpers


def _without_last(text: str, paragraph: re.Pattern[str]) -> str:
    """``text`` without its last paragraph if that one is ``paragraph``."""
    head, _, last = text.rpartition("\n\n")
    return head if paragraph.fullmatch(last) else text


def _verb(outcome: ToolOutcome | None, running: str, done: str, undone: str | None = None) -> str:
    """The title's verb: the call running, done, or failed or refused (``undone``)."""
    if outcome is None or not outcome.finished:
        return running
    return (undone or done) if outcome.is_error else done


def _details(outcome: ToolOutcome | None) -> Mapping[str, Any]:
    details = outcome.details if outcome is not None else None
    return details if isinstance(details, dict) else {}


def _text(content: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _images(
    content: Sequence[Mapping[str, Any]], details: Mapping[str, Any]
) -> list[ToolCardImage] | None:
    images = [
        ToolCardImage(str(block.get("mimeType") or "image"), _base64_size(block.get("data")))
        for block in content
        if isinstance(block, dict) and block.get("type") == "image"
    ]
    if not images and isinstance(details.get("mimeType"), str):
        # an image read but left out of the result (too big, or a type not sent inline)
        images = [ToolCardImage(details["mimeType"], _int(details.get("bytes")) or 0)]
    return images or None


def _base64_size(data: Any) -> int:
    if not isinstance(data, str):
        return 0
    return len(data) * 3 // 4 - data.endswith("=") - data.endswith("==")


def _diff_lines(details: Mapping[str, Any]) -> list[str] | None:
    patch = details.get("patch")
    if isinstance(patch, str) and patch:
        lines = patch.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        # Only the file headers go: inside a hunk, ``--- x`` is the removed line ``-- x``.
        first_hunk = next((at for at, line in enumerate(lines) if line.startswith("@@")), 0)
        return lines[first_hunk:]
    diff = details.get("diff")
    return diff.split("\n") if isinstance(diff, str) and diff else None


def _count(diff: list[str], sign: str) -> int:
    return sum(1 for line in diff if line.startswith(sign))


def _shown_path(raw: Any, cwd: str) -> str:
    """``raw`` relative to the workspace when inside it, else absolute (as given when there is
    no workspace folder to place it in)."""
    if not isinstance(raw, str) or not raw:
        return ""
    if not os.path.isabs(cwd):
        return raw
    path = _absolute(raw, cwd)
    if path == cwd:
        return "."
    inside = cwd.rstrip("/") + "/"
    return path.removeprefix(inside)


def _absolute(raw: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(raw)))


def _tail(text: str) -> tuple[str, bool]:
    """The last lines of ``text`` within the card's caps, and whether any were left out."""
    lines = text.split("\n")
    clipped = len(lines) > MAX_OUTPUT_LINES
    tail = "\n".join(lines[-MAX_OUTPUT_LINES:])
    encoded = tail.encode()
    if len(encoded) > MAX_TEXT_BYTES:
        tail = encoded[-MAX_TEXT_BYTES:].decode("utf-8", errors="ignore")
        tail = tail.split("\n", 1)[1] if "\n" in tail else tail
        clipped = True
    return tail, clipped


def _clip_bytes(text: str) -> str:
    encoded = text.encode()
    if len(encoded) <= MAX_TEXT_BYTES:
        return text
    return encoded[:MAX_TEXT_BYTES].decode("utf-8", errors="ignore") + "\n…"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
