"""The models a user can call: pi's ``models.json`` providers, litellm's model table, and each
provider's key (``credentials.py``), resolved into ``ModelConfig``s.

A model reference is pi's ``provider/modelId`` or a litellm model string (``openai/gpt-4o``,
``gemini/gemini-2.5-pro``). When its provider is in ``models.json``:

- a model listed there is called through the API it names: ``openai-completions`` as litellm's
  ``openai/<id>`` at the provider's ``baseUrl``, ``openai-responses`` as ``openai/responses/<id>``,
  ``anthropic-messages`` as ``anthropic/<id>``, ``google-generative-ai`` as ``gemini/<id>``, with
  pi's defaults (a 128000-token window, 16384 output tokens) for what it leaves out;
- a model of one of pi's built-in providers goes to litellm's own provider, with the provider's
  ``baseUrl``, ``headers`` and ``compat`` and its ``modelOverrides`` entry;
- another id of a custom provider takes the provider's first model as its template (pi does
  the same).

Anything else is a litellm model string, as before. Every model gets its provider's key.
``vscode-lm/<vendor>/<id>`` names a model the editor provides (``editor_models.py``): listed, and
usable, only for a client that runs them.

Which model runs when the editor names none follows pi's ``findInitialModel``: the
``enabledModels`` scope (pi's default model when it is in scope, else the scope's first model),
then ``defaultProvider``/``defaultModel`` when that provider has a key, then pi's default model of
the first provider with a key (pi's order), then the first ``models.json`` model that can be used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlparse

import attrs

from pi_lsp.llm.config import (
    PLACEHOLDER_API_KEY,
    ModelConfig,
    litellm_model_string,
    local_placeholder_key,
    split_model_string,
)
from pi_lsp.llm.config_values import is_configured
from pi_lsp.llm.credentials import (
    KEY_ONLY_PROVIDERS,
    PROVIDER_KEY_VARIABLES,
    Credential,
    EditorKeys,
    environment_credential,
)
from pi_lsp.llm.editor_models import PROVIDER as EDITOR_PROVIDER
from pi_lsp.llm.editor_models import EditorModels, local_id
from pi_lsp.llm.model_scope import PI_DEFAULT_MODELS, scope_models
from pi_lsp.llm.providers import PROVIDERS, has_custom_endpoint, is_chat_model
from pi_lsp.protocol import KeySource, KeyStatus, LanguageModelInfo, ModelInfo, ProviderInfo
from pi_lsp.resources.auth_file import AuthFile, oauth_message
from pi_lsp.resources.models_file import ModelDefinition, ModelsFile, ProviderDefinition

CUSTOM_CONTEXT_WINDOW = 128_000
CUSTOM_MAX_TOKENS = 16_384

WELL_KNOWN = ("anthropic", "openai", "google", "openrouter", "xai", "mistral", "groq", "deepseek")
"""The hosted providers most users have a key of, listed first among those without one."""

_API_ROUTES = {
    "openai-completions": "openai/{id}",
    "openai-responses": "openai/responses/{id}",
    "anthropic-messages": "anthropic/{id}",
    "google-generative-ai": "gemini/{id}",
}


class ModelCatalog:
    """Models and keys as they are now: built per question from the current files and keys."""

    def __init__(
        self,
        models: ModelsFile | None,
        auth: AuthFile | None,
        editor_keys: EditorKeys | None,
        environ: Mapping[str, str],
        editor_models: EditorModels | None = None,
    ) -> None:
        self.editor_models = editor_models or EditorModels()
        """The editor's own models (``vscode-lm/…``), listed only for a client that runs them."""
        self.models = models or ModelsFile("models.json")
        self.auth = auth or AuthFile("auth.json")
        self.editor_keys = editor_keys or EditorKeys()
        self.environ = environ

    # ------------------------------------------------------------------ keys

    def credential(self, provider: str) -> Credential | None:
        """The provider's key, first hit wins (see ``credentials.py``)."""
        editor_key = self.editor_keys.get(provider)
        if editor_key:
            return Credential("editor", "secret storage", editor_key, verbatim=True)
        stored = self.auth.credential(provider)
        if stored is not None and stored.kind == "api_key" and stored.key:
            return Credential("auth.json", self.auth.path, stored.key, env=stored.env)
        definition = self.models.provider(provider)
        if definition is not None and definition.api_key:
            return Credential("models.json", self.models.path, definition.api_key)
        return environment_credential(provider, self.environ)

    def has_key(self, provider: str) -> bool:
        """pi's availability check: a key is configured (commands are not run to know it)."""
        credential = self.credential(provider)
        return credential is not None and self._configured(credential)

    def _configured(self, credential: Credential) -> bool:
        return credential.verbatim or is_configured(credential.value, credential.env, self.environ)

    def oauth_only(self, provider: str) -> bool:
        stored = self.auth.credential(provider)
        return stored is not None and stored.kind == "oauth" and not self.has_key(provider)

    def missing_key_message(self, model: ModelConfig) -> str:
        """Why ``model`` cannot be called, and what to do about it (no key was found)."""
        provider = model.provider
        if provider == EDITOR_PROVIDER:
            return self.editor_models.missing_message(model.model_id)
        if self.oauth_only(provider):
            return oauth_message(provider)
        variable = PROVIDER_KEY_VARIABLES.get(provider)
        where = f"set {variable}, " if variable else ""
        return (
            f"No API key for {provider}: {where}store one for it "
            f'("Pi: Set API Key…" in VS Code, :PiLogin {provider} in Neovim, or pi\'s /login), '
            "or choose a model that has one"
        )

    def providers(self) -> list[ProviderInfo]:
        """Every provider pi-lsp knows a key for or could use, with its key's source: those with a
        key first, then the user's own (models.json, auth.json, the editor), then the best known
        hosted ones, then the rest by name."""
        names = dict.fromkeys(
            [
                *PROVIDER_KEY_VARIABLES,
                *(provider.id for provider in self.models.providers),
                *(entry.provider for entry in self.auth.credentials),
                *self.editor_keys.providers(),
            ]
        )
        statuses = []
        for name in names:
            credential = self.credential(name) if self.has_key(name) else None
            stored = self.auth.credential(name)
            statuses.append(
                ProviderInfo(
                    provider=name,
                    key_source=credential.source if credential else None,
                    key_variable=PROVIDER_KEY_VARIABLES.get(name),
                    subscription=stored is not None and stored.kind == "oauth",
                    local=self._provider_is_local(name),
                )
            )
        own = {provider.id for provider in self.models.providers}
        own |= {entry.provider for entry in self.auth.credentials}
        own |= set(self.editor_keys.providers())

        def order(status: ProviderInfo) -> tuple[bool, bool, int, str]:
            rank = WELL_KNOWN.index(status.provider) if status.provider in WELL_KNOWN else 99
            return (status.key_source is None, status.provider not in own, rank, status.provider)

        return sorted(statuses, key=order)

    # ------------------------------------------------------------------ models

    def resolve(self, reference: str, settings: Mapping[str, Any]) -> ModelConfig:
        """The model ``reference`` names, with its key; ``settings`` refine a litellm string."""
        provider, model_id = split_model_string(reference)
        if provider == EDITOR_PROVIDER:
            return self.editor_models.config(model_id)
        definition = self.models.provider(provider)
        if definition is not None and (definition.models or definition.builtin or definition.api):
            return self._from_models_file(definition, model_id, settings)
        return self._from_settings(reference, settings)

    def _from_settings(self, model: str, settings: Mapping[str, Any]) -> ModelConfig:
        provider, model_id = split_model_string(model)
        api_base = _text(self.environ.get("PI_LSP_API_BASE")) or _text(settings.get("apiBase"))
        override = _text(self.environ.get("PI_LSP_API_KEY"))
        direct_key = _text(settings.get("apiKey"))
        credential = (
            Credential("environment", "PI_LSP_API_KEY", override, verbatim=True)
            if override
            else None
            if direct_key
            else self.credential(provider)
        )
        if direct_key is None and credential is None:
            direct_key = local_placeholder_key(model, self.environ, api_base)
        config = ModelConfig(
            model=model,
            provider=provider,
            model_id=model_id,
            api_base=api_base,
            api_key=direct_key,
            context_window=_positive_int(settings.get("contextWindow")),
            max_output_tokens=_positive_int(settings.get("maxOutputTokens")),
            reasoning=settings.get("reasoning") is True,
            credential=credential,
        )
        return attrs.evolve(config, key_status=self._key_status(config))

    def _from_models_file(
        self, provider: ProviderDefinition, model_id: str, settings: Mapping[str, Any]
    ) -> ModelConfig:
        listed = provider.model(model_id)
        template, api = listed, None
        if listed is not None:
            api = listed.api or provider.api
        elif not provider.builtin:
            # Another id of a custom provider: pi's fallback takes the first model as template.
            first = provider.models[0] if provider.models else None
            template = attrs.evolve(first, id=model_id, name=None) if first else None
            api = (first.api if first else None) or provider.api
        definition = _merged(template, provider.model_overrides.get(model_id), model_id)
        custom = api in _API_ROUTES
        litellm_model = (
            _API_ROUTES[api].format(id=model_id)
            if api in _API_ROUTES
            else litellm_model_string(provider.id, model_id)
        )
        base_url = (definition.base_url if definition else None) or provider.base_url
        credential = self.credential(provider.id)
        placeholder = local_placeholder_key(litellm_model, self.environ, base_url)
        config = ModelConfig(
            model=f"{provider.id}/{model_id}",
            provider=provider.id,
            model_id=model_id,
            api_base=base_url,
            api_key=None if credential else placeholder,
            context_window=_window(definition, custom, "context_window", CUSTOM_CONTEXT_WINDOW)
            or _positive_int(settings.get("contextWindow")),
            max_output_tokens=_window(definition, custom, "max_tokens", CUSTOM_MAX_TOKENS),
            reasoning=bool(definition and definition.reasoning),
            litellm_model=litellm_model,
            credential=credential,
            headers={**provider.headers, **(definition.headers if definition else {})},
            auth_header=provider.auth_header,
            compat={**provider.compat, **(definition.compat if definition else {})},
            sampling_params=dict(definition.sampling_params) if definition else {},
            cost=definition.cost if definition else None,
            accepts_images=_accepts_images(definition, listed is None and provider.builtin),
            name=definition.name if definition else None,
            source="models.json",
        )
        return attrs.evolve(config, key_status=self._key_status(config))

    def _key_status(self, model: ModelConfig) -> KeyStatus:
        if model.credential is not None:
            return "key" if self._configured(model.credential) else "missing"
        if model.api_key is not None and model.api_key != PLACEHOLDER_API_KEY:
            return "key"
        if _is_loopback(model.api_base):
            return "local"
        # An endpoint of the user's own (pi.apiBase) may need no key; a provider's own does.
        if model.provider in KEY_ONLY_PROVIDERS and (
            model.api_base is None or model.source == "models.json"
        ):
            return "missing"
        return "unknown"

    def _provider_is_local(self, provider: str) -> bool:
        definition = self.models.provider(provider)
        if definition is None:
            return False
        urls = [definition.base_url, *(model.base_url for model in definition.models)]
        return any(_is_loopback(url) for url in urls if url)

    # ------------------------------------------------------------------ listing and choosing

    def defined_models(self) -> list[ModelConfig]:
        """Every model ``models.json`` lists, in the file's order."""
        return [
            self._from_models_file(provider, model.id, {})
            for provider in self.models.providers
            for model in provider.models
        ]

    def entries(
        self, known: Iterable[Any], configured: ModelConfig | None = None
    ) -> list[ModelInfo]:
        """``pi/models`` and the pickers: the configured model, then the models ``models.json``
        lists, then the chat models of the provider table's catalogues (``known``: litellm's
        table, ``models.KnownModel``); the usable ones (a key, or local) before the others.

        A catalogue is left out where its models would go to an endpoint of the user's own: the
        configured model's provider when the settings give an ``apiBase``, a provider whose
        endpoint variable (``OPENAI_BASE_URL``…) is set. Providers outside the table (litellm's
        long tail) are not listed; their models can still be named.
        """
        first = [self._entry(configured)] if configured is not None else []
        first += [
            _editor_entry(model)
            for model in self.editor_models.listed()
            if configured is None or configured.model != f"{EDITOR_PROVIDER}/{local_id(model)}"
        ]
        seen = {entry.model for entry in first}
        defined = [self._entry(model) for model in self.defined_models() if model.model not in seen]
        seen |= {entry.model for entry in defined}
        skipped = self._custom_endpoint_providers(configured)
        sources: dict[str, KeySource | None] = {}
        table = [
            self._table_entry(model, sources)
            for model in known
            if model.model not in seen and self._listable(model, skipped)
        ]
        listed = [*defined, *table]
        return (
            first
            + [entry for entry in listed if entry.available]
            + [entry for entry in listed if not entry.available]
        )

    def _custom_endpoint_providers(self, configured: ModelConfig | None) -> set[str]:
        skipped = {
            provider.id
            for provider in PROVIDERS.values()
            if has_custom_endpoint(provider, self.environ)
        }
        if configured is not None and configured.api_base and configured.source == "settings":
            skipped.add(configured.provider)
        return skipped

    @staticmethod
    def _listable(known: Any, skipped: set[str]) -> bool:
        provider = PROVIDERS.get(known.provider)
        return provider is not None and provider.id not in skipped and is_chat_model(known.model_id)

    def _entry(self, model: ModelConfig) -> ModelInfo:
        return ModelInfo(
            model=model.model,
            provider=model.provider,
            model_id=model.model_id,
            name=model.name,
            context_window=model.context_window,
            available=model.key_status in ("key", "local"),
            key_source=model.credential.source
            if model.key_status == "key" and model.credential
            else None,
            source="editor" if model.source == "editor" else "models.json",
        )

    def _table_entry(self, known: Any, sources: dict[str, KeySource | None]) -> ModelInfo:
        """One model of litellm's table; ``sources`` caches each provider's key source."""
        if known.provider not in sources:
            credential = self.credential(known.provider) if self.has_key(known.provider) else None
            sources[known.provider] = credential.source if credential else None
        source = sources[known.provider]
        return ModelInfo(
            model=known.model,
            provider=known.provider,
            model_id=known.model_id,
            name=None,
            context_window=known.context_window,
            available=source is not None,
            key_source=source,
            source="litellm",
        )

    def choose(
        self,
        settings: Mapping[str, Any],
        table: Iterable[Any] = (),
    ) -> str | None:
        """The reference of the model to use when the editor names none (module docstring)."""
        explicit = _text(self.environ.get("PI_LSP_MODEL")) or _text(settings.get("model"))
        if explicit:
            return explicit
        provider, model_id = (
            _text(settings.get("defaultProvider")),
            _text(settings.get("defaultModel")),
        )
        default = f"{provider}/{model_id}" if provider and model_id else None
        patterns = [item for item in settings.get("enabledModels") or [] if isinstance(item, str)]
        if patterns:
            scoped = scope_models(patterns, self._available_references(table))
            if scoped:
                in_scope = default is not None and default.lower() in (
                    ref.lower() for ref in scoped
                )
                chosen = default if in_scope and default is not None else scoped[0]
                chosen_provider, _, chosen_id = chosen.partition("/")
                return self._reference(chosen_provider, chosen_id)
        if default and (self.has_key(provider or "") or self._provider_is_local(provider or "")):
            return self._reference(provider or "", model_id or "")
        for known_provider, known_model in PI_DEFAULT_MODELS.items():
            if self.has_key(known_provider):
                return self._reference(known_provider, known_model)
        usable = [model for model in self.defined_models() if model.key_status in ("key", "local")]
        if usable:
            return usable[0].model
        return self._reference(provider, model_id) if provider and model_id else None

    def _reference(self, provider: str, model_id: str) -> str:
        if self.models.provider(provider) is not None:
            return f"{provider}/{model_id}"
        return litellm_model_string(provider, model_id)

    def _available_references(self, table: Iterable[Any]) -> list[tuple[str, str | None]]:
        """(``provider/id``, name) of every model with a key, for ``enabledModels`` patterns."""
        found = [
            (model.model, model.name)
            for model in self.defined_models()
            if model.key_status in ("key", "local")
        ]
        found += [
            (f"{known.provider}/{known.model_id}", None)
            for known in table
            if self.has_key(known.provider)
        ]
        return list(dict.fromkeys(found))


def _editor_entry(model: LanguageModelInfo) -> ModelInfo:
    """A model the editor provides, as ``pi/models`` lists it: usable, its window the editor's."""
    model_id = local_id(model)
    return ModelInfo(
        model=f"{EDITOR_PROVIDER}/{model_id}",
        provider=EDITOR_PROVIDER,
        model_id=model_id,
        name=model.name,
        context_window=model.max_input_tokens,
        available=True,
        key_source=None,
        source="editor",
    )


def _merged(
    template: ModelDefinition | None, override: ModelDefinition | None, model_id: str
) -> ModelDefinition | None:
    """A model definition with its ``modelOverrides`` entry applied (pi's applyModelOverride)."""
    if override is None:
        return template
    base = template or ModelDefinition(model_id)
    changes = {
        field.name: getattr(override, field.name)
        for field in attrs.fields(ModelDefinition)
        if field.name not in ("id", "line", "headers", "compat", "sampling_params")
        and getattr(override, field.name) is not None
    }
    return attrs.evolve(
        base,
        **changes,
        headers={**base.headers, **override.headers},
        compat={**base.compat, **override.compat},
        sampling_params={**base.sampling_params, **override.sampling_params},
    )


def _accepts_images(definition: ModelDefinition | None, builtin_model: bool) -> bool:
    """pi's ``input``: as given; else text only for a model the file defines, and images for a
    built-in model (litellm's model decides)."""
    if definition is not None and definition.input is not None:
        return "image" in definition.input
    return builtin_model


def _window(
    definition: ModelDefinition | None, custom: bool, field: str, default: int
) -> int | None:
    value = getattr(definition, field) if definition else None
    return value or (default if custom else None)


def _is_loopback(url: str | None) -> bool:
    if not url:
        return False
    host = (urlparse(url if "//" in url else f"//{url}").hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.") or host.endswith(".localhost")


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _positive_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None
