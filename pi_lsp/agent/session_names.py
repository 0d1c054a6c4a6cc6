"""Automatic session names: after a session's first answer, the summary model names it.

The name is a few words, written as pi's ``session_info`` entry (pi shows it in ``/resume``, as
it shows the names ``/name`` gives). Only a session that has no ``session_info`` entry yet is
named, so a name the user gave is never replaced; the model is asked once per session, and a call
that fails writes nothing. The entry is written when no turn or summary runs on the session (an
entry appended mid-turn would move the leaf under the turn); if one is running, after it.
"""

from __future__ import annotations

import asyncio
import logging

from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.agent.summary_model import SummaryModel
from pi_lsp.errors import PiError
from pi_lsp.session.message_types import AssistantMessage
from pi_lsp.session.messages import content_text

logger = logging.getLogger(__name__)

NAME_PROMPT = (
    "You name conversations between a user and a coding assistant. Reply with a title of three "
    "to six words saying what the conversation is about: no quotes, no final period, nothing else."
)
EXCERPT_CHARS = 2_000
NAME_MAX_CHARS = 60
NAME_MAX_TOKENS = 40


def wants_a_name(runtime: SessionRuntime) -> bool:
    """A session nobody named yet, with one user message and an answer to it."""
    users = answers = 0
    for entry in runtime.session.entries:
        if entry.type == "session_info":
            return False
        if entry.type == "message":
            users += entry.role == "user"
            answers += entry.role == "assistant"
    return users == 1 and answers >= 1


def has_a_name_entry(runtime: SessionRuntime) -> bool:
    return any(entry.type == "session_info" for entry in runtime.session.entries)


def excerpt(runtime: SessionRuntime) -> str:
    """The first question and the first answer, as the model reads them."""
    parts: list[str] = []
    for entry in runtime.session.entries:
        if entry.type != "message" or entry.role not in ("user", "assistant"):
            continue
        message = entry.get("message")
        text = content_text(message.get("content") if isinstance(message, dict) else None)
        if text.strip():
            parts.append(f"{entry.role}: {text[:EXCERPT_CHARS]}")
        if len(parts) == 2:
            break
    return "\n\n".join(parts)


def cleaned_name(answer: AssistantMessage) -> str | None:
    """The first line of the model's answer, without quotes and a final period."""
    text = content_text(answer.get("content")).strip()
    line = text.splitlines()[0] if text else ""
    line = line.strip().strip("\"'`*#").strip().rstrip(".").strip()
    return line[:NAME_MAX_CHARS].strip() or None


async def name_session(runtime: SessionRuntime, summaries: SummaryModel) -> str | None:
    """Ask for a name and write it; the name written, or ``None``."""
    try:
        call = summaries.for_session(runtime)
        answer = await call.complete(NAME_PROMPT, excerpt(runtime), NAME_MAX_TOKENS)
    except (PiError, OSError) as error:  # a name is a nicety: the session stays as it was
        logger.info("could not name session %s: %s", runtime.id, error)
        return None
    name = cleaned_name(answer) if answer.get("stopReason") not in ("error", "aborted") else None
    if name is None:
        return None
    while runtime.is_streaming or runtime.compacting:
        if runtime.turn is not None and not runtime.turn.done():
            await asyncio.wait([runtime.turn])
        else:
            await runtime.summary_finished.wait()
    if has_a_name_entry(runtime) or runtime.read_only_reason:
        return None  # named meanwhile (by the user), or not writable
    runtime.session.append_session_info(name)
    runtime.tree_changed()
    return name
