"""Server configuration: typed, defaulted, validated once; pi's settings files for the shared keys."""

import json
from pathlib import Path

from pi_lsp.config import load_config


def test_defaults_without_options(tmp_path):
    config = load_config(tmp_path, None, {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert config.session_dir == tmp_path / ".pi" / "sessions"
    assert config.settings.thinking_level == "medium" and config.settings.tokenizer == "tiktoken"
    assert config.problems == ()


def test_invalid_values_fall_back_to_defaults_with_one_problem_each(tmp_path):
    options = {"contextWindow": "big", "thinkingLevel": "huge", "model": "openai/x", "retry": {"maxRetries": 5}}
    config = load_config(tmp_path, options, {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert config.settings.context_window is None and config.settings.thinking_level == "medium"
    assert config.settings.model == "openai/x" and config.settings.retry.max_retries == 5
    assert len(config.problems) == 2 and "contextWindow" in config.problems[0]


def test_session_dir_precedence_and_pi_settings(tmp_path):
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"defaultProvider": "anthropic", "defaultModel": "claude-x", "sessionDir": "/from-pi"}))
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi" / "settings.json").write_text(json.dumps({"defaultModel": "claude-y"}))
    environ = {"PI_CODING_AGENT_DIR": str(agent)}
    config = load_config(tmp_path, {}, environ)
    assert config.session_dir == Path("/from-pi")
    assert config.model_settings()["defaultProvider"] == "anthropic" and config.model_settings()["defaultModel"] == "claude-y"
    assert load_config(tmp_path, {}, {**environ, "PI_CODING_AGENT_SESSION_DIR": "/from-env"}).session_dir == Path("/from-env")
    assert load_config(tmp_path, {"sessionDir": "sessions"}, environ).session_dir == tmp_path / "sessions"
    untrusted = load_config(tmp_path, {"trusted": False}, environ)
    assert untrusted.model_settings()["defaultModel"] == "claude-x"


def test_a_broken_settings_file_is_reported_and_ignored(tmp_path):
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text("{broken")
    config = load_config(tmp_path, {}, {"PI_CODING_AGENT_DIR": str(agent)})
    assert config.pi_settings == {} and "ignoring that file" in config.problems[0]
