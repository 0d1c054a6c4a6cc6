"""The ``scripted_llm`` pytest fixture: a started ``ScriptedLLM`` on a free port, per test, and
scripted answers several tests give.

Import it into a test module or a conftest (``from pi_lsp.scripted_llm_fixtures import
scripted_llm``); pytest-asyncio runs it on the test's event loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM


@pytest_asyncio.fixture
async def scripted_llm() -> AsyncIterator[ScriptedLLM]:
    """A running scripted LLM server with an empty queue; stopped after the test."""
    async with ScriptedLLM() as server:
        yield server


def read_then_edit_app(old_text: str, new_text: str, final_text: str, id_separator: str = "_"):
    """The model reads ``app.py``, replaces ``old_text`` with ``new_text`` in it, and says
    ``final_text`` (tool calls ``call<sep>1`` and ``call<sep>2``)."""
    edit = {"path": "app.py", "edits": [{"oldText": old_text, "newText": new_text}]}
    return (
        replies.tool_calls([(f"call{id_separator}1", "read", {"path": "app.py"})]),
        replies.tool_calls([(f"call{id_separator}2", "edit", edit)]),
        replies.text(final_text),
    )


WORK_TURN_COMMAND = "echo '1 test failed'; exit 1"
WORK_TURN_ANSWER = "Fixed add() at app.py:2; one test still fails."


WORK_TURN_SCRIPT = (
    {
        "kind": "tool_calls",
        "calls": [
            ["call_read", "read", {"path": "app.py"}],
            ["call_grep", "grep", {"pattern": "return", "path": "app.py"}],
        ],
    },
    {
        "kind": "tool_calls",
        "calls": [
            [
                "call_edit",
                "edit",
                {"path": "app.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]},
            ],
            ["call_bash", "bash", {"command": WORK_TURN_COMMAND}],
        ],
    },
    {"kind": "text", "text": WORK_TURN_ANSWER},
)
"""A turn that shows each kind of tool card, as script entries (for the scripted model's own
process, as the editor tests run it): the model reads ``app.py`` and greps it for ``return``,
fixes ``a - b`` into ``a + b``, runs a command that prints a line and exits 1, and answers
:data:`WORK_TURN_ANSWER` (which names ``app.py:2``)."""


def read_edit_bash_grep():
    """:data:`WORK_TURN_SCRIPT` as replies."""
    return tuple(replies.reply_from_json(entry) for entry in WORK_TURN_SCRIPT)
