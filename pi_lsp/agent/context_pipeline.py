"""The one context pipeline: what a model request carries, built in one place for every front end.

    branch path → context entries → ``context`` hooks → ``convert_to_llm`` → provider request

1. *Branch path*: the entries from the root to the leaf (``Session.branch``).
2. *Context entries*: pi's ``buildSessionContext`` over that path (``session/context.py``): the
   latest compaction summary, branch summaries, custom messages, the kept messages.
3. *Hooks*: extensions' ``context`` hooks (load order, chained) may add, drop or replace messages
   for this request only. They see a deep copy, and nothing they return is written to the session
   (``event.edit_context`` writes a pi 1.6 context edit, for the requests that follow).
4. *Conversion*: ``convert_to_llm`` turns pi's AgentMessages into the provider-neutral messages
   ``llm/`` sends (summaries and custom messages become user messages, bash executions text).

*Choosing* what the model sees (steps 1–3) stays separate from *converting* it (step 4), as in pi
(``transformContext`` then ``convertToLlm``). ``run_turn`` calls ``model_messages`` before every
model request of a turn, the tool rounds included; the context inspector (``context_inspector.py``)
calls ``chosen_context`` for the same messages, with the entry each one comes from.
"""

from __future__ import annotations

import copy
import difflib
import json
from typing import Any

import attrs

from pi_lsp.agent.context_edits import extension_editor
from pi_lsp.agent.hooks import session_appender
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.extensions import ContextEvent, ExtensionHost, run_context
from pi_lsp.session.message_types import LlmMessage
from pi_lsp.session.messages import convert_to_llm


@attrs.frozen
class ChosenContext:
    """The AgentMessages of the next request (steps 1–3) and, for each, the entry it comes from
    (``None``: a ``context`` hook added it)."""

    messages: list[Any]
    entry_ids: list[str | None]


async def model_messages(
    runtime: SessionRuntime, extensions: ExtensionHost | None
) -> list[LlmMessage]:
    """The messages of the next model request of ``runtime``'s session, at its leaf."""
    return convert_to_llm((await chosen_context(runtime, extensions)).messages)


async def chosen_context(
    runtime: SessionRuntime, extensions: ExtensionHost | None, *, inspecting: bool = False
) -> ChosenContext:
    """Steps 1–3: what the model will see, before conversion. ``inspecting`` (the context
    inspector) runs the ``context`` hooks without letting them write to the session, and keeps
    track of the entry each message came from."""
    messages: list[Any] = list(runtime.session.build_context().messages)
    hooked = extensions.with_hook("context") if extensions is not None else []
    if not hooked and not inspecting:
        return ChosenContext(messages, [])
    entry_ids: list[str | None] = [
        str(projected.entry.get("id"))
        for projected in runtime.session.projection()
        for _ in projected.messages
    ]
    if not hooked:
        return ChosenContext(messages, entry_ids)
    assert extensions is not None
    event = ContextEvent(
        session_id=runtime.id,
        messages=copy.deepcopy(messages),
        entry_ids=[entry_id or "" for entry_id in entry_ids],
        **({"append": _refused, "edit": _refused} if inspecting else _writers(runtime)),
    )
    chosen = await run_context(hooked, event, extensions.timings)
    return ChosenContext(chosen, _sources(messages, entry_ids, chosen))


def _writers(runtime: SessionRuntime) -> dict[str, Any]:
    return {"append": session_appender(runtime), "edit": extension_editor(runtime)}


def _refused(*_: Any) -> str:
    raise RuntimeError("the context inspector runs context hooks without writing to the session")


def _sources(
    original: list[Any], entry_ids: list[str | None], chosen: list[Any]
) -> list[str | None]:
    """The entry of each chosen message: a message the hooks passed on unchanged keeps its
    entry; one they added or changed has none."""
    if chosen == original:
        return list(entry_ids)
    keys = [_key(message) for message in original]
    matcher = difflib.SequenceMatcher(None, keys, [_key(message) for message in chosen], False)
    sources: list[str | None] = [None] * len(chosen)
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            sources[block.b + offset] = entry_ids[block.a + offset]
    return sources


def _key(message: Any) -> str:
    return json.dumps(message, sort_keys=True, default=str)
