"""Server configuration: typed, defaulted, validated
once; pi's settings files for the shared keys."""

from pathlib import Path

from pi_lsp.config import load_config


def test_defaults_without_options(tmp_path):
    config = load_config(tmp_path, None, {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert config.session_dir == tmp_path / ".pi" / "sessions"
    assert config.thinking_level() == "medium" and config.settings.tokenizer == "tiktoken"
    assert (
        config.retry_settings().max_retries == 3 and config.retry_settings().base_delay_ms == 2000
    )
    assert config.settings.auto_name and config.settings.session_index
    assert config.problems == ()


def test_auto_name_can_be_turned_off(tmp_path):
    config = load_config(
        tmp_path, {"autoName": False}, {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    )
    assert config.settings.auto_name is False and config.problems == ()


def test_invalid_values_fall_back_to_defaults_with_one_problem_each(tmp_path):
    options = {
        "contextWindow": "big",
        "thinkingLevel": "huge",
        "model": "openai/x",
        "retry": {"maxRetries": 5},
    }
    config = load_config(tmp_path, options, {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert config.settings.context_window is None and config.thinking_level() == "medium"
    assert config.settings.model == "openai/x" and config.retry_settings().max_retries == 5
    assert len(config.problems) == 2 and "contextWindow" in config.problems[0]


def test_session_dir_precedence_and_pi_settings(tmp_path):
    pi_settings = {
        "defaultProvider": "anthropic",
        "defaultModel": "claude-y",
        "sessionDir": "/from-pi",
        "compaction": {"keepRecentTokens": 5000, "tokenizer": "chars4"},
    }
    environ: dict[str, str] = {}
    config = load_config(tmp_path, {}, environ, pi_settings)
    assert config.session_dir == Path("/from-pi")
    assert (
        config.model_settings()["defaultProvider"] == "anthropic"
        and config.model_settings()["defaultModel"] == "claude-y"
    )
    assert (
        config.compaction_settings().keep_recent_tokens == 5000 and config.tokenizer() == "chars4"
    )
    assert load_config(
        tmp_path, {}, {"PI_CODING_AGENT_SESSION_DIR": "/from-env"}, pi_settings
    ).session_dir == Path("/from-env")
    assert (
        load_config(tmp_path, {"sessionDir": "sessions"}, environ, pi_settings).session_dir
        == tmp_path / "sessions"
    )
    client_wins = load_config(
        tmp_path, {"compaction": {"keepRecentTokens": 7}}, environ, pi_settings
    )
    assert client_wins.compaction_settings().keep_recent_tokens == 7


def test_invalid_compaction_settings_fall_back_to_pis_defaults(tmp_path):
    config = load_config(tmp_path, {"compaction": {"reserveTokens": -1}}, {}, {})
    assert config.compaction_settings().reserve_tokens == 16384
    assert any("compaction settings are invalid" in problem for problem in config.problems)


def test_retry_and_thinking_level_come_from_pis_settings_unless_the_client_sets_them(tmp_path):
    pi_settings = {
        "retry": {"enabled": False, "maxRetries": 9, "baseDelayMs": 10},
        "defaultThinkingLevel": "high",
    }
    from_pi = load_config(tmp_path, {}, {}, pi_settings)
    assert from_pi.retry_settings().enabled is False and from_pi.retry_settings().max_retries == 9
    assert from_pi.thinking_level() == "high"
    client = load_config(
        tmp_path, {"retry": {"maxRetries": 1}, "thinkingLevel": "low"}, {}, pi_settings
    )
    retry = client.retry_settings()
    assert (retry.enabled, retry.max_retries, retry.base_delay_ms) == (False, 1, 10)
    assert client.thinking_level() == "low"


def test_negative_client_retry_values_are_reported_and_ignored(tmp_path):
    config = load_config(tmp_path, {"retry": {"maxRetries": -2}}, {}, {"retry": {"maxRetries": 4}})
    assert config.retry_settings().max_retries == 4
    assert any("retry" in problem for problem in config.problems)


def test_workspace_configuration_wins_over_initialization_options_but_never_sets_trust(tmp_path):
    options = {
        "model": "openai/a",
        "trusted": False,
        "compaction": {"reserveTokens": 100, "keepRecentTokens": 50},
    }
    live = {
        "model": "openai/b",
        "trusted": True,
        "apiBase": None,
        "contextWindow": "",
        "compaction": {"keepRecentTokens": 70, "enabled": None},
        "server": {"path": "/bin/pi-lsp"},
    }
    config = load_config(tmp_path, options, {}, {}, workspace_configuration=live)
    assert config.settings.model == "openai/b" and config.settings.trusted is False
    assert config.settings.api_base is None and config.settings.context_window is None
    assert (
        config.compaction_settings().reserve_tokens == 100
        and config.compaction_settings().keep_recent_tokens == 70
    )
    assert config.problems == ()
    assert "server" not in config.client_options


def test_invalid_workspace_configuration_values_are_problems_not_failures(tmp_path):
    config = load_config(
        tmp_path, {}, {}, {}, workspace_configuration={"contextWindow": "huge", "thinkingLevel": 3}
    )
    assert config.settings.context_window is None and config.thinking_level() == "medium"
    assert len(config.problems) == 2


def test_allowed_session_dirs_are_absolute_and_validated(tmp_path):
    environ: dict[str, str] = {}
    config = load_config(tmp_path, {"allowedSessionDirs": ["pi", "/abs", "~/x"]}, environ)
    assert config.allowed_session_dirs == (
        tmp_path / "pi",
        Path("/abs"),
        Path("~/x").expanduser(),
    )
    assert config.problems == ()
    for bad in ("/a/string", [""], [1], {"dir": "/x"}):
        invalid = load_config(tmp_path, {"allowedSessionDirs": bad}, environ)
        assert invalid.allowed_session_dirs == ()
        assert len(invalid.problems) == 1 and "allowedSessionDirs" in invalid.problems[0]


def test_cache_retention_comes_from_the_client_else_pis_settings(tmp_path):
    environ = {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    assert load_config(tmp_path, {}, environ).cache_retention() is None
    from_pi = load_config(tmp_path, {}, environ, {"cacheRetention": "long"})
    assert from_pi.cache_retention() == "long"
    client = load_config(tmp_path, {"cacheRetention": "none"}, environ, {"cacheRetention": "long"})
    assert client.cache_retention() == "none"
    invalid = load_config(tmp_path, {"cacheRetention": "forever"}, environ)
    assert invalid.cache_retention() is None
    assert invalid.problems == (
        "setting cacheRetention must be none, short or long; using the default",
    )


def test_a_compaction_threshold_and_file_list_limit_from_the_client_or_pi_settings(tmp_path):
    from pi_lsp.compaction.settings import Threshold

    pi_settings = {"compaction": {"threshold": "80%", "fileListLimit": 20}}
    config = load_config(tmp_path, {}, {}, pi_settings)
    settings = config.compaction_settings()
    assert settings.threshold == Threshold(percent=80.0) and settings.file_list_limit == 20
    client = load_config(tmp_path, {"compaction": {"threshold": 150000}}, {}, pi_settings)
    assert client.compaction_settings().threshold == Threshold(tokens=150000)
    assert load_config(tmp_path, {}, {}, {}).compaction_settings().threshold is None
    assert load_config(tmp_path, {}, {}, {}).compaction_settings().file_list_limit == 50


def test_an_invalid_threshold_is_reported_and_ignored_alone(tmp_path):
    options = {"compaction": {"threshold": "lots", "fileListLimit": -3, "reserveTokens": 500}}
    config = load_config(tmp_path, options, {}, {})
    settings = config.compaction_settings()
    assert settings.threshold is None and settings.file_list_limit == 50
    assert settings.reserve_tokens == 500  # the valid settings still apply
    assert any("compaction.threshold must be" in problem for problem in config.problems)
    assert any("compaction.fileListLimit" in problem for problem in config.problems)


def test_model_overrides_give_a_model_its_own_budgets(tmp_path):
    pi_settings = {
        "compaction": {
            "reserveTokens": 1000,
            "keepRecentTokens": 2000,
            "modelOverrides": {
                "anthropic/claude-big": {"reserveTokens": 400000},
                "openai/gpt/with/slashes": {"keepRecentTokens": 5, "reserveTokens": -3},
                "broken/entry": 7,
            },
        }
    }
    config = load_config(tmp_path, {}, {}, pi_settings)
    big = config.compaction_settings("anthropic/claude-big")
    assert (big.reserve_tokens, big.keep_recent_tokens) == (400000, 2000)
    slashes = config.compaction_settings("openai/gpt/with/slashes")
    assert (slashes.reserve_tokens, slashes.keep_recent_tokens) == (1000, 5)  # -3 is ignored
    for other in ("broken/entry", "Anthropic/claude-big", None):
        settings = config.compaction_settings(other)
        assert (settings.reserve_tokens, settings.keep_recent_tokens) == (1000, 2000)
