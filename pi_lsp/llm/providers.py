"""The provider table: which wire API each hosted provider speaks, where, with which key.

pi keeps one definition per provider (``@earendil-works/pi-ai``'s ``providers/*.js``): its wire
API, its default base URL and the environment variable of its key. This is the same table for the
providers users configure most, with the environment variables each provider's own SDK reads for
its base URL (the OpenAI SDK's ``OPENAI_BASE_URL``, the Anthropic SDK's ``ANTHROPIC_BASE_URL``,
Ollama's ``OLLAMA_HOST``…) and litellm's spellings of both, so a setup that worked through
litellm keeps working.

A model of a table provider is sent by pi-lsp itself (``direct.py`` for ``openai-completions``,
``anthropic_direct.py`` for ``anthropic-messages``); only the long tail (Bedrock, Vertex, Azure,
Cohere…) goes through litellm. ``route`` says where one model goes.

OpenAI's own endpoint speaks the Responses API (``openai_responses.py``), as in pi 1.6; an
``OPENAI_BASE_URL`` server or an ``apiBase`` gets chat completions, which every OpenAI-compatible
server speaks, unless ``models.json`` says ``openai-responses``.

The model rules are pi's and OpenAI's: reasoning models (``o1``…, ``gpt-5``…) take
``max_completion_tokens`` and no ``temperature``; pi's thinking levels map to a reasoning effort.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Literal

import attrs

from pi_lsp.llm.config import ModelConfig, split_model_string
from pi_lsp.llm.proxies import unsupported_proxy

WireApi = Literal[
    "openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"
]
ReasoningFormat = Literal["reasoning_effort", "openrouter", "none"]
"""How a request asks for reasoning: OpenAI's ``reasoning_effort``, OpenRouter's ``reasoning``
object, or not at all (the provider has no such parameter, or refuses unknown ones)."""

WIRE_APIS: tuple[WireApi, ...] = (
    "openai-completions",
    "openai-responses",
    "anthropic-messages",
    "google-generative-ai",
)
OPENAI_CACHE_PARAMETERS = ("prompt_cache_key", "prompt_cache_retention")
_REASONING_MODELS = re.compile(r"^(?:o\d|gpt-5)", re.IGNORECASE)
_NOT_CHAT = re.compile(
    r"audio|realtime|tts|transcribe|whisper|embed|moderation|image|dall-e|search|container"
    r"|computer-use|^ft:|guard",
    re.IGNORECASE,
)
_REASONING_EFFORT = {
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}
"""pi's thinking levels → OpenAI's ``reasoning_effort``; ``off`` asks for none."""


@attrs.frozen
class Provider:
    """One hosted provider as pi defines it, plus its SDK's environment variables."""

    id: str
    """pi's name (``google``, not litellm's ``gemini``)."""
    wire_api: WireApi
    base_url: str
    key_variables: tuple[str, ...]
    base_url_variables: tuple[str, ...] = ()
    model_prefixes: tuple[str, ...] = ()
    """The model-string prefixes that name it (``openrouter/…``; litellm's ``gemini/…``)."""
    reasoning: ReasoningFormat = "reasoning_effort"
    cache_parameters: tuple[str, ...] = ()
    """The automatic-cache parameters it takes (``prompt_cache_key``…): those litellm forwards
    to it, so a session caches as it did through litellm (a test holds the two together)."""
    usage_in_streaming: bool = True
    """Whether it takes ``stream_options: {include_usage: true}``."""
    store: bool = False
    """Whether requests say ``store: false`` (pi's ``supportsStore``: OpenAI and the hosts that
    follow its API closely), so the provider keeps no copy of the conversation."""
    needs_key: bool = True


def _provider(id: str, wire_api: WireApi, base_url: str, **options: object) -> Provider:
    options.setdefault("model_prefixes", (id,))
    return Provider(id, wire_api, base_url, **options)  # type: ignore[arg-type]


PROVIDERS: Mapping[str, Provider] = {
    provider.id: provider
    for provider in (
        _provider(
            "openai",
            "openai-completions",
            "https://api.openai.com/v1",
            key_variables=("OPENAI_API_KEY",),
            base_url_variables=("OPENAI_BASE_URL", "OPENAI_API_BASE"),
            cache_parameters=OPENAI_CACHE_PARAMETERS,
            store=True,
        ),
        _provider(
            "anthropic",
            "anthropic-messages",
            "https://api.anthropic.com",
            key_variables=("ANTHROPIC_API_KEY",),
            base_url_variables=("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"),
        ),
        _provider(
            "google",
            "google-generative-ai",
            "https://generativelanguage.googleapis.com/v1beta",
            key_variables=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            base_url_variables=("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_BASE"),
            model_prefixes=("gemini", "google"),
        ),
        _provider(
            "openrouter",
            "openai-completions",
            "https://openrouter.ai/api/v1",
            key_variables=("OPENROUTER_API_KEY",),
            base_url_variables=("OPENROUTER_BASE_URL", "OPENROUTER_API_BASE"),
            reasoning="openrouter",
            cache_parameters=OPENAI_CACHE_PARAMETERS,
            store=True,
        ),
        _provider(
            "groq",
            "openai-completions",
            "https://api.groq.com/openai/v1",
            key_variables=("GROQ_API_KEY",),
            base_url_variables=("GROQ_BASE_URL", "GROQ_API_BASE"),
            cache_parameters=OPENAI_CACHE_PARAMETERS,
            store=True,
        ),
        _provider(
            "xai",
            "openai-completions",
            "https://api.x.ai/v1",
            key_variables=("XAI_API_KEY",),
            base_url_variables=("XAI_BASE_URL", "XAI_API_BASE"),
            reasoning="none",  # pi: Grok takes no reasoning_effort on chat completions
        ),
        _provider(
            "deepseek",
            "openai-completions",
            "https://api.deepseek.com",
            key_variables=("DEEPSEEK_API_KEY",),
            base_url_variables=("DEEPSEEK_BASE_URL", "DEEPSEEK_API_BASE"),
            reasoning="none",  # deepseek-reasoner always reasons; it takes no effort
            cache_parameters=OPENAI_CACHE_PARAMETERS,
        ),
        _provider(
            "mistral",
            "openai-completions",
            "https://api.mistral.ai/v1",
            key_variables=("MISTRAL_API_KEY",),
            base_url_variables=("MISTRAL_BASE_URL", "MISTRAL_API_BASE"),
            # Mistral answers 422 to parameters it does not know; its last chunk has usage anyway.
            reasoning="none",
            usage_in_streaming=False,
            cache_parameters=("prompt_cache_key",),
        ),
        _provider(
            "cerebras",
            "openai-completions",
            "https://api.cerebras.ai/v1",
            key_variables=("CEREBRAS_API_KEY",),
            base_url_variables=("CEREBRAS_BASE_URL", "CEREBRAS_API_BASE"),
        ),
        _provider(
            "ollama",
            "openai-completions",
            "http://127.0.0.1:11434/v1",
            key_variables=("OLLAMA_API_KEY",),
            base_url_variables=("OLLAMA_HOST", "OLLAMA_API_BASE"),
            model_prefixes=("ollama", "ollama_chat"),
            needs_key=False,
        ),
    )
}
_BY_PREFIX = {
    prefix: provider for provider in PROVIDERS.values() for prefix in provider.model_prefixes
}


@attrs.frozen
class Route:
    """Where one model's requests go: its provider, wire API, endpoint and id on the wire."""

    provider: Provider
    wire_api: WireApi
    base_url: str
    model_id: str


def table_provider(model: ModelConfig) -> Provider | None:
    """The table provider ``model`` is called through, or None for litellm's long tail."""
    prefix, slash, _ = model.call_model.partition("/")
    if slash:
        return _BY_PREFIX.get(prefix)
    return PROVIDERS.get(split_model_string(model.call_model)[0])


def route(model: ModelConfig, environ: Mapping[str, str] | None = None) -> Route | None:
    """Where ``model`` goes (see the module docstring); None when litellm sends it."""
    provider = table_provider(model)
    if provider is None:
        return None
    environ = os.environ if environ is None else environ
    prefix, slash, rest = model.call_model.partition("/")
    model_id = rest if slash and prefix in provider.model_prefixes else model.call_model
    wire_api = provider.wire_api
    endpoint = base_url(provider, model.api_base, environ)
    if provider.id == "openai" and model_id.startswith("responses/"):
        wire_api, model_id = "openai-responses", model_id.removeprefix("responses/")
    elif provider.id == "openai" and endpoint == provider.base_url:
        wire_api = "openai-responses"  # OpenAI's own endpoint: pi 1.6 uses the Responses API
    return Route(provider, wire_api, endpoint, model_id)


TRANSPORT_ENVIRONMENT_VARIABLE = "PI_LSP_LLM_TRANSPORT"
"""Set to ``litellm``, every model goes through litellm (to compare the two paths)."""


def sends_natively(model: ModelConfig, wire_api: WireApi) -> bool:
    """Whether pi-lsp itself sends ``model`` over ``wire_api``: the table routes it there, no proxy
    the direct path does not speak stands in the way (``proxies.py``), and litellm is not forced."""
    if os.environ.get(TRANSPORT_ENVIRONMENT_VARIABLE) == "litellm":
        return False
    found = route(model)
    return (
        found is not None and found.wire_api == wire_api and not unsupported_proxy(found.base_url)
    )


def can_send(model: ModelConfig) -> bool:
    """Whether some path sends ``model``: ``models.json``, the table, or litellm's long tail.

    Only a provider outside the table and ``models.json`` imports litellm (seconds), to ask it.
    A model the editor provides (``vscode-lm``) can be sent only while the client offers it."""
    if model.source == "editor":
        return model.key_status == "key"
    if model.source == "models.json" or table_provider(model) is not None:
        return True
    from pi_lsp.llm._litellm import load_litellm

    prefix, slash, _ = model.call_model.partition("/")
    known = {str(getattr(provider, "value", provider)) for provider in load_litellm().provider_list}
    return bool(slash) and prefix in known


def base_url(provider: Provider, configured: str | None, environ: Mapping[str, str]) -> str:
    """The endpoint: the model's own, else the provider SDK's variable, else the default."""
    if configured:
        return configured.rstrip("/")
    for name in provider.base_url_variables:
        value = environ.get(name, "").strip()
        if value:
            return _ollama_url(value) if provider.id == "ollama" else value.rstrip("/")
    return provider.base_url


def _ollama_url(host: str) -> str:
    """``OLLAMA_HOST`` is ``host[:port]`` or a URL; its OpenAI-compatible API is under ``/v1``."""
    url = host if "://" in host else f"http://{host}"
    if url.count(":") == 1:  # no port: Ollama's own default
        url += ":11434"
    return url.rstrip("/") + "/v1"


def is_chat_model(model_id: str) -> bool:
    """Whether a model id of a provider's catalogue is a chat model a coding agent can use (not
    audio, realtime, search, computer-use, image or embedding models, nor a fine-tune template)."""
    return not _NOT_CHAT.search(model_id)


def has_custom_endpoint(provider: Provider, environ: Mapping[str, str]) -> bool:
    """Whether the environment sends the provider's models to an endpoint of the user's own
    (``OPENAI_BASE_URL``…), where its cloud catalogue's models do not exist."""
    return base_url(provider, None, environ) != provider.base_url


def is_reasoning_model(model_id: str) -> bool:
    """OpenAI's reasoning models (``o1``, ``o3-mini``, ``gpt-5``…): ``max_completion_tokens``,
    no ``temperature``."""
    return bool(_REASONING_MODELS.match(model_id.rpartition("/")[2]))


def reasoning_effort(thinking_level: str) -> str | None:
    """The reasoning effort of pi's thinking level (None for ``off``)."""
    return _REASONING_EFFORT.get(thinking_level)


def environment_key(provider: Provider) -> str | None:
    """The provider's key from its own environment variables, as its SDK reads it."""
    return next((os.environ[name] for name in provider.key_variables if os.environ.get(name)), None)


def key_variables(provider: str) -> tuple[str, ...]:
    """The environment variables of a table provider's key (empty for others)."""
    found = PROVIDERS.get(provider)
    return found.key_variables if found else ()
