"""The model call that writes compaction and branch summaries for a session.

A summary is one completion without tools: the cheaper ``compaction.model`` when one is set, else
the session's model, at the session's thinking level, allowed the model's whole output limit.
Both the compactor and the navigator ask for it here, so they call the model the same way.
"""

from __future__ import annotations

from typing import Any

import attrs

from pi_lsp.agent.live_config import LiveConfig
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.compaction.summarize import Complete
from pi_lsp.llm.client import ModelClient, complete
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.stream import CompletionRequest


@attrs.frozen
class SummaryCall:
    model: ModelConfig
    complete: Complete
    """``(system_prompt, user_text, max_output_tokens) -> assistant message``."""
    max_output_tokens: int | None
    context_window: int


class SummaryModel:
    """Builds the summary call of a session (see the module docstring)."""

    def __init__(self, live: LiveConfig, client: ModelClient) -> None:
        self.live = live
        self.client = client

    def for_session(self, runtime: SessionRuntime) -> SummaryCall:
        model = self.live.summary_model(runtime)
        thinking_level = self.live.thinking_level(runtime)
        client = self.client

        async def call(
            system_prompt: str, user_text: str, max_output_tokens: int | None
        ) -> dict[str, Any]:
            user = {
                "role": "user",
                "content": [{"type": "text", "text": user_text}],
                "timestamp": 0,
            }
            request = CompletionRequest(
                model=model,
                system_prompt=system_prompt,
                messages=[user],
                thinking_level=thinking_level,
                max_tokens=max_output_tokens,
            )
            return await complete(client, request)

        return SummaryCall(
            model=model,
            complete=call,
            max_output_tokens=self.live.max_output_tokens(model),
            context_window=self.live.context_window(model),
        )
