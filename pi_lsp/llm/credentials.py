"""API keys: where a provider's key comes from, and the key and headers of one request.

A provider's key is looked up, first hit wins: the editor's secret storage (VS Code's
"Pi: Set API Key…", sent with ``pi/setCredentials``), pi's ``auth.json`` (an ``api_key`` entry),
the provider's ``apiKey`` in pi's ``models.json``, and the provider's environment variable
(pi 0.84.2's names: ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``…). That is pi's
order, with the editor's key in the place of pi's ``--api-key``.

Values from ``auth.json`` and ``models.json`` (keys and header values) are resolved the way pi
resolves them (``config_values.py``: ``$VAR``, ``${VAR}``, ``!command``…) only when a request is
sent (``request_auth``); environment variables and editor keys are used as they are.

Keys are secrets: ``Credential`` keeps them out of its ``repr``, error texts pass through
``secrets.redact_secrets``, and nothing outside ``llm/`` sees a resolved key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

from pi_lsp.llm.config_values import (
    COMMANDS,
    CommandOutputs,
    is_command,
    resolve_value,
    template_variables,
    unset_variables,
)
from pi_lsp.llm.secrets import remember_secrets
from pi_lsp.protocol import KeySource

if TYPE_CHECKING:
    from pi_lsp.llm.config import ModelConfig


PROVIDER_KEY_VARIABLES: dict[str, str] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "ant-ling": "ANT_LING_API_KEY",
    "azure-openai-responses": "AZURE_OPENAI_API_KEY",
    "openai": "OPENAI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "nvidia": "NVIDIA_API_KEY",
    "google": "GEMINI_API_KEY",
    "google-vertex": "GOOGLE_CLOUD_API_KEY",
    "amazon-bedrock": "AWS_BEARER_TOKEN_BEDROCK",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "cloudflare-ai-gateway": "CLOUDFLARE_API_KEY",
    "cloudflare-workers-ai": "CLOUDFLARE_API_KEY",
    "xai": "XAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "vercel-ai-gateway": "AI_GATEWAY_API_KEY",
    "zai": "ZAI_API_KEY",
    "zai-coding-cn": "ZAI_CODING_CN_API_KEY",
    "opencode": "OPENCODE_API_KEY",
    "opencode-go": "OPENCODE_API_KEY",
    "radius": "RADIUS_API_KEY",
    "huggingface": "HF_TOKEN",
    "fireworks": "FIREWORKS_API_KEY",
    "together": "TOGETHER_API_KEY",
    "baseten": "BASETEN_API_KEY",
    "kimi-coding": "KIMI_API_KEY",
    "minimax": "MINIMAX_API_KEY",
    "minimax-cn": "MINIMAX_CN_API_KEY",
    "moonshotai": "MOONSHOT_API_KEY",
    "moonshotai-cn": "MOONSHOT_API_KEY",
    "qwen-token-plan": "QWEN_TOKEN_PLAN_API_KEY",
    "qwen-token-plan-individual": "QWEN_TOKEN_PLAN_API_KEY",
    "qwen-token-plan-cn": "QWEN_TOKEN_PLAN_CN_API_KEY",
    "xiaomi": "XIAOMI_API_KEY",
    "xiaomi-token-plan-cn": "XIAOMI_TOKEN_PLAN_CN_API_KEY",
    "xiaomi-token-plan-ams": "XIAOMI_TOKEN_PLAN_AMS_API_KEY",
    "xiaomi-token-plan-sgp": "XIAOMI_TOKEN_PLAN_SGP_API_KEY",
}
"""pi 0.84.2's environment variable for each provider's API key (``env-api-keys.ts``)."""

LITELLM_KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "google": ("GOOGLE_API_KEY",),
    "together": ("TOGETHERAI_API_KEY",),
    "huggingface": ("HUGGINGFACE_API_KEY",),
    "fireworks": ("FIREWORKS_AI_API_KEY",),
}
"""The other names litellm reads the same keys from (checked after pi's)."""

KEY_ONLY_PROVIDERS = frozenset(
    {
        "openai",
        "anthropic",
        "google",
        "mistral",
        "groq",
        "deepseek",
        "xai",
        "openrouter",
        "cerebras",
    }
)
"""Providers litellm can reach with nothing but an API key: without one, a prompt is refused with
what to do. Others (Bedrock, Vertex, Azure…) have credentials pi-lsp does not look for."""


@attrs.frozen
class Credential:
    """Where one provider's key comes from, and the value as written there."""

    source: KeySource
    origin: str
    """What a user is told: the variable's name, the file's path, the editor's store."""
    value: str = attrs.field(repr=False)
    verbatim: bool = False
    """Use ``value`` as it is (environment variables, editor keys); else resolve it as pi does."""
    env: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    """An ``auth.json`` entry's own environment, consulted before the process's."""

    def describe(self) -> str:
        """Where the key came from, in words (never the key)."""
        if self.source == "editor":
            return "the editor's secret storage"
        if self.source == "environment":
            return f"the environment variable {self.origin}"
        if not self.verbatim and is_command(self.value):
            return f"{self.source} ({self.origin}, the command {self.value[1:].strip()!r})"
        names = template_variables(self.value) if not self.verbatim else []
        via = f", via ${', $'.join(names)}" if names else ""
        return f"{self.source} ({self.origin}{via})"


class EditorKeys:
    """The keys the editor keeps in its secret storage, as it last sent them."""

    def __init__(self) -> None:
        self._keys: dict[str, str] = {}

    def replace(self, keys: Mapping[str, str]) -> None:
        self._keys = {provider: key for provider, key in keys.items() if key}
        remember_secrets(self._keys.values())

    def get(self, provider: str) -> str | None:
        return self._keys.get(provider)

    def providers(self) -> list[str]:
        return sorted(self._keys)

    def __repr__(self) -> str:
        return f"EditorKeys(providers={self.providers()})"


def resolve_credential(
    credential: Credential, environ: Mapping[str, str], commands: CommandOutputs
) -> str | None:
    if credential.verbatim:
        remember_secrets([credential.value])
        return credential.value
    return resolve_value(credential.value, credential.env, environ, commands)


def unresolved_reason(credential: Credential, environ: Mapping[str, str]) -> str:
    """Why ``credential`` did not resolve, in pi's words."""
    what = f"Failed to resolve the API key from {credential.describe()}"
    if is_command(credential.value):
        return f"{what}: the command failed, printed nothing or timed out"
    missing = unset_variables(credential.value, credential.env, environ)
    if missing:
        return f"{what}: environment variable {', '.join(missing)} is not set"
    return what


def environment_credential(provider: str, environ: Mapping[str, str]) -> Credential | None:
    """The provider's key from its environment variable (pi's name, then litellm's)."""
    names = [PROVIDER_KEY_VARIABLES.get(provider), *LITELLM_KEY_VARIABLES.get(provider, ())]
    for name in names:
        value = environ.get(name) if name else None
        if name and value:
            return Credential("environment", name, value, verbatim=True)
    return None


class UnresolvedKeyError(Exception):
    """A key or header value did not resolve (its message says why, never a secret)."""


@attrs.frozen
class RequestAuth:
    """The key and extra headers of one request, resolved."""

    api_key: str | None = attrs.field(repr=False)
    headers: Mapping[str, str] = attrs.field(repr=False)


def runs_commands(model: ModelConfig) -> bool:
    """Whether resolving ``model``'s key or headers may run a ``!command`` (else ``request_auth``
    only reads the environment and is cheap enough for the event loop)."""
    credential = model.credential
    if credential is not None and not credential.verbatim and is_command(credential.value):
        return True
    return any(is_command(raw) for raw in model.headers.values())


def request_auth(
    model: ModelConfig,
    environ: Mapping[str, str] | None = None,
    commands: CommandOutputs | None = None,
) -> RequestAuth:
    """Resolve ``model``'s key and headers now (may run commands: call it off the event loop).

    Raises ``UnresolvedKeyError`` when the key or a header does not resolve, as pi fails such a
    request instead of sending it without them.
    """
    environ = os.environ if environ is None else environ
    commands = commands or COMMANDS
    api_key = model.api_key
    env: Mapping[str, str] = {}
    if model.credential is not None:
        env = model.credential.env
        api_key = resolve_credential(model.credential, environ, commands)
        if api_key is None:
            raise UnresolvedKeyError(unresolved_reason(model.credential, environ))
    headers: dict[str, str] = {}
    for name, raw in model.headers.items():
        value = resolve_value(raw, env, environ, commands)
        if value is None:
            raise UnresolvedKeyError(
                f'Failed to resolve header "{name}" of {model.provider} in models.json'
            )
        headers[name] = value
    if model.auth_header:
        if not api_key:
            raise UnresolvedKeyError(f'No API key found for "{model.provider}" (authHeader)')
        headers["Authorization"] = f"Bearer {api_key}"
    return RequestAuth(api_key, headers)
