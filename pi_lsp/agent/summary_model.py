"""The model call that writes compaction and branch summaries for a session.

A summary is one completion: the cheaper ``compaction.model`` when one is set, else the
session's model, at the session's thinking level, allowed the model's whole output limit. Both
the compactor and the navigator ask for it here, so they call the model the same way.

Two forms (``compaction/prompts.py``). The pasted form is pi's: a summarizer system prompt, no
tools, the conversation as text, and caching off (pi too sends summaries with
``cacheRetention: "none"``, since nothing later reuses them). The in-place form is offered
(``SummaryCall.in_cache``) when the provider should still hold the conversation in its prompt
cache: the summary model is the conversation's model, caching is on and the latest answered
request showed the provider caching, within its TTL. It resends that request's system prompt,
tools, thinking level and message prefix unchanged, with the cache key and breakpoints of a
conversation request, and appends the instructions as one uncached message; so the prefix is
read from the cache at a tenth of the input price. A prefix that was not part of that request,
or that would leave the answer less than ``MINIMUM_SUMMARY_TOKENS`` of the window, or whose
cache reads would cost more than the pasted form's uncached text (``_cheaper_in_place``), is not
sent in place.

A summary that fails with a transient provider error (a rate limit, an overload, a dropped
stream) is asked again with the turns' ``retry`` settings and backoff, as pi 1.6 does, between
``summarization_retry_scheduled`` / ``summarization_retry_attempt_start`` events and a closing
``summarization_retry_finished``; an abort cancels the wait like the call.
"""

from __future__ import annotations

import asyncio
import time

import attrs

from pi_lsp.agent.live_config import LiveConfig
from pi_lsp.agent.runtime import CacheAnchor, SessionRuntime
from pi_lsp.compaction.summarize import Complete, ConversationInCache, InPlaceRequest
from pi_lsp.compaction.tokens import estimate_context_tokens
from pi_lsp.llm.client import ModelClient, complete
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.failed_messages import is_retryable_error, retry_delay_ms
from pi_lsp.llm.models import model_info
from pi_lsp.llm.stream import CompletionRequest
from pi_lsp.protocol import (
    CompactionReason,
    SummarizationRetryAttemptStartEvent,
    SummarizationRetryFinishedEvent,
    SummarizationRetryScheduledEvent,
    SummarizationSource,
)
from pi_lsp.session.message_types import AssistantMessage, TextContent, UserMessage
from pi_lsp.session.messages import convert_to_llm

CACHE_TTL_SECONDS = {"short": 300.0, "long": 3600.0}
TTL_SAFETY_SECONDS = 20.0
"""A cache entry this close to expiring is not counted on: the request may arrive too late."""
INSTRUCTION_ALLOWANCE_TOKENS = 2048
MINIMUM_SUMMARY_TOKENS = 4096


@attrs.frozen
class SummaryCall:
    model: ModelConfig
    complete: Complete
    """``(system_prompt, user_text, max_output_tokens) -> assistant message`` (pasted form)."""
    max_output_tokens: int | None
    context_window: int
    in_cache: ConversationInCache | None = None
    """The in-place form, when the provider should still cache the conversation."""


class SummaryModel:
    """Builds the summary call of a session (see the module docstring)."""

    def __init__(self, live: LiveConfig, client: ModelClient) -> None:
        self.live = live
        self.client = client

    def for_session(
        self,
        runtime: SessionRuntime,
        source: SummarizationSource = "compaction",
        reason: CompactionReason | None = None,
    ) -> SummaryCall:
        """The summary call of ``runtime``'s session; ``source`` and ``reason`` (a compaction's)
        go into the retry events."""
        model = self.live.summary_model(runtime)
        thinking_level = self.live.thinking_level(runtime)
        retrying = _Retrying(self.live, runtime, source, reason)
        client = self.client

        async def call(
            system_prompt: str, user_text: str, max_output_tokens: int | None
        ) -> AssistantMessage:
            request = CompletionRequest(
                model=model,
                system_prompt=system_prompt,
                messages=[_user_message(user_text)],
                thinking_level=thinking_level,
                max_tokens=max_output_tokens,
                cache_retention="none",
            )
            return await retrying.complete(client, request)

        window = self.live.context_window(model)
        retrying.context_window = window
        return SummaryCall(
            model=model,
            complete=call,
            max_output_tokens=self.live.max_output_tokens(model),
            context_window=window,
            in_cache=self._in_cache(runtime, model, window, retrying),
        )

    def _in_cache(
        self, runtime: SessionRuntime, model: ModelConfig, window: int, retrying: _Retrying
    ) -> ConversationInCache | None:
        anchor = runtime.cache_anchor
        if anchor is None or not _still_cached(anchor, model):
            return None
        counter = self.live.token_counter()
        client = self.client

        async def call(summary: InPlaceRequest) -> AssistantMessage | None:
            messages = convert_to_llm(summary.prefix)
            shared = min(len(messages), len(anchor.request.messages))
            if not shared or messages[:shared] != list(anchor.request.messages[:shared]):
                return None
            # Counted like the pasted text, so the two compare; the last answer's usage also
            # covers the system prompt and the tools, which the window must hold too.
            prefix_tokens = sum(counter.estimate_message_tokens(m) for m in summary.prefix)
            reported = estimate_context_tokens(summary.prefix, counter).tokens
            room = int(window - max(prefix_tokens, reported)) - INSTRUCTION_ALLOWANCE_TOKENS
            if room < MINIMUM_SUMMARY_TOKENS:
                return None
            pasted_tokens = counter.estimate_message_tokens(_user_message(summary.pasted_text))
            if not _cheaper_in_place(model, prefix_tokens, pasted_tokens):
                return None
            request = attrs.evolve(
                anchor.request,
                messages=[*messages, _user_message(summary.instruction)],
                max_tokens=min(summary.max_output_tokens or room, room),
                uncached_tail=1,
                history=None,  # the turns' conversion is the session's, not this one-off's
            )
            return await retrying.complete(client, request)

        return ConversationInCache(runtime.session.build_context().messages, call)


class _Retrying:
    """The retries of one summary's model calls (see the module docstring)."""

    def __init__(
        self,
        live: LiveConfig,
        runtime: SessionRuntime,
        source: SummarizationSource,
        reason: CompactionReason | None,
    ) -> None:
        self.settings = live.current.retry_settings()
        self.events = runtime.events
        self.source: SummarizationSource = source
        self.reason = reason
        self.context_window: int | None = None

    async def complete(self, client: ModelClient, request: CompletionRequest) -> AssistantMessage:
        attempt = 0
        try:
            while True:
                message = await complete(client, request)
                if not self._should_retry(message, attempt):
                    return message
                attempt += 1
                delay = retry_delay_ms(attempt, self.settings.base_delay_ms)
                self.events.emit(
                    SummarizationRetryScheduledEvent(
                        attempt,
                        self.settings.max_retries,
                        delay,
                        str(message.get("errorMessage") or ""),
                    )
                )
                await asyncio.sleep(delay / 1000)
                self.events.emit(SummarizationRetryAttemptStartEvent(self.source, self.reason))
        finally:
            if attempt:
                self.events.emit(SummarizationRetryFinishedEvent())

    def _should_retry(self, message: AssistantMessage, attempt: int) -> bool:
        settings = self.settings
        return (
            settings.enabled
            and attempt < settings.max_retries
            and is_retryable_error(message, self.context_window)
        )


def _still_cached(anchor: CacheAnchor, model: ModelConfig) -> bool:
    """Whether ``anchor``'s prefix should still be in the provider's cache for ``model``."""
    request = anchor.request
    if not anchor.cached or request.model != model or request.cache_retention == "none":
        return False
    ttl = CACHE_TTL_SECONDS.get(request.cache_retention, CACHE_TTL_SECONDS["short"])
    return time.monotonic() - anchor.sent_at < ttl - TTL_SAFETY_SECONDS


def _cheaper_in_place(model: ModelConfig, prefix_tokens: int, pasted_tokens: int) -> bool:
    """Whether reading ``prefix_tokens`` from the cache costs less than sending the pasted form's
    ``pasted_tokens`` uncached, at ``model``'s prices. At Anthropic's tenth of the input price
    that is so unless the pasted text is very short (the first part of a split turn); at the
    half of OpenAI's older models a pasted form with long tool outputs cut short is often the
    cheaper one. A model without prices (a local server) is asked in place: a cached prefix is
    also the faster one to process."""
    prices = model_info(model) or {}
    read_price, input_price = (
        prices.get("cache_read_input_token_cost"),
        prices.get("input_cost_per_token"),
    )
    if not isinstance(read_price, (int, float)) or not isinstance(input_price, (int, float)):
        return True
    if not input_price:
        return True
    return prefix_tokens * read_price < pasted_tokens * input_price


def _user_message(text: str) -> UserMessage:
    return UserMessage(role="user", content=[TextContent(type="text", text=text)], timestamp=0)
