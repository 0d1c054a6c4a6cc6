"""API keys: where a provider's key comes from, and resolving pi's configuration values.

A provider's key is looked up, first hit wins: the editor's secret storage (VS Code's
"Pi: Set API Key…", sent with ``pi/setCredentials``), pi's ``auth.json`` (an ``api_key`` entry),
the provider's ``apiKey`` in pi's ``models.json``, and the provider's environment variable
(pi 0.84.2's names: ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``…). That is pi's
order, with the editor's key in the place of pi's ``--api-key``.

Values from ``auth.json`` and ``models.json`` (keys and header values) are resolved the way pi
resolves them, when a request needs them: ``$VAR`` and ``${VAR}`` are environment variables (the
``auth.json`` entry's own ``env`` first; interpolation works inside longer text; a missing or empty
variable leaves the value unresolved), ``$$`` is a literal ``$`` and ``$!`` a literal ``!``, and a
value starting with ``!`` is a command whose trimmed standard output is the value. Unlike pi, the
command runs without a shell (its words split as a POSIX shell would split them), with a 10 s
timeout; its output is cached for the server's life (a failure is not, so fixing the command is
enough). Environment variables and editor keys are used as they are.

Keys are secrets: ``Credential`` keeps them out of its ``repr``, error texts pass through
``redact_secrets``, and nothing outside ``llm/`` sees a resolved key.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import subprocess
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

import attrs

if TYPE_CHECKING:
    from pi_lsp.llm.config import ModelConfig

logger = logging.getLogger(__name__)

CredentialSource = Literal["editor", "auth.json", "models.json", "environment"]
COMMAND_TIMEOUT_SECONDS = 10.0

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

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MIN_SECRET_LENGTH = 4
_known_secrets: set[str] = set()
_known_lock = threading.Lock()


@attrs.frozen
class Credential:
    """Where one provider's key comes from, and the value as written there."""

    source: CredentialSource
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


class CommandOutputs:
    """The output of each ``!command`` value, cached for the server's life (successes only)."""

    def __init__(self, timeout: float = COMMAND_TIMEOUT_SECONDS) -> None:
        self.timeout = timeout
        self._outputs: dict[str, str] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self.runs = 0
        """How many commands actually ran (for tests)."""

    def output(self, command: str, environ: Mapping[str, str]) -> str | None:
        with self._lock:
            lock = self._locks.setdefault(command, threading.Lock())
        with lock:  # two requests at once run the command once
            if command in self._outputs:
                return self._outputs[command]
            output = self._run(command, environ)
            if output is not None:
                self._outputs[command] = output
            return output

    def _run(self, command: str, environ: Mapping[str, str]) -> str | None:
        try:
            argv = shlex.split(command)
        except ValueError as problem:
            logger.warning("cannot split the key command %r: %s", command, problem)
            return None
        if not argv:
            return None
        self.runs += 1
        try:
            completed = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                env=dict(environ),
                check=False,
            )
        except subprocess.TimeoutExpired:
            logger.warning("the key command %r took longer than %.0f s", argv[0], self.timeout)
            return None
        except OSError as problem:
            logger.warning("the key command %r could not run: %s", argv[0], problem.strerror)
            return None
        if completed.returncode != 0:
            logger.warning("the key command %r exited with %d", argv[0], completed.returncode)
            return None
        return completed.stdout.strip() or None


def is_command(value: str) -> bool:
    return value.startswith("!")


def template_variables(value: str) -> list[str]:
    """The environment variables a (non-command) value refers to, in order, once each."""
    if is_command(value):
        return []
    return list(dict.fromkeys(part for kind, part in _template(value) if kind == "env"))


def is_configured(value: str, env: Mapping[str, str], environ: Mapping[str, str]) -> bool:
    """pi's availability check: a command counts without running it; variables must be set."""
    return all(_variable(name, env, environ) is not None for name in template_variables(value))


def resolve_value(
    value: str,
    env: Mapping[str, str],
    environ: Mapping[str, str],
    commands: CommandOutputs,
) -> str | None:
    """pi's ``resolveConfigValue`` (see the module docstring); None when it does not resolve."""
    if is_command(value):
        resolved = commands.output(value[1:], {**environ, **env})
    else:
        parts = []
        for kind, part in _template(value):
            text = part if kind == "literal" else _variable(part, env, environ)
            if text is None:
                return None
            parts.append(text)
        resolved = "".join(parts)
    if resolved:
        remember_secrets([resolved])
    return resolved


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
    missing = [
        name
        for name in template_variables(credential.value)
        if _variable(name, credential.env, environ) is None
    ]
    if missing:
        return f"{what}: environment variable {', '.join(missing)} is not set"
    return what


def remember_secrets(values) -> None:
    """Note resolved secrets, so ``redact_secrets`` can take them out of any text."""
    with _known_lock:
        _known_secrets.update(value for value in values if len(value) >= _MIN_SECRET_LENGTH)


def redact_secrets(text: str) -> str:
    """``text`` with every secret this process has resolved replaced by ``***``."""
    with _known_lock:
        secrets = sorted(_known_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "***")
    return text


def _variable(name: str, env: Mapping[str, str], environ: Mapping[str, str]) -> str | None:
    return env.get(name) or environ.get(name) or None


def _template(value: str) -> list[tuple[str, str]]:
    """pi's ``parseConfigValueTemplate``: ("literal", text) and ("env", name) parts."""
    parts: list[tuple[str, str]] = []

    def literal(text: str) -> None:
        if not text:
            return
        if parts and parts[-1][0] == "literal":
            parts[-1] = ("literal", parts[-1][1] + text)
        else:
            parts.append(("literal", text))

    index = 0
    while index < len(value):
        dollar = value.find("$", index)
        if dollar < 0:
            literal(value[index:])
            break
        literal(value[index:dollar])
        following = value[dollar + 1 : dollar + 2]
        if following in ("$", "!"):
            literal(following)
            index = dollar + 2
        elif following == "{":
            end = value.find("}", dollar + 2)
            if end < 0:
                literal("$")
                index = dollar + 1
                continue
            name = value[dollar + 2 : end]
            if _VARIABLE_NAME.fullmatch(name):
                parts.append(("env", name))
            else:
                literal(value[dollar : end + 1])
            index = end + 1
        else:
            match = _VARIABLE_NAME.match(value, dollar + 1)
            if match:
                parts.append(("env", match[0]))
                index = match.end()
            else:
                literal("$")
                index = dollar + 1
    return parts


def environment_credential(provider: str, environ: Mapping[str, str]) -> Credential | None:
    """The provider's key from its environment variable (pi's name, then litellm's)."""
    names = [PROVIDER_KEY_VARIABLES.get(provider), *LITELLM_KEY_VARIABLES.get(provider, ())]
    for name in names:
        value = environ.get(name) if name else None
        if name and value:
            return Credential("environment", name, value, verbatim=True)
    return None


COMMANDS = CommandOutputs()
"""The server's one cache of ``!command`` outputs."""


class UnresolvedKeyError(Exception):
    """A key or header value did not resolve (its message says why, never a secret)."""


@attrs.frozen
class RequestAuth:
    """The key and extra headers of one request, resolved."""

    api_key: str | None = attrs.field(repr=False)
    headers: Mapping[str, str] = attrs.field(repr=False)


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
