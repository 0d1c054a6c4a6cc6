"""pi's ``<agentDir>/models.json``: custom providers and models, read and checked as pi 0.84.2
documents them (``docs/models.md`` of its npm package).

The file maps provider ids to ``{baseUrl, api, apiKey, headers, authHeader, compat, models,
modelOverrides}``; each model has ``id`` and optionally ``name``, ``api``, ``baseUrl``,
``reasoning``, ``input``, ``contextWindow``, ``maxTokens``, ``cost``, ``headers``, ``compat`` and
``samplingParams``. As in pi, ``//`` comments and trailing commas are allowed. The values of
``apiKey`` and ``headers`` are kept as written (``$VAR``, ``!command``, literals): ``llm/``
resolves them when a request needs them, so nothing here runs a command or reads a secret.

pi rejects the whole file over one bad field; here each problem is a diagnostic on its line and
only the provider or model concerned is left out, so the rest keeps working. A model whose ``api``
pi-lsp cannot call (it calls models through litellm) is such a problem. Broken JSON keeps the
previous good content, as the settings files do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from pi_lsp.resources.diagnostics import ResourceDiagnostic, error, warning
from pi_lsp.resources.settings import key_line

MODELS_FILE = "models.json"

SUPPORTED_APIS = (
    "openai-completions",
    "openai-responses",
    "anthropic-messages",
    "google-generative-ai",
)
"""The ``api`` values pi-lsp can call (through litellm's OpenAI, Anthropic and Gemini clients)."""

BUILTIN_PROVIDERS = frozenset(
    {
        "amazon-bedrock", "ant-ling", "anthropic", "azure-openai-responses", "baseten",
        "cerebras", "cloudflare-ai-gateway", "cloudflare-workers-ai", "deepseek", "fireworks",
        "github-copilot", "google", "google-vertex", "groq", "huggingface", "kimi-coding",
        "minimax", "minimax-cn", "mistral", "moonshotai", "moonshotai-cn", "nvidia", "openai",
        "openai-codex", "opencode", "opencode-go", "openrouter", "qwen-token-plan",
        "qwen-token-plan-cn", "qwen-token-plan-individual", "radius", "together",
        "vercel-ai-gateway", "xai", "xiaomi", "xiaomi-token-plan-ams", "xiaomi-token-plan-cn",
        "xiaomi-token-plan-sgp", "zai", "zai-coding-cn",
    }
)  # fmt: skip
"""pi 0.84.2's built-in providers: their models need neither ``api`` nor ``baseUrl`` here."""

_COMMENT_OR_STRING = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*')
_TRAILING_COMMA_OR_STRING = re.compile(r'"(?:\\.|[^"\\])*"|,(\s*[}\]])')


@attrs.frozen
class ModelCost:
    """Dollars per million tokens, as pi's ``cost``; None where the entry leaves a price out
    (0 for a model of its own, the built-in price for a ``modelOverrides`` entry)."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None


@attrs.frozen
class ModelDefinition:
    """A model of ``models`` (``id`` required), or a ``modelOverrides`` entry (``id`` its key)."""

    id: str
    line: int = 1
    name: str | None = None
    api: str | None = None
    base_url: str | None = None
    reasoning: bool | None = None
    input: tuple[str, ...] | None = None
    context_window: int | None = None
    max_tokens: int | None = None
    cost: ModelCost | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    """Header values as written (``$VAR``, ``!command`` or literal): they may hold secrets."""
    compat: Mapping[str, Any] = attrs.field(factory=dict)
    sampling_params: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class ProviderDefinition:
    id: str
    line: int = 1
    name: str | None = None
    base_url: str | None = None
    api: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    """As written: ``$VAR``/``${VAR}``, ``!command`` or a literal key."""
    headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    auth_header: bool = False
    compat: Mapping[str, Any] = attrs.field(factory=dict)
    models: tuple[ModelDefinition, ...] = ()
    model_overrides: Mapping[str, ModelDefinition] = attrs.field(factory=dict)

    @property
    def builtin(self) -> bool:
        return self.id in BUILTIN_PROVIDERS

    def model(self, model_id: str) -> ModelDefinition | None:
        return next((model for model in self.models if model.id == model_id), None)


@attrs.frozen
class ModelsFile:
    path: str
    providers: tuple[ProviderDefinition, ...] = ()

    def provider(self, provider_id: str) -> ProviderDefinition | None:
        return next((provider for provider in self.providers if provider.id == provider_id), None)


def strip_json_comments(text: str) -> str:
    """pi's ``stripJsonComments``: ``//`` line comments and trailing commas out, strings kept."""
    text = _COMMENT_OR_STRING.sub(lambda match: match[0] if match[0][0] == '"' else "", text)
    return _TRAILING_COMMA_OR_STRING.sub(
        lambda match: match[1] if match[1] is not None else match[0], text
    )


def load_models_file(
    path: Path, previous: ModelsFile | None, diagnostics: list[ResourceDiagnostic]
) -> ModelsFile:
    """``models.json`` at ``path`` (no file: no providers); unusable JSON keeps ``previous``."""
    fallback = previous if previous is not None and previous.path == str(path) else None
    kept = fallback or ModelsFile(str(path))
    if not path.exists():
        return ModelsFile(str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        diagnostics.append(error(str(path), 1, f"cannot read models.json: {problem}"))
        return kept
    if not text.strip():
        return ModelsFile(str(path))
    try:
        parsed = json.loads(strip_json_comments(text))
    except json.JSONDecodeError as problem:
        message = (
            f"invalid JSON: {problem.msg} (line {problem.lineno}); keeping the last good models"
        )
        diagnostics.append(error(str(path), problem.lineno, message))
        return kept
    providers = parsed.get("providers") if isinstance(parsed, dict) else None
    if not isinstance(providers, dict):
        diagnostics.append(error(str(path), 1, 'models.json must be {"providers": {…}}'))
        return kept
    reader = _Reader(str(path), text, diagnostics)
    found = [reader.provider(key, value) for key, value in providers.items()]
    return ModelsFile(str(path), tuple(provider for provider in found if provider is not None))


class _Reader:
    """Checks one file's providers and models, reporting each problem on its line."""

    def __init__(self, path: str, text: str, diagnostics: list[ResourceDiagnostic]) -> None:
        self.path, self.text, self.diagnostics = path, text, diagnostics

    def provider(self, provider_id: str, raw: Any) -> ProviderDefinition | None:
        line = key_line(self.text, ("providers", provider_id))
        where = f"provider {provider_id}"
        if not isinstance(raw, dict):
            self._skip(line, f"{where} must be an object")
            return None
        if raw.get("oauth") is not None:
            self._skip(
                line,
                f"{where} logs in with OAuth ({raw['oauth']}), which pi-lsp cannot do "
                "(give it an apiKey instead)",
            )
            return None
        fields = _Fields(self, raw, line, where)
        api = fields.text("api")
        models = tuple(
            model
            for model in (
                self.model(provider_id, raw, entry, api, fields) for entry in fields.array("models")
            )
            if model is not None
        )
        overrides = {
            model_id: self.override(provider_id, model_id, entry)
            for model_id, entry in fields.object("modelOverrides").items()
            if isinstance(entry, dict)
        }
        provider = ProviderDefinition(
            id=provider_id,
            line=line,
            name=fields.text("name"),
            base_url=fields.text("baseUrl"),
            api=api,
            api_key=fields.text("apiKey"),
            headers=fields.headers("headers"),
            auth_header=fields.flag("authHeader") or False,
            compat=fields.object("compat"),
            models=models,
            model_overrides=overrides,
        )
        if api is not None and api not in SUPPORTED_APIS:
            self._unsupported(line, where, api, "the models that inherit it are left out")
        return provider

    def model(
        self, provider_id: str, provider: dict, raw: Any, api: str | None, outer: _Fields
    ) -> ModelDefinition | None:
        models_line = key_line(self.text, ("providers", provider_id, "models"))
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
            self._skip(models_line, f"a model of provider {provider_id} has no id")
            return None
        model_id = raw["id"]
        line = _id_line(self.text, models_line, model_id)
        where = f"model {provider_id}/{model_id}"
        definition = self._definition(model_id, raw, line, where)
        if definition is None:
            return None
        model_api = definition.api or api
        builtin = provider_id in BUILTIN_PROVIDERS
        if model_api is None and not builtin:
            self._skip(line, f'{where} has no "api": set it on the provider or the model')
            return None
        if model_api is not None and model_api not in SUPPORTED_APIS:
            if definition.api is not None:  # an api inherited from the provider is reported there
                self._unsupported(line, where, model_api, "left out")
            return None
        if not (definition.base_url or provider.get("baseUrl")) and not builtin:
            self._skip(line, f'{where} has no "baseUrl": set it on the provider')
            return None
        return definition

    def override(self, provider_id: str, model_id: str, raw: dict) -> ModelDefinition:
        line = key_line(self.text, ("providers", provider_id, "modelOverrides", model_id))
        where = f"modelOverrides {provider_id}/{model_id}"
        return self._definition(model_id, raw, line, where) or ModelDefinition(model_id, line)

    def _definition(
        self, model_id: str, raw: dict, line: int, where: str
    ) -> ModelDefinition | None:
        fields = _Fields(self, raw, line, where)
        context_window, max_tokens = fields.number("contextWindow"), fields.number("maxTokens")
        for name, value in (("contextWindow", context_window), ("maxTokens", max_tokens)):
            if value is not None and value <= 0:
                self._skip(line, f"{where}: invalid {name} {value}")
                return None
        inputs = fields.array("input")
        if any(kind not in ("text", "image") for kind in inputs):
            self._warn(line, f'{where}: input lists only "text" and "image"; ignored')
            inputs = []
        return ModelDefinition(
            id=model_id,
            line=line,
            name=fields.text("name"),
            api=fields.text("api"),
            base_url=fields.text("baseUrl"),
            reasoning=fields.flag("reasoning"),
            input=tuple(inputs) if "input" in raw and inputs else None,
            context_window=int(context_window) if context_window is not None else None,
            max_tokens=int(max_tokens) if max_tokens is not None else None,
            cost=fields.cost(),
            headers=fields.headers("headers"),
            compat=fields.object("compat"),
            sampling_params=fields.object("samplingParams"),
        )

    def _unsupported(self, line: int, where: str, api: str, consequence: str) -> None:
        supported = ", ".join(SUPPORTED_APIS)
        message = f'{where}: api "{api}" cannot be called by pi-lsp (it supports {supported})'
        self.diagnostics.append(error(self.path, line, f"{message}; {consequence}"))

    def _skip(self, line: int, message: str) -> None:
        """Report what is left out; callers return None for it."""
        self.diagnostics.append(error(self.path, line, f"{message}; left out"))

    def _warn(self, line: int, message: str) -> None:
        self.diagnostics.append(warning(self.path, line, message))


class _Fields:
    """Typed reads of one JSON object's fields; a wrong type is a warning and reads as unset."""

    def __init__(self, reader: _Reader, raw: dict, line: int, where: str) -> None:
        self.reader, self.raw, self.line, self.where = reader, raw, line, where

    def _typed(self, key: str, check, expected: str) -> Any:
        value = self.raw.get(key)
        if value is None:
            return None
        if not check(value):
            self.reader._warn(self.line, f"{self.where}: {key} must be {expected}; ignored")
            return None
        return value

    def text(self, key: str) -> str | None:
        value = self._typed(key, lambda value: isinstance(value, str), "a string")
        return value or None

    def flag(self, key: str) -> bool | None:
        return self._typed(key, lambda value: isinstance(value, bool), "true or false")

    def number(self, key: str) -> float | None:
        return self._typed(key, _is_number, "a number")

    def array(self, key: str) -> list[Any]:
        return self._typed(key, lambda value: isinstance(value, list), "an array") or []

    def object(self, key: str) -> dict[str, Any]:
        return self._typed(key, lambda value: isinstance(value, dict), "an object") or {}

    def headers(self, key: str) -> dict[str, str]:
        return (
            self._typed(
                key,
                lambda value: (
                    isinstance(value, dict)
                    and all(isinstance(item, str) for item in value.values())
                ),
                "an object of strings",
            )
            or {}
        )

    def cost(self) -> ModelCost | None:
        raw = self.object("cost")
        if not raw:
            return None
        prices = {key: raw.get(key) for key in ("input", "output", "cacheRead", "cacheWrite")}
        if not all(value is None or _is_number(value) for value in prices.values()):
            self.reader._warn(self.line, f"{self.where}: cost prices must be numbers; ignored")
            return None
        return ModelCost(
            prices["input"], prices["output"], prices["cacheRead"], prices["cacheWrite"]
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _id_line(text: str, after_line: int, model_id: str) -> int:
    """The line of ``"id": "<model_id>"`` at or after ``after_line``."""
    pattern = re.compile(r'"id"\s*:\s*' + re.escape(json.dumps(model_id)))
    lines = text.split("\n")
    for number in range(max(after_line, 1), len(lines) + 1):
        if pattern.search(lines[number - 1]):
            return number
    return after_line
