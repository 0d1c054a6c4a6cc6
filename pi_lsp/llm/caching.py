"""Prompt caching: where a request marks its cache breakpoints, and the cache parameters it sends.

pi's rules (``@earendil-works/pi-ai``, ``anthropic-messages`` and ``openai-completions``), with
one addition:

- **Retention** is ``none``, ``short`` (the provider's default, 5 minutes at Anthropic) or
  ``long`` (1 hour at Anthropic, 24 hours at OpenAI). The ``cacheRetention`` setting wins; without
  it ``PI_CACHE_RETENTION=long`` means long; otherwise short (``resolve_cache_retention``).
- **Anthropic-style breakpoints** (``cache_control``), for the providers that take them through
  litellm: Anthropic itself, Claude on Bedrock, Vertex AI and Azure AI, and ``anthropic/*`` models
  on OpenRouter. Like pi: the system prompt, the last tool definition and the newest message. The
  addition, within Anthropic's limit of four: the message that ended the previous request (the
  one before the newest assistant answer). Anthropic looks for a cached prefix at most 20 blocks
  before a breakpoint, and one answer with many parallel tool calls, plus their results, is more
  than that; marking where the last request ended keeps that prefix a cache read anyway. A
  breakpoint on a prefix that is already cached costs nothing. ``long`` adds ``"ttl": "1h"``.
- **Automatic caching** (OpenAI and the providers litellm forwards the parameter to: DeepSeek,
  Mistral, Fireworks, OpenRouter, vLLM…): ``prompt_cache_key`` is the session id (at most 64
  characters, as OpenAI requires), so requests of one session reach the same cache, and
  ``long`` asks for ``prompt_cache_retention: "24h"`` where litellm knows the provider takes it.

``with_cache_breakpoints`` is a pure function over the converted chat messages and tools, so any
transport that sends them can call it. Marks never change what is cached: providers compare
content without its ``cache_control``, so a breakpoint can move on to the next newest message
without invalidating anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.models import model_info

RETENTIONS = ("none", "short", "long")
RETENTION_ENVIRONMENT_VARIABLE = "PI_CACHE_RETENTION"
PROMPT_CACHE_KEY_MAX_LENGTH = 64
LONG_PROMPT_CACHE_RETENTION = "24h"
MAX_BREAKPOINTS = 4
_CLAUDE_HOSTS = ("bedrock", "vertex_ai", "azure_ai")

ChatMessage = dict[str, Any]


def resolve_cache_retention(configured: Any, environ: Mapping[str, str]) -> str:
    """pi's ``resolveCacheRetention``: the setting, else ``PI_CACHE_RETENTION=long``, else short."""
    if configured in RETENTIONS:
        return str(configured)
    if environ.get(RETENTION_ENVIRONMENT_VARIABLE) == "long":
        return "long"
    return "short"


def cache_control(retention: str) -> dict[str, str] | None:
    """The ``cache_control`` a breakpoint carries, or None when caching is off."""
    if retention == "none":
        return None
    if retention == "long":
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def uses_cache_breakpoints(model: ModelConfig) -> bool:
    """Whether ``model`` is reached through a provider that caches at ``cache_control`` marks."""
    prefix, slash, rest = model.call_model.partition("/")
    if not slash:
        return model.provider == "anthropic"
    if prefix == "anthropic":
        return True
    if prefix == "openrouter":
        return rest.startswith("anthropic/")
    if prefix in _CLAUDE_HOSTS and "claude" in rest.lower():
        # litellm's table knows which hosted Claude deployments cache; unknown ones are tried.
        return (model_info(model) or {}).get("supports_prompt_caching") is not False
    return False


def with_cache_breakpoints(
    messages: Sequence[ChatMessage],
    tools: Sequence[dict[str, Any]],
    control: Mapping[str, Any] | None,
    *,
    uncached_tail: int = 0,
) -> tuple[list[ChatMessage], list[dict[str, Any]]]:
    """Copies of ``messages`` and ``tools`` with Anthropic-style breakpoints (module docstring).

    ``uncached_tail`` trailing messages are left unmarked and the newest message before them
    takes the newest-message breakpoint: a summary request's instruction, which no later request
    will repeat, is not worth a cache write.
    """
    marked_messages = list(messages)
    marked_tools = list(tools)
    if control is None:
        return marked_messages, marked_tools
    budget = MAX_BREAKPOINTS
    system = next((i for i, m in enumerate(marked_messages) if m.get("role") == "system"), None)
    if system is not None and (marked := _marked(marked_messages[system], control)) is not None:
        marked_messages[system] = marked
        budget -= 1
    if marked_tools:
        marked_tools[-1] = {**marked_tools[-1], "cache_control": dict(control)}
        budget -= 1
    for index in _conversation_marks(marked_messages, uncached_tail)[:budget]:
        marked = _marked(marked_messages[index], control)
        if marked is not None:
            marked_messages[index] = marked
    return marked_messages, marked_tools


def _conversation_marks(messages: Sequence[ChatMessage], uncached_tail: int) -> list[int]:
    """The newest message (before the uncached tail), then where the previous request ended."""
    newest = len(messages) - 1 - uncached_tail
    if newest < 0 or messages[newest].get("role") == "system":
        return []
    marks = [newest]
    last_answer = next(
        (i for i in range(newest, -1, -1) if messages[i].get("role") == "assistant"), None
    )
    if last_answer is not None:
        previous_end = last_answer - 1
        if previous_end >= 0 and messages[previous_end].get("role") in ("user", "tool"):
            marks.append(previous_end)
    return list(dict.fromkeys(marks))


def _marked(message: ChatMessage, control: Mapping[str, Any]) -> ChatMessage | None:
    """``message`` with its last cacheable part marked; None when it has nothing to mark."""
    content = message.get("content")
    if message.get("role") == "tool":
        # litellm puts a tool message's own cache_control on the tool_result block it becomes.
        return {**message, "cache_control": dict(control)}
    if isinstance(content, str):
        if not content:
            return None
        part = {"type": "text", "text": content, "cache_control": dict(control)}
        return {**message, "content": [part]}
    if not isinstance(content, list):
        return None
    for position in range(len(content) - 1, -1, -1):
        if content[position].get("type") in ("text", "image_url"):
            parts = list(content)
            parts[position] = {**parts[position], "cache_control": dict(control)}
            return {**message, "content": parts}
    return None


def prompt_cache_parameters(
    retention: str, session_id: str | None, supported: Sequence[str]
) -> dict[str, str]:
    """``prompt_cache_key`` and ``prompt_cache_retention`` for the parameters litellm forwards."""
    if retention == "none" or not session_id:
        return {}
    parameters: dict[str, str] = {}
    if "prompt_cache_key" in supported:
        parameters["prompt_cache_key"] = session_id[:PROMPT_CACHE_KEY_MAX_LENGTH]
    if retention == "long" and "prompt_cache_retention" in supported:
        parameters["prompt_cache_retention"] = LONG_PROMPT_CACHE_RETENTION
    return parameters
