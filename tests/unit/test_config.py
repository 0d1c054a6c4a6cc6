"""Server configuration: typed, defaulted, validated once; pi's settings files for the shared keys."""

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
    pi_settings = {"defaultProvider": "anthropic", "defaultModel": "claude-y", "sessionDir": "/from-pi",
                   "compaction": {"keepRecentTokens": 5000, "tokenizer": "chars4"}}
    environ: dict[str, str] = {}
    config = load_config(tmp_path, {}, environ, pi_settings)
    assert config.session_dir == Path("/from-pi")
    assert config.model_settings()["defaultProvider"] == "anthropic" and config.model_settings()["defaultModel"] == "claude-y"
    assert config.compaction_settings().keep_recent_tokens == 5000 and config.tokenizer() == "chars4"
    assert load_config(tmp_path, {}, {"PI_CODING_AGENT_SESSION_DIR": "/from-env"}, pi_settings).session_dir == Path("/from-env")
    assert load_config(tmp_path, {"sessionDir": "sessions"}, environ, pi_settings).session_dir == tmp_path / "sessions"
    client_wins = load_config(tmp_path, {"compaction": {"keepRecentTokens": 7}}, environ, pi_settings)
    assert client_wins.compaction_settings().keep_recent_tokens == 7


def test_invalid_compaction_settings_fall_back_to_pis_defaults(tmp_path):
    config = load_config(tmp_path, {"compaction": {"reserveTokens": -1}}, {}, {})
    assert config.compaction_settings().reserve_tokens == 16384
    assert any("compaction settings are invalid" in problem for problem in config.problems)
