"""What a preview shows besides the actions: unified diffs, and the commands that may have changed
a file behind the checkpoints' back.

``bash`` commands (the agent's, and the ``!command`` runs pi records as ``bashExecution``) can
change files too, and those changes are not recorded. A preview marks each file with the
commands on the branches it crosses whose text names the file (its path relative to the session's
directory, its absolute path, or its file name as a word): restoring it may not undo what they did.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

Entry = Mapping[str, Any]
NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(current: str | None, target: str | None, label: str) -> str:
    """The unified diff turning ``current`` into ``target`` (None: absent), git style labels."""
    before = [] if current is None else current.splitlines(keepends=True)
    after = [] if target is None else target.splitlines(keepends=True)
    lines = difflib.unified_diff(
        before,
        after,
        fromfile="/dev/null" if current is None else f"a/{label}",
        tofile="/dev/null" if target is None else f"b/{label}",
    )
    out = []
    for line in lines:
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n" + NO_NEWLINE)
    return "".join(out)


def commands_on(entries: Iterable[Entry]) -> list[str]:
    """The shell commands the entries ran: ``bash`` tool calls and pi's ``bashExecution``s."""
    commands = []
    for entry in entries:
        if entry.get("type") != "message":
            continue
        message = entry.get("message")
        if not isinstance(message, Mapping):
            continue
        if message.get("role") == "bashExecution" and isinstance(message.get("command"), str):
            commands.append(message["command"])
        elif message.get("role") == "assistant" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if (
                    isinstance(block, Mapping)
                    and block.get("type") == "toolCall"
                    and block.get("name") == "bash"
                    and isinstance(block.get("arguments"), Mapping)
                    and isinstance(block["arguments"].get("command"), str)
                ):
                    commands.append(block["arguments"]["command"])
    return commands


def commands_naming(commands: Iterable[str], path: str, cwd: str) -> list[str]:
    """The commands whose text names ``path`` (absolute), in order, each once."""
    names = {path, os.path.basename(path)}
    if cwd:
        relative = os.path.relpath(path, cwd)
        if not relative.startswith(os.pardir):
            names.update({relative, f"./{relative}"})
    pattern = re.compile(
        r"(?<![\w./-])(?:" + "|".join(re.escape(name) for name in sorted(names)) + r")(?![\w-])"
    )
    found: list[str] = []
    for command in commands:
        if command not in found and pattern.search(command):
            found.append(command)
    return found
