"""pi's ``models.json``, ``auth.json`` and configuration values: pi-lsp's reading against pi
0.84.2's own ``ModelRuntime`` and ``resolveConfigValue`` on the same files — which custom models
are available, each provider's key, each model's headers (``authHeader`` included), and an
``auth.json`` written by ``pi/login`` (``llm/auth_store.py``) being read by pi."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pi_lsp.llm.auth_store import save_api_key
from pi_lsp.llm.catalog import ModelCatalog
from pi_lsp.llm.config_values import CommandOutputs, resolve_value
from pi_lsp.llm.credentials import request_auth, resolve_credential
from pi_lsp.resources.snapshot import load_resources

from .harness import REFERENCE_DIR, run_node_script

SCRIPT = REFERENCE_DIR / "models_reference.mjs"
VARIABLES = {"LOCAL_KEY": "local-key", "TEAM": "blue", "PREFIX": "p"}
VALUES = [
    ("literal-key", {}),
    ("$LOCAL_KEY", {}),
    ("${PREFIX}_${TEAM}", {}),
    ("$PREFIX_TEAM", {}),
    ("x-$TEAM-y", {}),
    ("$$literal", {}),
    ("$!literal", {}),
    ("a$$b$!c", {}),
    ("$MISSING", {}),
    ("${MISSING}-x", {}),
    ("${not a name}", {}),
    ("${unclosed", {}),
    ("trailing$", {}),
    ("$1abc", {}),
    ("$OWN", {"OWN": "from-the-entry"}),
    ("$TEAM", {"TEAM": "entry-wins"}),
    ("MY_API_KEY", {}),
    ("!printf from-a-command", {}),
    ("!false", {}),
]
MODELS = {
    "providers": {
        "gateway": {
            "baseUrl": "http://127.0.0.1:1/v1",
            "api": "openai-completions",
            "apiKey": "$LOCAL_KEY",
            "headers": {"x-team": "${TEAM}-a", "x-literal": "$$x"},
            "authHeader": True,
            "models": [{"id": "m1"}, {"id": "m2", "name": "Two", "contextWindow": 1000}],
        },
        "stored": {
            "baseUrl": "http://127.0.0.1:1/v1",
            "api": "openai-completions",
            "models": [{"id": "s"}],
        },
        "keyless": {
            "baseUrl": "https://example.invalid/v1",
            "api": "openai-completions",
            "models": [{"id": "k"}],
        },
        "unset": {
            "baseUrl": "https://example.invalid/v1",
            "api": "anthropic-messages",
            "apiKey": "$NOT_SET_ANYWHERE",
            "models": [{"id": "u"}],
        },
        "by-command": {
            "baseUrl": "https://example.invalid",
            "api": "anthropic-messages",
            "apiKey": "!printf command-key",
            "models": [{"id": "c"}],
        },
    }
}
CUSTOM = sorted(MODELS["providers"])


def pi_reads(reference_node: Path, agent: Path, home: Path, request: dict) -> dict:
    variables = {**VARIABLES, "HOME": str(home), "PI_OFFLINE": "1"}
    return json.loads(
        run_node_script(
            reference_node, SCRIPT, [str(agent), json.dumps(request)], variables=variables
        )
    )


def test_models_keys_headers_and_values_match_pi(reference_node: Path, tmp_path: Path):
    home, agent, workspace = tmp_path / "home", tmp_path / "agent", tmp_path / "project"
    for directory in (home, agent, workspace):
        directory.mkdir()
    (agent / "models.json").write_text(json.dumps(MODELS, indent=2))
    stored = {"type": "api_key", "key": "$OWN", "env": {"OWN": "from-the-env-field"}}
    (agent / "auth.json").write_text(json.dumps({"stored": stored}))
    request = {
        "values": [{"value": value, "env": env} for value, env in VALUES],
        "providers": CUSTOM,
        "models": [["gateway", "m1"], ["by-command", "c"]],
    }
    reference = pi_reads(reference_node, agent, home, request)
    assert reference["error"] is None

    environ = {**VARIABLES, "PATH": os.environ.get("PATH", "")}
    commands = CommandOutputs()
    ours = [resolve_value(value, env, environ, commands) for value, env in VALUES]
    assert ours == reference["values"]
    assert "from-a-command" in ours and None in ours  # the cases are not vacuous

    snapshot = load_resources(workspace, agent, trusted=True, home=home)
    catalog = ModelCatalog(snapshot.models, snapshot.auth, None, environ)
    available = [model.model for model in catalog.defined_models() if model.key_status == "key"]
    assert sorted(available) == sorted(reference["available"])
    keys = {}
    for provider in CUSTOM:
        credential = catalog.credential(provider)
        keys[provider] = resolve_credential(credential, environ, commands) if credential else None
    assert keys == reference["keys"]
    for reference_name, headers in reference["headers"].items():
        model = catalog.resolve(reference_name, {})
        assert dict(request_auth(model, environ, commands).headers) == headers


def test_a_key_stored_by_pi_login_is_read_by_pi(reference_node: Path, tmp_path: Path):
    home, agent = tmp_path / "home", tmp_path / "agent"
    home.mkdir()
    oauth = {"type": "oauth", "access": "a", "refresh": "r", "expires": 4102444800000}
    agent.mkdir()
    (agent / "auth.json").write_text(json.dumps({"anthropic": oauth}, indent=2))
    save_api_key(agent / "auth.json", "openai", "sk-stored-by-pi-lsp", replace_subscription=False)
    save_api_key(agent / "auth.json", "groq", "gsk-ünïcode", replace_subscription=False)
    reference = pi_reads(
        reference_node,
        agent,
        home,
        {"values": [], "providers": ["openai", "groq", "anthropic"], "models": []},
    )
    assert reference["keys"]["openai"] == "sk-stored-by-pi-lsp"
    assert reference["keys"]["groq"] == "gsk-ünïcode"
    assert reference["keys"]["anthropic"] == "a"  # pi's own subscription login is untouched
