"""pi's models.json and auth.json as resources: parsed as pi documents them, each problem a
diagnostic on its line, the last good content kept over broken JSON, keys never shown."""

from __future__ import annotations

import json
from pathlib import Path

from pi_lsp.resources.auth_file import load_auth_file
from pi_lsp.resources.models_file import load_models_file, strip_json_comments
from pi_lsp.resources.settings import load_settings
from pi_lsp.resources.snapshot import diff_snapshots, load_resources

MODELS = """{
  // pi allows comments and trailing commas
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1",
      "api": "openai-completions",
      "apiKey": "sk-secret-models-key",
      "headers": {"x-portkey": "$PORTKEY_KEY"},
      "compat": {"supportsUsageInStreaming": false},
      "models": [
        {"id": "llama3.1:8b", "name": "Llama", "contextWindow": 64000, "maxTokens": 4096,
         "reasoning": true, "input": ["text", "image"],
         "cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 0}},
        {"id": "bedrock-only", "api": "bedrock-converse-stream"},
        {"id": "tiny", "contextWindow": 0},
        {"name": "no id"},
      ],
    },
    "mistral-native": {"baseUrl": "https://x/v1", "api": "mistral-conversations",
                       "models": [{"id": "m"}]},
    "no-api": {"baseUrl": "https://x/v1", "models": [{"id": "a"}]},
    "no-url": {"api": "openai-completions", "models": [{"id": "b"}]},
    "anthropic": {"baseUrl": "https://proxy.example/v1", "models": [{"id": "claude-x"}],
                  "modelOverrides": {"claude-sonnet-4-5": {"contextWindow": 500000}}},
    "radius-gateway": {"oauth": "radius", "baseUrl": "https://r"},
    "typed-wrong": {"baseUrl": 3, "api": "openai-completions", "authHeader": "yes",
                    "models": [{"id": "t"}]},
  },
}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_models_json_is_read_as_pi_documents_it(tmp_path):
    path = write(tmp_path / "models.json", MODELS)
    diagnostics = []
    models = load_models_file(path, None, diagnostics)
    ollama = models.provider("ollama")
    assert ollama is not None
    assert [model.id for model in ollama.models] == ["llama3.1:8b"]
    llama = ollama.models[0]
    assert (llama.name, llama.context_window, llama.max_tokens, llama.reasoning) == (
        "Llama",
        64000,
        4096,
        True,
    )
    assert llama.input == ("text", "image") and llama.cost.cache_read == 0.5
    assert ollama.api_key == "sk-secret-models-key" and ollama.headers == {
        "x-portkey": "$PORTKEY_KEY"
    }
    assert ollama.compat == {"supportsUsageInStreaming": False}
    anthropic = models.provider("anthropic")
    assert anthropic.builtin and [model.id for model in anthropic.models] == ["claude-x"]
    assert anthropic.model_overrides["claude-sonnet-4-5"].context_window == 500000
    assert models.provider("radius-gateway") is None
    assert "sk-secret-models-key" not in repr(models)


def test_every_models_json_problem_is_a_diagnostic_on_its_line(tmp_path):
    path = write(tmp_path / "models.json", MODELS)
    diagnostics = []
    load_models_file(path, None, diagnostics)
    found = {(problem.line, problem.message.split(":")[0]) for problem in diagnostics}
    assert (line_of(MODELS, "bedrock-only"), "model ollama/bedrock-only") in found
    assert (line_of(MODELS, '"tiny"'), "model ollama/tiny") in found
    assert any("has no id" in problem.message for problem in diagnostics)
    assert (line_of(MODELS, '"mistral-native"'), "provider mistral-native") in found
    assert any('model no-api/a has no "api"' in problem.message for problem in diagnostics)
    assert any('model no-url/b has no "baseUrl"' in problem.message for problem in diagnostics)
    assert any(
        "OAuth" in problem.message and "radius" in problem.message for problem in diagnostics
    )
    wrong = [problem.message for problem in diagnostics if "typed-wrong" in problem.message]
    assert any("baseUrl must be a string" in message for message in wrong)
    assert any("authHeader must be true or false" in message for message in wrong)
    assert all(problem.path == str(path) for problem in diagnostics)
    unsupported = next(problem for problem in diagnostics if "bedrock-only" in problem.message)
    assert "openai-completions" in unsupported.message and unsupported.severity == "error"


def test_broken_models_json_keeps_the_last_good_providers(tmp_path):
    path = write(tmp_path / "models.json", MODELS)
    good = load_models_file(path, None, [])
    write(path, '{"providers": {"x": ')
    diagnostics = []
    kept = load_models_file(path, good, diagnostics)
    assert kept == good
    assert diagnostics[0].severity == "error" and "invalid JSON" in diagnostics[0].message
    path.unlink()
    assert load_models_file(path, good, []).providers == ()


def test_strip_json_comments_leaves_strings_alone():
    text = '{"url": "http://x//y", // a comment\n "list": [1, 2,], "s": "a,}"}'
    assert json.loads(strip_json_comments(text)) == {
        "url": "http://x//y",
        "list": [1, 2],
        "s": "a,}",
    }


def test_auth_json_keys_subscription_logins_and_problems(tmp_path):
    text = json.dumps(
        {
            "openai": {"type": "api_key", "key": "sk-secret-auth-key"},
            "anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1},
            "cloudflare": {"type": "api_key", "key": "$CF", "env": {"CF": "secret-env"}},
            "odd": {"type": "password"},
            "numeric": {"type": "api_key", "key": 42},
        },
        indent=2,
    )
    path = write(tmp_path / "auth.json", text)
    diagnostics = []
    auth = load_auth_file(path, None, diagnostics)
    assert auth.credential("openai").key == "sk-secret-auth-key"
    assert auth.credential("anthropic").kind == "oauth"
    assert auth.credential("cloudflare").env == {"CF": "secret-env"}
    assert auth.credential("odd") is None and auth.credential("numeric") is None
    oauth = next(problem for problem in diagnostics if "subscription login" in problem.message)
    assert oauth.line == line_of(text, '"anthropic"')
    assert "anthropic" in oauth.message and ":PiLogin anthropic" in oauth.message
    assert "Pi: Set API Key" in oauth.message
    assert len(diagnostics) == 3
    assert "sk-secret-auth-key" not in repr(auth) and "secret-env" not in repr(auth)


def test_broken_auth_json_keeps_the_last_good_keys_and_quotes_nothing(tmp_path):
    path = write(tmp_path / "auth.json", json.dumps({"openai": {"type": "api_key", "key": "k1"}}))
    good = load_auth_file(path, None, [])
    write(path, '{"openai": {"type": "api_key", "key": "sk-half-written')
    diagnostics = []
    assert load_auth_file(path, good, diagnostics) == good
    assert "sk-half" not in diagnostics[0].message


def test_the_snapshot_carries_both_files_and_reports_their_changes(tmp_path):
    workspace, agent = tmp_path / "project", tmp_path / "agent"
    workspace.mkdir()
    write(agent / "models.json", MODELS)
    first = load_resources(workspace, agent, trusted=True, home=tmp_path)
    assert first.models.provider("ollama") is not None
    assert any(problem.path.endswith("models.json") for problem in first.diagnostics)
    write(agent / "auth.json", json.dumps({"openai": {"type": "api_key", "key": "k"}}))
    second = load_resources(workspace, agent, trusted=True, previous=first, home=tmp_path)
    changes = diff_snapshots(first, second)
    assert [(ref.kind, ref.name) for ref in changes.added] == [
        ("credentials", str(agent / "auth.json"))
    ]


def test_enabled_models_is_a_known_setting(tmp_path):
    workspace, agent = tmp_path / "project", tmp_path / "agent"
    write(agent / "settings.json", json.dumps({"enabledModels": ["claude-*", 3]}))
    loaded = load_settings(workspace, agent, trusted=True)
    assert "enabledModels" not in loaded.settings.merged
    assert "enabledModels must be an array of strings" in loaded.diagnostics[0].message
