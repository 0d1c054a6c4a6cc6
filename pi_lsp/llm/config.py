"""Which model to call: the ``ModelConfig`` and its resolution from settings, pi's files and keys.

Precedence for the model, first hit wins:

1. ``PI_LSP_MODEL`` in the environment: a model reference;
2. the ``model`` setting: a model reference;
3. pi's own choice (``catalog.ModelCatalog.choose``): the ``enabledModels`` scope,
   ``defaultProvider`` + ``defaultModel``, the default model of a provider that has a key, a
   ``models.json`` model.

A model reference is a litellm model string (``"openai/gpt-4o"``) or pi's ``provider/modelId``
of a ``models.json`` provider (``catalog.py``). No hit means no model is configured (``None``).
``apiBase``/``contextWindow``/``maxOutputTokens``/``reasoning`` settings refine a litellm model;
``PI_LSP_API_BASE``/``PI_LSP_API_KEY`` override its endpoint and key (end-to-end tests point a
server subprocess at a scripted LLM with them). The key otherwise comes from the provider's
credential (``credentials.py``: the editor, ``auth.json``, ``models.json``, the environment).

``provider``/``model_id`` are what pi records on assistant messages and ``model_change`` entries,
in pi's spelling: the litellm string split at its first ``/`` (``"openrouter/anthropic/claude"``
→ ``openrouter`` + ``anthropic/claude``). A string without a provider prefix lets litellm route
by model name; its provider is guessed from the name the same way (``claude-…`` → ``anthropic``,
``gemini-…`` → ``google``) and is ``openai`` otherwise, litellm's own default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from pi_lsp.protocol import KeyStatus, ModelSource

if TYPE_CHECKING:
    from pi_lsp.llm.credentials import Credential
    from pi_lsp.resources.models_file import ModelCost


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
PLACEHOLDER_API_KEY = "no-key"


@attrs.frozen
class ModelConfig:
    """One model to call through litellm, with what pi records about it."""

    model: str
    """The reference a user knows it by (``pi/setModel``, ``pi/state``)."""
    provider: str
    model_id: str
    api_base: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    """A key given directly (``PI_LSP_API_KEY``, a local server's placeholder)."""
    context_window: int | None = None
    max_output_tokens: int | None = None
    reasoning: bool = False
    litellm_model: str | None = None
    """The litellm model string to call, when it is not ``model`` (``models.json`` models)."""
    credential: Credential | None = None
    """Where the provider's key comes from; resolved only when a request is sent."""
    headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    """Extra request headers as ``models.json`` writes them (``$VAR``, ``!command``, literals)."""
    auth_header: bool = False
    """``models.json``'s ``authHeader``: also send ``Authorization: Bearer <key>``."""
    compat: Mapping[str, Any] = attrs.field(factory=dict)
    sampling_params: Mapping[str, Any] = attrs.field(factory=dict)
    cost: ModelCost | None = None
    """Prices per million tokens from ``models.json`` (else litellm's table prices the call)."""
    accepts_images: bool = True
    """``models.json``'s ``input`` lists ``image`` (pi's default for a model of its own is text
    only); images sent to a model without it become a placeholder, as pi does."""
    name: str | None = None
    source: ModelSource = "settings"
    key_status: KeyStatus = "unknown"

    @property
    def call_model(self) -> str:
        """The model string litellm is called with."""
        return self.litellm_model or self.model


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


def resolve_model(
    settings: Mapping[str, Any], environ: Mapping[str, str], catalog: Any = None
) -> ModelConfig | None:
    """The configured model (see the module docstring for the precedence), or ``None``.

    ``catalog`` (a ``catalog.ModelCatalog``) brings pi's files and the editor's keys; without one
    only the settings and the environment count.
    """
    from pi_lsp.llm.catalog import ModelCatalog

    catalog = catalog or ModelCatalog(None, None, None, environ)
    reference = catalog.choose(settings, _table_for(settings))
    return catalog.resolve(reference, settings) if reference else None


def local_placeholder_key(
    model: str, environ: Mapping[str, str], api_base: str | None
) -> str | None:
    """A dummy key for an OpenAI-compatible endpoint of its own (``api_base``) that needs none:
    the OpenAI client refuses to start without one."""
    is_openai_compatible = (
        model.startswith(("openai/", "hosted_vllm/", "lm_studio/")) or "/" not in model
    )
    if api_base and is_openai_compatible and not environ.get("OPENAI_API_KEY"):
        return PLACEHOLDER_API_KEY
    return None


def _table_for(settings: Mapping[str, Any]) -> list[Any]:
    """litellm's models, needed only to match ``enabledModels`` patterns."""
    if not settings.get("enabledModels"):
        return []
    from pi_lsp.llm.models import list_known_models

    return list_known_models("")
