"""Settings: pi 0.84.2's deep merge, migrations, broken
JSON keeping the last good file, type checks."""

from __future__ import annotations

import json
from pathlib import Path

from pi_lsp.resources.settings import deep_merge, load_settings, migrate_settings


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "ws", tmp_path / "agent"


def test_deep_merge_project_wins_and_arrays_replace():
    base = {
        "compaction": {"enabled": False, "reserveTokens": 1},
        "retry": {"provider": {"a": 1, "b": 2}},
        "skills": ["x"],
    }
    project = {"compaction": {"reserveTokens": 2}, "retry": {"provider": {"b": 3}}, "skills": ["y"]}
    assert deep_merge(base, project) == {
        "compaction": {"enabled": False, "reserveTokens": 2},
        "retry": {"provider": {"a": 1, "b": 3}},
        "skills": ["y"],
    }


def test_project_settings_merge_over_global(tmp_path):
    workspace, agent_dir = dirs(tmp_path)
    write(
        agent_dir / "settings.json",
        {"compaction": {"enabled": False, "reserveTokens": 1000}, "defaultModel": "g"},
    )
    write(
        workspace / ".pi" / "settings.json",
        {"compaction": {"reserveTokens": 2000}, "defaultThinkingLevel": "high"},
    )
    loaded = load_settings(workspace, agent_dir, trusted=True)
    settings = loaded.settings
    assert (
        settings.compaction.enabled,
        settings.compaction.reserve_tokens,
        settings.compaction.keep_recent_tokens,
    ) == (False, 2000, 20000)
    assert settings.default_model == "g" and settings.default_thinking_level == "high"
    assert loaded.diagnostics == ()


def test_untrusted_workspace_ignores_project_settings(tmp_path):
    workspace, agent_dir = dirs(tmp_path)
    write(workspace / ".pi" / "settings.json", {"enableSkillCommands": False})
    loaded = load_settings(workspace, agent_dir, trusted=False)
    assert loaded.project_file is None and loaded.settings.enable_skill_commands is True


def test_missing_and_empty_files_are_empty_settings(tmp_path):
    workspace, agent_dir = dirs(tmp_path)
    write(agent_dir / "settings.json", "")
    loaded = load_settings(workspace, agent_dir, trusted=True)
    assert loaded.settings.merged == {} and loaded.diagnostics == ()


def test_broken_json_keeps_the_previous_value(tmp_path):
    workspace, agent_dir = dirs(tmp_path)
    path = write(agent_dir / "settings.json", {"retry": {"maxRetries": 7}})
    first = load_settings(workspace, agent_dir, trusted=True)
    assert first.settings.retry.max_retries == 7
    path.write_text('{\n  "retry": {\n    "maxRetries": 9,\n  }\n}', encoding="utf-8")
    second = load_settings(workspace, agent_dir, trusted=True, previous=first)
    assert second.settings.retry.max_retries == 7
    (diagnostic,) = second.diagnostics
    assert (diagnostic.path, diagnostic.line, diagnostic.severity) == (str(path), 4, "error")
    assert "line 4, column 3" in diagnostic.message
    # Without a previous load there is nothing to keep.
    assert load_settings(workspace, agent_dir, trusted=True).settings.retry.max_retries == 3


def test_non_object_settings_keep_the_previous_value(tmp_path):
    workspace, agent_dir = dirs(tmp_path)
    path = write(agent_dir / "settings.json", {"defaultModel": "m"})
    first = load_settings(workspace, agent_dir, trusted=True)
    path.write_text("[1, 2]", encoding="utf-8")
    second = load_settings(workspace, agent_dir, trusted=True, previous=first)
    assert second.settings.default_model == "m" and second.diagnostics[0].severity == "error"


def test_wrong_types_fall_back_with_diagnostics_on_their_lines(tmp_path):
    workspace, agent_dir = dirs(tmp_path)
    write(
        agent_dir / "settings.json",
        {"compaction": {"keepRecentTokens": 5000}, "enableSkillCommands": False},
    )
    project = write(
        workspace / ".pi" / "settings.json",
        '{\n  "compaction": {\n    "enabled": true,\n    "keepRecentTokens": "lots"\n  },\n'
        '  "retry": 5,\n  "defaultThinkingLevel": "extreme",\n  "enableSkillCommands": "no",\n'
        '  "skills": ["ok", 3],\n  "sessionDir": 1,\n  "unknownKey": {"anything": true}\n}',
    )
    loaded = load_settings(workspace, agent_dir, trusted=True)
    settings = loaded.settings
    assert (
        settings.compaction.keep_recent_tokens == 5000
    )  # the global value survives the bad project one
    assert settings.compaction.enabled is True
    assert settings.retry.max_retries == 3
    assert settings.default_thinking_level is None
    assert settings.enable_skill_commands is False
    assert settings.session_dir is None
    assert settings.merged["unknownKey"] == {"anything": True}
    assert {(d.line, d.message.split(" must")[0]) for d in loaded.diagnostics} == {
        (4, "compaction.keepRecentTokens"),
        (6, "retry"),
        (7, "defaultThinkingLevel"),
        (8, "enableSkillCommands"),
        (9, "skills"),
        (10, "sessionDir"),
    }
    assert all(d.path == str(project) and d.severity == "warning" for d in loaded.diagnostics)


def test_migrations():
    migrated = migrate_settings(
        {
            "queueMode": "all",
            "websockets": True,
            "skills": {"enableSkillCommands": False, "customDirectories": ["~/s"]},
            "retry": {"maxDelayMs": 5000},
        }
    )
    assert migrated == {
        "steeringMode": "all",
        "transport": "websocket",
        "enableSkillCommands": False,
        "skills": ["~/s"],
        "retry": {"provider": {"maxRetryDelayMs": 5000}},
    }
    assert migrate_settings({"skills": {"customDirectories": []}}) == {}


def test_retry_provider_delay(tmp_path):
    workspace, agent_dir = dirs(tmp_path)
    write(
        agent_dir / "settings.json",
        {"retry": {"enabled": False, "baseDelayMs": 10, "maxDelayMs": 999}},
    )
    retry = load_settings(workspace, agent_dir, trusted=True).settings.retry
    assert (retry.enabled, retry.base_delay_ms, retry.max_retry_delay_ms) == (False, 10, 999)


def test_pi_lsps_compaction_settings_in_pis_files_are_checked_too(tmp_path):
    from pi_lsp.compaction.settings import Threshold

    workspace, agent_dir = dirs(tmp_path)
    write(agent_dir / "settings.json", {"compaction": {"threshold": "75%", "fileListLimit": 10}})
    settings = load_settings(workspace, agent_dir, trusted=True).settings
    assert settings.compaction.threshold == Threshold(percent=75.0)
    assert settings.compaction.file_list_limit == 10
    write(agent_dir / "settings.json", {"compaction": {"threshold": "soon"}})
    loaded = load_settings(workspace, agent_dir, trusted=True)
    assert loaded.settings.compaction.threshold is None
    assert [d.message.split(" must")[0] for d in loaded.diagnostics] == ["compaction.threshold"]
