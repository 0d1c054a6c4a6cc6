"""Which model to call: the ``ModelConfig`` and its resolution from settings and environment.

Precedence, first hit wins:

1. ``PI_LSP_MODEL`` in the environment: a litellm model string (``"openai/gpt-4o"``);
2. the ``model`` setting: a litellm model string;
3. pi's own ``defaultProvider`` + ``defaultModel`` settings, joined as ``"provider/model"``
   (pi's provider names that litellm spells differently are translated, ``google`` → ``gemini``).

No hit means no model is configured (``None``). ``apiBase``/``apiKey``/``contextWindow``/
``maxOutputTokens``/``reasoning`` settings refine the model; ``PI_LSP_API_BASE``/``PI_LSP_API_KEY``
override the first two (end-to-end tests point a server subprocess at a scripted LLM with them).
Everything else, API keys above all, comes from litellm's usual variables (``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY``, ``OPENAI_API_BASE``...), which litellm reads itself.

``provider``/``model_id`` are what pi records on assistant messages and ``model_change`` entries,
in pi's spelling: the litellm string split at its first ``/`` (``"openrouter/anthropic/claude"``
→ ``openrouter`` + ``anthropic/claude``). A string without a provider prefix lets litellm route
by model name; its provider is guessed from the name the same way (``claude-…`` → ``anthropic``,
``gemini-…`` → ``google``) and is ``openai`` otherwise, litellm's own default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

# pi's provider name → litellm's prefix, where they differ. The reverse map names what pi records.
_PI_TO_LITELLM_PROVIDER = {
    "google": "gemini",
    "google-vertex": "vertex_ai",
    "amazon-bedrock": "bedrock",
    "azure-openai-responses": "azure",
    "github-copilot": "github_copilot",
    "vercel-ai-gateway": "vercel_ai_gateway",
}
_LITELLM_TO_PI_PROVIDER = {value: key for key, value in _PI_TO_LITELLM_PROVIDER.items()}
_UNPREFIXED_NAME_PROVIDERS = (
    ("claude", "anthropic"),
    ("gemini", "google"),
    ("mistral", "mistral"),
    ("codestral", "mistral"),
    ("grok", "xai"),
    ("deepseek", "deepseek"),
)
# Local OpenAI-compatible servers need no key, but the OpenAI client refuses to start without one.
_PLACEHOLDER_API_KEY = "no-key"


@attrs.frozen
class ModelConfig:
    """One model to call through litellm, with what pi records about it."""

    model: str
    provider: str
    model_id: str
    api_base: str | None = None
    api_key: str | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    reasoning: bool = False


def split_model_string(model: str) -> tuple[str, str]:
    """pi's ``(provider, model_id)`` for a litellm model string."""
    prefix, slash, rest = model.partition("/")
    if slash:
        return _LITELLM_TO_PI_PROVIDER.get(prefix, prefix), rest
    lowered = model.lower()
    for name_prefix, provider in _UNPREFIXED_NAME_PROVIDERS:
        if lowered.startswith(name_prefix):
            return provider, model
    return "openai", model


def litellm_model_string(provider: str, model_id: str) -> str:
    """The litellm model string for pi's ``provider`` + ``model_id``."""
    return f"{_PI_TO_LITELLM_PROVIDER.get(provider, provider)}/{model_id}"


def resolve_model(settings: Mapping[str, Any], environ: Mapping[str, str]) -> ModelConfig | None:
    """The configured model (see the module docstring for the precedence), or ``None``."""
    model = _model_string(settings, environ)
    if model is None:
        return None
    provider, model_id = split_model_string(model)
    api_base = _text(environ.get("PI_LSP_API_BASE")) or _text(settings.get("apiBase"))
    api_key = _text(environ.get("PI_LSP_API_KEY")) or _text(settings.get("apiKey"))
    if api_base and not api_key and _needs_placeholder_key(model, environ):
        api_key = _PLACEHOLDER_API_KEY
    return ModelConfig(
        model=model,
        provider=provider,
        model_id=model_id,
        api_base=api_base,
        api_key=api_key,
        context_window=_positive_int(settings.get("contextWindow")),
        max_output_tokens=_positive_int(settings.get("maxOutputTokens")),
        reasoning=settings.get("reasoning") is True,
    )


def _model_string(settings: Mapping[str, Any], environ: Mapping[str, str]) -> str | None:
    explicit = _text(environ.get("PI_LSP_MODEL")) or _text(settings.get("model"))
    if explicit:
        return explicit
    provider = _text(settings.get("defaultProvider"))
    model_id = _text(settings.get("defaultModel"))
    if provider and model_id:
        return litellm_model_string(provider, model_id)
    return None


def _needs_placeholder_key(model: str, environ: Mapping[str, str]) -> bool:
    is_openai_compatible = (
        model.startswith(("openai/", "hosted_vllm/", "lm_studio/")) or "/" not in model
    )
    return is_openai_compatible and not environ.get("OPENAI_API_KEY")


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _positive_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None
