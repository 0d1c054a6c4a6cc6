"""The one context pipeline: what a model request carries, built in one place for every front end.

    branch path → context entries → ``context`` hooks → ``convert_to_llm`` → provider request

1. *Branch path*: the entries from the root to the leaf (``Session.branch``).
2. *Context entries*: pi's ``buildSessionContext`` over that path (``session/context.py``): the
   latest compaction summary, branch summaries, custom messages, the kept messages.
3. *Hooks*: extensions' ``context`` hooks (load order, chained) may add, drop or replace messages
   for this request only. They see a deep copy, and nothing they return is written to the session.
4. *Conversion*: ``convert_to_llm`` turns pi's AgentMessages into the provider-neutral messages
   ``llm/`` sends (summaries and custom messages become user messages, bash executions text).

*Choosing* what the model sees (steps 1–3) stays separate from *converting* it (step 4), as in pi
(``transformContext`` then ``convertToLlm``). ``run_turn`` calls ``model_messages`` before every
model request of a turn, the tool rounds included.
"""

from __future__ import annotations

import copy
from typing import Any

from pi_lsp.agent.hooks import session_appender
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.extensions import ContextEvent, ExtensionHost, run_context
from pi_lsp.session.message_types import LlmMessage
from pi_lsp.session.messages import convert_to_llm


async def model_messages(
    runtime: SessionRuntime, extensions: ExtensionHost | None
) -> list[LlmMessage]:
    """The messages of the next model request of ``runtime``'s session, at its leaf."""
    messages: list[Any] = list(runtime.session.build_context().messages)
    hooked = extensions.with_hook("context") if extensions is not None else []
    if hooked:
        assert extensions is not None
        event = ContextEvent(
            session_id=runtime.id,
            messages=copy.deepcopy(messages),
            append=session_appender(runtime),
        )
        messages = await run_context(hooked, event, extensions.timings)
    return convert_to_llm(messages)
