"""The model catalog: models.json models routed through litellm, pi's key order, pi's choice of
model when the editor names none (enabledModels, defaults, keys), and pi/models' order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_lsp.llm.catalog import ModelCatalog
from pi_lsp.llm.config import resolve_model
from pi_lsp.llm.credentials import EditorKeys
from pi_lsp.llm.model_scope import scope_models
from pi_lsp.llm.models import KnownModel
from pi_lsp.llm.stream import CompletionRequest, completion_arguments
from pi_lsp.llm.usage import usage_from_openai
from pi_lsp.resources.auth_file import load_auth_file
from pi_lsp.resources.models_file import load_models_file

PROVIDERS = {
    "local": {
        "baseUrl": "http://localhost:11434/v1",
        "api": "openai-completions",
        "compat": {"supportsUsageInStreaming": False, "maxTokensField": "max_completion_tokens"},
        "models": [
            {"id": "llama", "name": "Llama 3"},
            {
                "id": "qwen",
                "contextWindow": 32000,
                "maxTokens": 2000,
                "samplingParams": {"top_k": 5},
            },
        ],
    },
    "gateway": {
        "baseUrl": "https://gw.example/v1",
        "apiKey": "$GW_KEY",
        "api": "openai-responses",
        "models": [{"id": "g1", "api": "anthropic-messages"}, {"id": "g2"}],
    },
    "gemini-proxy": {
        "baseUrl": "https://g.example",
        "api": "google-generative-ai",
        "apiKey": "literal",
        "models": [{"id": "gemma"}],
    },
    "anthropic": {
        "baseUrl": "https://proxy.example",
        "headers": {"x-proxy": "1"},
        "modelOverrides": {"claude-sonnet-4-5": {"contextWindow": 900000, "name": "Sonnet"}},
    },
    "openrouter": {
        "apiKey": "or-key",
        "compat": {"openRouterRouting": {"only": ["anthropic"]}},
    },
}


def catalog(
    tmp_path: Path,
    environ: dict | None = None,
    auth: dict | None = None,
    editor: dict | None = None,
    providers: dict | None = None,
) -> ModelCatalog:
    (tmp_path / "models.json").write_text(json.dumps({"providers": providers or PROVIDERS}))
    (tmp_path / "auth.json").write_text(json.dumps(auth or {}))
    keys = EditorKeys()
    keys.replace(editor or {})
    return ModelCatalog(
        load_models_file(tmp_path / "models.json", None, []),
        load_auth_file(tmp_path / "auth.json", None, []),
        keys,
        environ or {},
    )


def test_models_json_models_are_routed_through_litellm(tmp_path):
    models = catalog(tmp_path, {"GW_KEY": "k"})
    llama = models.resolve("local/llama", {})
    assert (llama.model, llama.provider, llama.model_id) == ("local/llama", "local", "llama")
    assert (llama.call_model, llama.api_base, llama.api_key) == (
        "openai/llama",
        "http://localhost:11434/v1",
        "no-key",
    )
    assert (llama.context_window, llama.max_output_tokens, llama.name) == (128000, 16384, "Llama 3")
    assert (llama.key_status, llama.source) == ("local", "models.json")
    assert models.resolve("gateway/g1", {}).call_model == "anthropic/g1"
    assert models.resolve("gateway/g2", {}).call_model == "openai/responses/g2"
    gemma = models.resolve("gemini-proxy/gemma", {})
    assert (gemma.call_model, gemma.key_status, gemma.credential.source) == (
        "gemini/gemma",
        "key",
        "models.json",
    )
    # Another id of a custom provider: its first model is the template (pi's fallback).
    other = models.resolve("local/mistral:7b", {})
    assert (other.call_model, other.name, other.context_window) == (
        "openai/mistral:7b",
        None,
        128000,
    )


def test_builtin_providers_keep_their_litellm_route_with_the_files_overrides(tmp_path):
    models = catalog(tmp_path, {"ANTHROPIC_API_KEY": "a"})
    sonnet = models.resolve("anthropic/claude-sonnet-4-5", {})
    assert (sonnet.call_model, sonnet.api_base) == (
        "anthropic/claude-sonnet-4-5",
        "https://proxy.example",
    )
    assert (sonnet.context_window, sonnet.name, dict(sonnet.headers)) == (
        900000,
        "Sonnet",
        {"x-proxy": "1"},
    )
    assert sonnet.credential.source == "environment" and sonnet.key_status == "key"
    routed = models.resolve("openrouter/anthropic/claude-3.5-sonnet", {})
    assert routed.call_model == "openrouter/anthropic/claude-3.5-sonnet"
    assert routed.credential.source == "models.json"
    # A litellm string of a provider models.json does not name is unchanged.
    assert models.resolve("openai/gpt-4o", {"apiBase": "http://x"}).api_base == "http://x"


def test_compat_flags_and_sampling_params_shape_the_request(tmp_path):
    qwen = catalog(tmp_path).resolve("local/qwen", {})
    arguments = completion_arguments(CompletionRequest(qwen, "system", []))
    assert arguments["model"] == "openai/qwen"
    assert "stream_options" not in arguments
    assert arguments["max_completion_tokens"] == 2000 and "max_tokens" not in arguments
    assert arguments["extra_body"] == {"top_k": 5}
    routed = catalog(tmp_path).resolve("openrouter/x/y", {})
    assert completion_arguments(CompletionRequest(routed, "s", []))["extra_body"] == {
        "provider": {"only": ["anthropic"]}
    }


def test_a_models_json_cost_prices_the_usage_in_dollars_per_million_tokens(tmp_path):
    providers = {
        "local": {
            "baseUrl": "http://localhost:8080/v1",
            "api": "openai-completions",
            "models": [
                {"id": "priced", "cost": {"input": 3, "output": 15, "cacheRead": 0.3}},
                {"id": "unpriced"},
            ],
        },
        "anthropic": {
            "modelOverrides": {"claude-sonnet-4-5": {"cost": {"input": 1, "output": 2}}},
        },
    }
    models = catalog(tmp_path, providers=providers)
    raw = {
        "prompt_tokens": 1_000_000,
        "completion_tokens": 100_000,
        "prompt_tokens_details": {"cached_tokens": 500_000},
    }
    cost = usage_from_openai(raw, models.resolve("local/priced", {}))["cost"]
    assert cost["input"] == pytest.approx(1.5) and cost["output"] == pytest.approx(1.5)
    assert cost["cacheRead"] == pytest.approx(0.15)
    assert cost["total"] == pytest.approx(3.15)
    assert usage_from_openai(raw, models.resolve("local/unpriced", {}))["cost"]["total"] == 0
    # An override's prices replace litellm's table prices of a built-in model; the others stay.
    sonnet = models.resolve("anthropic/claude-sonnet-4-5", {})
    (tmp_path / "no-cost").mkdir()
    table = catalog(tmp_path / "no-cost").resolve("anthropic/claude-sonnet-4-5", {})
    assert usage_from_openai(raw, sonnet)["cost"]["output"] == pytest.approx(0.2)
    assert usage_from_openai(raw, sonnet)["cost"]["cacheRead"] == pytest.approx(
        usage_from_openai(raw, table)["cost"]["cacheRead"]
    )
    assert usage_from_openai(raw, table)["cost"]["cacheRead"] > 0


def test_images_reach_only_models_whose_input_lists_them(tmp_path):
    providers = {
        "local": {
            "baseUrl": "http://localhost:8080/v1",
            "api": "openai-completions",
            "models": [{"id": "text-only"}, {"id": "vision", "input": ["text", "image"]}],
        },
        "anthropic": {"baseUrl": "https://proxy.example"},
    }
    models = catalog(tmp_path, providers=providers)
    image = {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}
    asked = [{"role": "user", "content": [{"type": "text", "text": "What is it?"}, image]}]

    def sent(reference: str) -> str:
        request = CompletionRequest(models.resolve(reference, {}), "", asked)
        return json.dumps(completion_arguments(request)["messages"])

    assert "image_url" not in sent("local/text-only") and "image omitted" in sent("local/text-only")
    assert "image_url" in sent("local/vision")
    assert "image_url" in sent("anthropic/claude-sonnet-4-5")


def test_a_providers_key_comes_from_the_editor_then_auth_json_then_models_json_then_env(tmp_path):
    environ = {"OPENAI_API_KEY": "env", "GW_KEY": "gw-env"}
    auth = {
        "openai": {"type": "api_key", "key": "stored"},
        "gateway": {"type": "api_key", "key": "s"},
    }
    sources = catalog(tmp_path, environ, auth, {"openai": "editor"})
    assert sources.credential("openai").value == "editor"
    assert catalog(tmp_path, environ, auth).credential("openai").value == "stored"
    assert catalog(tmp_path, environ).credential("openai").value == "env"
    assert catalog(tmp_path, environ, auth).credential("gateway").source == "auth.json"
    assert catalog(tmp_path, environ).credential("gateway").source == "models.json"
    assert (
        catalog(tmp_path, {"GOOGLE_API_KEY": "g"}).credential("google").origin == "GOOGLE_API_KEY"
    )
    assert catalog(tmp_path).credential("openai") is None


def test_a_key_that_cannot_be_configured_leaves_the_model_missing_one(tmp_path):
    models = catalog(tmp_path)  # $GW_KEY is not set
    assert models.resolve("gateway/g2", {}).key_status == "missing"
    assert not models.has_key("gateway")
    assert models.resolve("openai/gpt-4o", {}).key_status == "missing"
    assert models.resolve("bedrock/anthropic.claude-v2", {}).key_status == "unknown"


def test_a_subscription_login_alone_names_what_to_do(tmp_path):
    oauth = {"anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}}
    models = catalog(tmp_path, auth=oauth)
    sonnet = models.resolve("anthropic/claude-sonnet-4-5", {})
    assert sonnet.key_status == "missing" and models.oauth_only("anthropic")
    assert "subscription login (OAuth) for anthropic" in models.missing_key_message(sonnet)
    status = next(p for p in models.providers() if p.provider == "anthropic")
    assert status.subscription and status.key_source is None
    with_key = catalog(tmp_path, {"ANTHROPIC_API_KEY": "k"}, auth=oauth)
    assert not with_key.oauth_only("anthropic")


def test_pi_chooses_the_model_when_the_editor_names_none(tmp_path):
    settings = {"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"}
    assert catalog(tmp_path, {"ANTHROPIC_API_KEY": "k"}).choose(settings) == (
        "anthropic/claude-sonnet-4-5"
    )
    # The default's provider has no key: pi takes the default model of a provider that has one.
    assert catalog(tmp_path, {"OPENAI_API_KEY": "k"}).choose(settings) == "openai/gpt-5.5"
    assert catalog(tmp_path, {"GEMINI_API_KEY": "k"}).choose({}) == "gemini/gemini-3.1-pro-preview"
    # models.json's openrouter has a key: pi's default model of openrouter.
    assert catalog(tmp_path).choose({}) == "openrouter/moonshotai/kimi-k2.6"
    # No key anywhere: the first usable models.json model (a local one).
    local_only = catalog(tmp_path, providers={"local": PROVIDERS["local"]})
    assert local_only.choose({}) == "local/llama"
    assert catalog(tmp_path).choose({"model": "openai/x"}) == "openai/x"
    assert catalog(tmp_path, {"PI_LSP_MODEL": "e/m"}).choose({"model": "openai/x"}) == "e/m"
    empty = ModelCatalog(None, None, None, {})
    assert empty.choose({}) is None
    assert empty.choose(settings) == "anthropic/claude-sonnet-4-5"  # so the error can say why


def test_enabled_models_scope_the_choice(tmp_path):
    table = [
        KnownModel("openai/gpt-4o", "openai", "gpt-4o", 128000, None, False, True),
        KnownModel("openai/gpt-4o-mini", "openai", "gpt-4o-mini", 128000, None, False, True),
    ]
    models = catalog(tmp_path, {"OPENAI_API_KEY": "k"})
    assert (
        models.choose({"enabledModels": ["gpt-4o-mini", "local/*"]}, table) == "openai/gpt-4o-mini"
    )
    scoped = {"enabledModels": ["local/*:high"], "defaultProvider": "local", "defaultModel": "qwen"}
    assert models.choose(scoped, table) == "local/qwen"
    assert models.choose({"enabledModels": ["nothing-matches"]}, table) == "openai/gpt-5.5"
    gemini = [KnownModel("gemini/gemini-2.5-pro", "google", "gemini-2.5-pro", 1, None, True, True)]
    google = catalog(tmp_path, {"GEMINI_API_KEY": "k"})
    # pi's name of the provider becomes litellm's again.
    assert google.choose({"enabledModels": ["gemini-2.5*"]}, gemini) == "gemini/gemini-2.5-pro"


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [
        (["*sonnet*"], ["anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5-20250929"]),
        (["sonnet"], ["anthropic/claude-sonnet-4-5"]),  # an undated alias beats a dated id
        (["ANTHROPIC/CLAUDE-SONNET-4-5-20250929"], ["anthropic/claude-sonnet-4-5-20250929"]),
        (["Opus"], ["anthropic/claude-opus"]),  # by name
        (["gpt-4o", "gpt-4o"], ["openai/gpt-4o"]),
        (["none"], []),
    ],
)
def test_scope_patterns_match_as_pi_matches_them(patterns, expected):
    available = [
        ("anthropic/claude-sonnet-4-5", None),
        ("anthropic/claude-sonnet-4-5-20250929", None),
        ("anthropic/claude-opus", "Claude Opus"),
        ("openai/gpt-4o", None),
    ]
    assert scope_models(patterns, available) == expected


def test_pi_models_lists_what_can_be_called_first_saying_where_from(tmp_path):
    table = [
        KnownModel("anthropic/claude-x", "anthropic", "claude-x", 200000, None, False, True),
        KnownModel("openai/gpt-4o", "openai", "gpt-4o", 128000, None, False, True),
    ]
    entries = catalog(tmp_path, {"OPENAI_API_KEY": "k"}).entries(table)
    listed = [(entry.model, entry.available, entry.key_source, entry.source) for entry in entries]
    assert listed[:4] == [
        ("local/llama", True, None, "models.json"),
        ("local/qwen", True, None, "models.json"),
        ("gemini-proxy/gemma", True, "models.json", "models.json"),
        ("openai/gpt-4o", True, "environment", "litellm"),
    ]
    assert ("gateway/g1", False, None, "models.json") in listed[4:]
    assert ("anthropic/claude-x", False, None, "litellm") in listed[4:]


def test_resolve_model_without_files_keeps_the_settings_behaviour():
    config = resolve_model({"model": "openai/qwen", "apiBase": "http://127.0.0.1:8080/v1"}, {})
    assert (config.api_key, config.key_status, config.source) == ("no-key", "local", "settings")


def test_providers_list_those_with_keys_then_the_users_own_then_the_best_known(tmp_path):
    names = [status.provider for status in catalog(tmp_path, {"GROQ_API_KEY": "k"}).providers()]
    assert names[:3] == ["openrouter", "gemini-proxy", "groq"]  # with a key
    assert names[3:6] == ["anthropic", "gateway", "local"]  # named in models.json
    assert names[6:11] == ["openai", "google", "xai", "mistral", "deepseek"]
    assert names[11:] == sorted(names[11:])


def test_pickers_list_the_configured_model_first_and_only_table_chat_models(tmp_path):
    table = [
        KnownModel("anthropic/claude-x", "anthropic", "claude-x", 200000, None, False, True),
        KnownModel("openai/gpt-4o", "openai", "gpt-4o", 128000, None, False, True),
        KnownModel("openai/container", "openai", "container", 128000, None, False, True),
        KnownModel(
            "openai/gpt-4o-audio-preview", "openai", "gpt-4o-audio-preview", 1, None, False, False
        ),
        KnownModel("bedrock/claude", "amazon-bedrock", "claude", 200000, None, False, True),
        KnownModel("groq/llama-3.3", "groq", "llama-3.3", 128000, None, False, False),
    ]
    environ = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "AWS_BEARER_TOKEN_BEDROCK": "k"}
    configured = resolve_model({"model": "openai/gpt-4o"}, environ)
    models = [entry.model for entry in catalog(tmp_path, environ).entries(table, configured)]
    assert models[0] == "openai/gpt-4o"
    assert models.count("openai/gpt-4o") == 1
    assert "anthropic/claude-x" in models and "groq/llama-3.3" in models
    assert "openai/container" not in models and "openai/gpt-4o-audio-preview" not in models
    assert "bedrock/claude" not in models  # litellm's long tail is named, not listed


def test_no_cloud_catalogue_against_the_users_own_endpoint(tmp_path):
    table = [
        KnownModel("openai/gpt-4o", "openai", "gpt-4o", 128000, None, False, True),
        KnownModel("anthropic/claude-x", "anthropic", "claude-x", 200000, None, False, True),
    ]
    local = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    settings = {"model": "openai/qwen", "apiBase": "http://127.0.0.1:8080/v1"}
    configured = resolve_model(settings, local)
    models = [entry.model for entry in catalog(tmp_path, local).entries(table, configured)]
    assert models[0] == "openai/qwen" and "openai/gpt-4o" not in models
    assert "anthropic/claude-x" in models

    behind_variable = {**local, "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}
    models = [entry.model for entry in catalog(tmp_path, behind_variable).entries(table)]
    assert "openai/gpt-4o" not in models and "anthropic/claude-x" in models
