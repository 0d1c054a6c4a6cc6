"""Permission questions over ACP: ``session/request_permission`` to the client.

The question goes to the ACP session whose turn asked it and is about the tool call the client
already shows (its ``tool_call`` and every update before the question are sent first): the same
id, title, kind, ``rawInput`` and locations, for ``write``/``edit`` the change as ``diff`` content,
and the status ``pending`` until it runs. The options are allow once, allow always (for this
session, remembered while pi-lsp runs) and reject; they map to :class:`Answer`.

ACP has one way to withdraw a question: ``session/cancel``, after which the client answers every
pending question with the ``cancelled`` outcome. A ``cancelled`` answer therefore ends the turn
as ``session/cancel`` does, whichever of the two arrives first. A question pi-lsp gives up on
(the ``permissions.timeoutSeconds`` timeout, an aborted turn) stops waiting: the SDK drops the
request, and an answer that still arrives is ignored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from acp import RequestError, tool_diff_content
from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallUpdate

from pi_lsp.acp import updates
from pi_lsp.agent.permission_policy import SUMMARY_MAX_BYTES, PermissionQuestion
from pi_lsp.agent.permissions import Answer, QuestionNotAsked

logger = logging.getLogger(__name__)

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT = "reject"

OPTIONS = (
    PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=ALLOW_ALWAYS, name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"),
)
"""What the client offers, in this order."""

ANSWERS = {ALLOW_ONCE: Answer.ALLOW, ALLOW_ALWAYS: Answer.ALLOW_FOR_SESSION, REJECT: Answer.DENY}


@attrs.frozen
class AskedSession:
    """Where a question goes: the ACP session showing the pi session whose turn asks."""

    acp_session_id: str
    flush: Callable[[], Any]
    """Sends every update queued before the question (an awaitable)."""
    cancel_turn: Callable[[], Any]
    """Ends the turn as ``session/cancel`` does."""


Locate = Callable[[str], "AskedSession | None"]
"""The ACP session a pi session id is shown in, or None."""


def permission_tool_call(question: PermissionQuestion, cwd: Path) -> ToolCallUpdate:
    """The tool call a question is about, as ``session/request_permission`` shows it."""
    arguments = dict(question.arguments)
    start = updates.tool_call_start(question.tool_call_id, question.tool_name, arguments, cwd)
    content = list(start.content or [])
    if question.tool_name == "write" and start.locations:
        content = [_write_diff(Path(start.locations[0].path), arguments)]
    why = "; ".join(part for part in (question.summary, question.reason) if part)
    return ToolCallUpdate(
        tool_call_id=question.tool_call_id,
        title=start.title,
        kind=start.kind,
        status="pending",
        locations=start.locations,
        raw_input=arguments,
        content=[*content, *([updates.text_content(why)] if why else [])] or None,
    )


def answer_of(response: RequestPermissionResponse) -> Answer | None:
    """The answer chosen, or None (the ``cancelled`` outcome, or an option not offered)."""
    outcome = response.outcome
    if outcome.outcome != "selected":
        return None
    return ANSWERS.get(outcome.option_id)


class AcpPermissionAsker:
    """Asks the ACP client (implements ``agent.permissions.PermissionAsker``)."""

    def __init__(self, connection: Callable[[], Any], locate: Locate, cwd: Path) -> None:
        self._connection = connection
        self._locate = locate
        self._cwd = cwd

    async def ask(self, question: PermissionQuestion) -> Answer | None:
        asked = self._locate(question.session_id)
        if asked is None:  # the session is not shown to any client: no one can answer
            logger.info("no ACP session shows %s to ask about %s", question.session_id, question)
            return None
        await asked.flush()
        try:
            response = await self._connection().request_permission(
                session_id=asked.acp_session_id,
                tool_call=permission_tool_call(question, self._cwd),
                options=list(OPTIONS),
            )
        except RequestError as error:  # the client's answer, not a fault of pi-lsp
            raise QuestionNotAsked(f"the client answered {error.code}: {error}") from None
        if response.outcome.outcome == "cancelled":
            # ACP's answer to a pending question once the user cancelled the prompt turn.
            asked.cancel_turn()
            await asyncio.sleep(0)  # the turn's cancellation lands here
        return answer_of(response)


def _write_diff(path: Path, arguments: dict[str, Any]) -> Any:
    """A ``write`` as the change it makes: the file's text now (if any) against the new one."""
    new_text = str(arguments.get("content", ""))
    try:
        old_text = (
            path.read_text(encoding="utf-8", errors="replace")
            if path.is_file() and path.stat().st_size <= SUMMARY_MAX_BYTES
            else None
        )
    except OSError:
        old_text = None
    return tool_diff_content(str(path), new_text, old_text)
