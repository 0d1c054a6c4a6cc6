"""One streamed completion, as pi-shaped events ending in a complete message, whatever the wire API.

Use ``AssistantStream`` as an async context manager and iterate ``events()``::

    async with AssistantStream(request) as stream:
        async for event in stream.events():
            ...  # TextDelta, ThinkingDelta, ToolCallStart, ToolCallDelta
    message = stream.message  # the Completed event's pi assistant message

The last event is always ``Completed(message)``: a complete pi assistant message whose
``stopReason`` is ``stop``, ``length``, ``toolUse`` or ``error``. Failures never raise out of
``events()``: an HTTP error, a refused connection, a timeout, an error event in the stream or a
stream that ends without a ``finish_reason`` all end in ``stopReason: "error"`` with an
``errorMessage`` that holds the HTTP status and the provider's text (``"429 RateLimitError:
OpenAIException - Rate limit reached"``), which is what ``failed_messages.is_context_overflow`` and
``failed_messages.is_retryable_error`` classify.

Cancellation is the exception: when the consuming task is cancelled, the HTTP stream is closed
(the connection is released, not leaked) and ``CancelledError`` propagates. The caller then
persists ``stream.partial_message("aborted")``, which keeps the text, thinking and tool calls
received so far. Leaving the ``async with`` block closes the stream too, whoever stops
iterating early.

Where the chunks come from is ``_chunks``: the wire APIs pi-lsp speaks itself for the providers of
its table (``providers.py``: ``direct.py`` for ``openai-completions``, ``openai_responses.py`` for
``openai-responses``, ``anthropic_direct.py`` for ``anthropic-messages``,
``google_generative_ai.py`` for Gemini; plain dicts, no litellm), litellm for the long tail (its
chunk objects, litellm imported on that first use); the model double feeds scripted ones. Every
stream turns chunks into events and messages the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from typing import Any, Self

import attrs

from pi_lsp.llm import (
    anthropic_direct,
    direct,
    google_generative_ai,
    openai_responses,
    providers,
    vscode_lm,
)
from pi_lsp.llm._litellm import load_litellm, preload_litellm
from pi_lsp.llm.assistant import PartialAssistant
from pi_lsp.llm.caching import (
    cache_control,
    prompt_cache_parameters,
    uses_cache_breakpoints,
    with_cache_breakpoints,
)
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.converted_history import ConvertedHistory
from pi_lsp.llm.credentials import UnresolvedKeyError, request_auth, runs_commands
from pi_lsp.llm.editor_models import PROVIDER as EDITOR_PROVIDER
from pi_lsp.llm.editor_models import EditorModels
from pi_lsp.llm.events import (
    Completed,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
)
from pi_lsp.llm.messages import (
    THOUGHT_SIGNATURE_FIELD,
    ToolSpec,
    history_chat_messages,
    system_messages,
    tools_to_openai,
)
from pi_lsp.llm.models import supports_reasoning
from pi_lsp.llm.provider_errors import describe_error
from pi_lsp.llm.secrets import redact_secrets
from pi_lsp.llm.usage import usage_from_openai
from pi_lsp.protocol import StopReason
from pi_lsp.session.message_types import AssistantMessage, LlmMessage

DEFAULT_TIMEOUT_SECONDS = 600.0
REASONING_FIELD = "reasoning_content"


@attrs.frozen
class CompletionRequest:
    """Everything one completion needs: the model, the context and the tools it may call."""

    model: ModelConfig
    system_prompt: str
    messages: Sequence[LlmMessage]
    tools: Sequence[ToolSpec] = ()
    thinking_level: str = "off"
    max_tokens: int | None = None
    timeout: float | None = DEFAULT_TIMEOUT_SECONDS
    session_id: str | None = None
    """Keys the provider's prompt cache (``prompt_cache_key``); None sends no key."""
    cache_retention: str = "short"
    """``none``, ``short`` or ``long`` (see ``caching.py``)."""
    uncached_tail: int = 0
    """Trailing messages not worth a cache breakpoint (a summary request's instruction)."""
    history: ConvertedHistory | None = attrs.field(default=None, eq=False)
    """The session's previous conversion, extended by this request's where ``direct`` sends it
    (see ``converted_history.py``); None converts every message."""


def chat_payload(request: CompletionRequest) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The request's chat messages and tools as sent, cache breakpoints included."""
    model = request.model
    options = (model.provider, model.model_id, model.accepts_images)
    if request.history is not None and direct.serves(model):
        history = request.history.convert(request.messages, *options)
    else:
        history = history_chat_messages(request.messages, *options, {})
    messages = system_messages(request.system_prompt) + history
    tools = tools_to_openai(request.tools)
    if not uses_cache_breakpoints(model):
        return messages, tools
    return with_cache_breakpoints(
        messages,
        tools,
        cache_control(request.cache_retention),
        uncached_tail=request.uncached_tail,
    )


def completion_arguments(request: CompletionRequest) -> dict[str, Any]:
    """The keyword arguments of ``litellm.acompletion`` for ``request``."""
    model = request.model
    messages, tools = chat_payload(request)
    arguments: dict[str, Any] = {
        "model": model.call_model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        # pi's agent owns retries (backoff, events, abort); the SDK's silent ones would hide errors.
        "max_retries": 0,
        # A provider that lacks an optional parameter (reasoning_effort) should ignore it, not fail.
        "drop_params": True,
    }
    if tools:
        arguments["tools"] = tools
    arguments.update(
        prompt_cache_parameters(
            request.cache_retention, request.session_id, _supported_parameters(model)
        )
    )
    optional = {
        "api_base": model.api_base,
        "api_key": model.api_key,
        "timeout": request.timeout,
        _max_tokens_field(model): request.max_tokens or model.max_output_tokens,
        "reasoning_effort": _reasoning_effort(request),
    }
    arguments.update({key: value for key, value in optional.items() if value is not None})
    _apply_compat(arguments, model)
    return arguments


def _supported_parameters(model: ModelConfig) -> tuple[str, ...]:
    """The OpenAI parameters litellm forwards to ``model``'s provider (none when it cannot say)."""
    table_provider = providers.table_provider(model)
    if table_provider is not None and (direct.serves(model) or openai_responses.serves(model)):
        return table_provider.cache_parameters
    if anthropic_direct.serves(model) or google_generative_ai.serves(model):
        return ()  # Anthropic caches at the cache_control breakpoints, Gemini implicitly
    return _parameters_litellm_forwards(model.call_model, model.api_base)


@functools.cache
def _parameters_litellm_forwards(model: str, api_base: str | None) -> tuple[str, ...]:
    litellm = load_litellm()
    try:
        bare_model, provider = litellm.get_llm_provider(model, api_base=api_base)[:2]
        return tuple(litellm.get_supported_openai_params(bare_model, provider) or ())
    except Exception:  # noqa: BLE001 — an unknown provider just gets no cache parameters
        return ()


def _max_tokens_field(model: ModelConfig) -> str:
    field = model.compat.get("maxTokensField")
    return "max_completion_tokens" if field == "max_completion_tokens" else "max_tokens"


def _apply_compat(arguments: dict[str, Any], model: ModelConfig) -> None:
    """The ``models.json`` ``compat`` flags litellm has an equivalent for; ``samplingParams``."""
    if model.compat.get("supportsUsageInStreaming") is False:
        arguments.pop("stream_options", None)
    if model.compat.get("supportsReasoningEffort") is False:
        arguments.pop("reasoning_effort", None)
    extra_body: dict[str, Any] = {}
    routing = model.compat.get("openRouterRouting")
    if isinstance(routing, dict):
        extra_body["provider"] = routing
    if model.sampling_params:
        extra_body.update(model.sampling_params)
    if extra_body:
        arguments["extra_body"] = extra_body


def _reasoning_effort(request: CompletionRequest) -> str | None:
    effort = providers.reasoning_effort(request.thinking_level)
    if effort is None or not supports_reasoning(request.model):
        return None
    return effort


class AssistantStream:
    """One completion: iterate ``events()`` once; see the module docstring for the contract."""

    def __init__(
        self, request: CompletionRequest, editor_models: EditorModels | None = None
    ) -> None:
        self.request = request
        self._editor_models = editor_models or EditorModels()
        self.partial = PartialAssistant(
            provider=request.model.provider,
            model=request.model.model_id,
            api=_recorded_api(request.model),
        )
        self.message: AssistantMessage | None = None
        self._events: AsyncIterator[StreamEvent] | None = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the event iterator (and with it the HTTP stream) if it is still open."""
        if self._events is not None:
            close = getattr(self._events, "aclose", None)
            if close is not None:
                await close()

    def partial_message(
        self, stop_reason: StopReason = "aborted", error_message: str | None = None
    ) -> AssistantMessage:
        """pi's assistant message for what arrived so far, ending with ``stop_reason``."""
        return self.partial.to_message(stop_reason, error_message)

    def events(self) -> AsyncIterator[StreamEvent]:
        if self._events is None:
            self._events = self._run()
        return self._events

    async def _run(self) -> AsyncIterator[StreamEvent]:
        chunks = self._chunks()
        error_message: str | None = None
        try:
            async for chunk in chunks:
                for event in self._events_of(chunk):
                    yield event
        except asyncio.CancelledError:
            raise
        except UnresolvedKeyError as error:
            error_message = str(error)
        except Exception as error:  # noqa: BLE001 — every provider failure becomes an error message
            # A provider may quote the key it refused: no secret leaves in an error text.
            error_message = redact_secrets(describe_error(error))
        finally:
            await chunks.aclose()
        self.message = self.partial.to_message(None, error_message)
        yield Completed(self.message)

    async def _chunks(self) -> AsyncGenerator[Any, None]:
        """The provider's streamed chunks: dicts from the direct paths, or litellm's objects."""
        model = self.request.model
        if model.provider == EDITOR_PROVIDER:
            async for chunk in self._editor_chunks():
                yield chunk
            return
        native = _native_chunks(model)
        # litellm (seconds to import) loads off the event loop, before anything asks it questions.
        litellm = None if native is not None else await preload_litellm()
        arguments = completion_arguments(self.request)
        # Keys may come from a command: resolved off the event loop, and only now. Without one
        # only the environment is read, so no thread hop adds to the turn.
        if runs_commands(model):
            auth = await asyncio.to_thread(request_auth, model)
        else:
            auth = request_auth(model)
        if auth.api_key is not None:
            arguments["api_key"] = auth.api_key
        if native is not None:
            chunks = native(model, arguments, auth.headers or {})
            try:
                async for chunk in chunks:
                    yield chunk
            finally:
                await chunks.aclose()
            return
        assert litellm is not None
        if auth.headers:
            arguments["extra_headers"] = dict(auth.headers)
        response = None
        try:
            response = await litellm.acompletion(**arguments)
            async for chunk in response:
                yield chunk
        finally:
            if response is not None:
                await _close_quietly(response)

    async def _editor_chunks(self) -> AsyncGenerator[dict[str, Any], None]:
        """The answer of one of the editor's models (``vscode_lm.py``)."""
        request, model = self.request, self.request.model
        params = vscode_lm.chat_params(
            model.model_id,
            request.system_prompt,
            request.messages,
            request.tools,
            accepts_images=model.accepts_images,
        )
        chunks = vscode_lm.stream_chunks(self._editor_models, params, model.model, request.timeout)
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            await chunks.aclose()

    def _events_of(self, chunk: Any) -> list[StreamEvent]:
        usage = _get(chunk, "usage")
        if usage is not None:
            self.partial.usage = usage_from_openai(usage, self.request.model)
        choices = _get(chunk, "choices")
        if not choices:
            return []
        choice = choices[0]
        finish_reason = _get(choice, "finish_reason")
        if finish_reason:
            self.partial.finish_reason = finish_reason
        delta = _get(choice, "delta")
        return self._delta_events(delta) if delta is not None else []

    def _delta_events(self, delta: Any) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        reasoning = _get(delta, REASONING_FIELD)
        if not reasoning and type(delta) is dict:
            # litellm reads the other names servers use (vLLM, llama.cpp, OpenRouter) as this one.
            reasoning = delta.get("reasoning") or delta.get("reasoning_text")
        if isinstance(reasoning, str) and reasoning:
            self.partial.add_thinking(reasoning, REASONING_FIELD)
            events.append(ThinkingDelta(reasoning))
        for block in _get(delta, "thinking_blocks") or ():
            if _get(block, "type") == "redacted_thinking":
                data = _get(block, "data")
                if isinstance(data, str) and data:
                    self.partial.add_redacted_thinking(data)
                continue
            signature = _get(block, "signature")
            if isinstance(signature, str) and signature:
                self.partial.sign_thinking(signature)
        content = _get(delta, "content")
        if isinstance(content, str) and content:
            self.partial.add_text(content)
            events.append(TextDelta(content))
        for call in _get(delta, "tool_calls") or ():
            events.extend(self._tool_call_events(call))
        return events

    def _tool_call_events(self, call: Any) -> list[StreamEvent]:
        index = _get(call, "index")
        if not isinstance(index, int):
            index = self.partial.tool_call_index(_get(call, "id"))
        function = _get(call, "function")
        name = _get(function, "name") or ""
        events: list[StreamEvent] = []
        if self.partial.start_tool_call(index, _get(call, "id") or "", name):
            events.append(ToolCallStart(index, _get(call, "id") or "", name))
        signature = _get(call, THOUGHT_SIGNATURE_FIELD) if type(call) is dict else None
        if isinstance(signature, str) and signature:
            self.partial.sign_tool_call(index, signature)
        arguments = _get(function, "arguments")
        if isinstance(arguments, str) and arguments:
            self.partial.add_tool_arguments(index, arguments)
            events.append(ToolCallDelta(index, arguments))
        return events


def _recorded_api(model: ModelConfig) -> str:
    """The wire API an answer records (pi's ``api``): the one pi-lsp speaks for ``model``, else
    the chat completions litellm's chunks come in."""
    if model.provider == EDITOR_PROVIDER:
        return vscode_lm.API
    found = providers.route(model)
    if found is not None and _native_chunks(model) is not None:
        return found.wire_api
    return "openai-completions"


def _native_chunks(model: ModelConfig) -> Any:
    """The chunk stream of the wire API pi-lsp speaks itself for ``model``, or None (litellm)."""
    if direct.serves(model):
        return direct.stream_chunks
    if anthropic_direct.serves(model):
        return anthropic_direct.stream_chunks
    if openai_responses.serves(model):
        return openai_responses.stream_chunks
    if google_generative_ai.serves(model):
        return google_generative_ai.stream_chunks
    return None


def _get(value: Any, key: str) -> Any:
    """``key`` of a chunk part: a dict (direct streaming) or an object (litellm's chunks)."""
    if type(value) is dict:
        return value.get(key)
    if value is None:
        return None
    if isinstance(value, Mapping):
        return value.get(key)
    return getattr(value, key, None)


async def _close_quietly(response: Any) -> None:
    close = getattr(response, "aclose", None)
    if close is None:
        return
    with contextlib.suppress(Exception):
        await close()
