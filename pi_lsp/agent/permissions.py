"""Tool permissions as a service: decide, ask through a channel, remember, refuse.

``run_turn`` calls :meth:`Permissions.check` before each tool call. The policy
(``agent/permission_policy.py``) says whether the call may run or what to ask; the question goes
to a :class:`PermissionAsker`, the one part that depends on the front end: over LSP a
``window/showMessageRequest`` (``handlers/permissions.py``), in the ACP mode its own request. An
answer of "Allow for this session" is remembered for the session while the server runs.

Refused, dismissed or unanswered within ``permissions.timeoutSeconds``, the call gets an error
tool result saying so and nothing runs. Aborting the turn while it waits cancels the wait, and
with it the question (the asker withdraws it).
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import attrs

from pi_lsp.agent.permission_policy import PermissionQuestion, question_for
from pi_lsp.resources.permission_settings import PermissionSettings
from pi_lsp.tools.base import EditorBridge, NoEditor, ToolResult, error_result

logger = logging.getLogger(__name__)


class Answer(enum.Enum):
    ALLOW = "Allow"
    ALLOW_FOR_SESSION = "Allow for this session"
    DENY = "Deny"


ANSWERS = tuple(answer.value for answer in Answer)
"""The choices offered, in this order, by every channel."""


class QuestionNotAsked(Exception):
    """The client refused to be asked (it does not offer the request): an expected outcome,
    logged without a traceback; the call is refused as when asking fails."""


class PermissionAsker(Protocol):
    """A channel to the user. ``ask`` returns the answer, or None when the user dismissed the
    question; cancelling it must withdraw the question."""

    async def ask(self, question: PermissionQuestion) -> Answer | None: ...


class NoAsker:
    """No one to ask (no client that answers): every question is refused."""

    async def ask(self, question: PermissionQuestion) -> Answer | None:
        return None


class Permissions:
    """Checks tool calls against the ``permissions`` setting for every session."""

    def __init__(
        self,
        root: Path,
        settings: Callable[[], PermissionSettings],
        trusted: Callable[[], bool],
        asker: PermissionAsker | None = None,
        editor: EditorBridge | None = None,
    ) -> None:
        self.root = root
        self._settings = settings
        self._trusted = trusted
        self.asker: PermissionAsker = asker or NoAsker()
        self._editor = editor or NoEditor()
        self._grants: dict[str, set[str]] = {}

    async def check(
        self,
        session_id: str,
        tool_name: str,
        arguments: dict[str, Any],
        tool_call_id: str = "",
        *,
        read_only: bool = False,
    ) -> ToolResult | None:
        """None when the call may run; else the tool result that refuses it. ``read_only``: the
        tool says it changes nothing (an MCP tool's ``readOnlyHint``)."""
        settings = self._settings()
        question = question_for(
            tool_name,
            arguments,
            root=self.root,
            trusted=self._trusted(),
            settings=settings,
            read_text=self._read_text,
            read_only=read_only,
        )
        if question is None or question.session_grant in self._grants.get(session_id, ()):
            return None
        question = attrs.evolve(
            question, session_id=session_id, tool_call_id=tool_call_id, arguments=arguments
        )
        try:
            answer = await asyncio.wait_for(self.asker.ask(question), settings.timeout_seconds)
        except TimeoutError:
            return _refused(
                question,
                "timeout",
                f"no answer within {settings.timeout_seconds:g} seconds",
            )
        except asyncio.CancelledError:
            raise
        except QuestionNotAsked as error:
            logger.info("the client was not asked about %s: %s", tool_name, error)
            return _refused(question, "error", f"the question could not be asked: {error}")
        except Exception as error:  # a broken channel refuses; it never runs the call
            logger.exception("asking for permission to run %s failed", tool_name)
            return _refused(question, "error", f"the question could not be asked: {error}")
        if answer is Answer.ALLOW_FOR_SESSION:
            self._grants.setdefault(session_id, set()).add(question.session_grant)
            return None
        if answer is Answer.ALLOW:
            return None
        if answer is Answer.DENY:
            return _refused(question, "denied", "the user denied it")
        return _refused(question, "dismissed", "the question was dismissed without an answer")

    def _read_text(self, path: Path) -> str | None:
        text = self._editor.open_document_text(path)
        if text is not None:
            return text
        try:
            return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
        except OSError:
            return None


def _refused(question: PermissionQuestion, decision: str, why: str) -> ToolResult:
    return error_result(
        f"Not run: permission for {question.tool_name} {question.subject!r} was not given "
        f"({why}). Nothing was changed.",
        {"permission": {"decision": decision, "subject": question.subject}},
    )
