"""pi 1.6's mcp.json as pi-lsp reads it: fields, overrides, trust, and diagnostics per entry."""

from __future__ import annotations

import json

from pi_lsp.resources.mcp_config import load_mcp_config, parse_server
from pi_lsp.resources.snapshot import diff_snapshots, load_resources
from pi_lsp.resources.watch_plan import watch_plan


def _write(path, servers, **extra):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers, **extra}, indent=2), encoding="utf-8")


def test_stdio_and_http_entries_are_read_with_their_defaults(tmp_path):
    agent, workspace = tmp_path / "agent", tmp_path / "ws"
    _write(
        agent / "mcp.json",
        {
            "files": {"command": "npx", "args": ["-y", "server"], "env": {"K": "${KEY}"}},
            "docs": {"url": "https://example.com/mcp", "headers": {"A": "!echo hi"}},
        },
    )
    config = load_mcp_config(workspace, agent, trusted=False)
    files, docs = config.servers
    assert (files.transport, files.command, files.args) == ("stdio", "npx", ("-y", "server"))
    assert files.env == {"K": "${KEY}"}  # kept as written: resolved when connecting
    assert (files.timeout, files.exposure, files.enabled) == (60.0, "codemode", True)
    assert (docs.transport, docs.url, docs.headers) == (
        "http",
        "https://example.com/mcp",
        {"A": "!echo hi"},
    )
    assert config.diagnostics == ()


def test_sse_is_refused_with_pis_message():
    problem = parse_server("old", {"type": "sse", "url": "https://x/sse"}, "f", "user")
    assert (
        problem
        == 'server "old": legacy SSE transport is not supported; use the streamable HTTP URL'
    )


def test_each_invalid_entry_is_a_diagnostic_on_its_line_and_the_others_load(tmp_path):
    agent = tmp_path / "agent"
    _write(
        agent / "mcp.json",
        {
            "good": {"command": "a"},
            "bad name!": {"command": "b"},
            "nothing": {"enabled": True},
            "slow": {"command": "c", "timeout": -1},
            "exposed": {"command": "d", "exposure": "everywhere"},
            "typed": {"type": "stdio", "url": "http://x"},
        },
    )
    config = load_mcp_config(tmp_path / "ws", agent, trusted=True)
    assert [server.name for server in config.servers] == ["good"]
    messages = [(problem.line, problem.message) for problem in config.diagnostics]
    text = (agent / "mcp.json").read_text().splitlines()
    for line, message in messages:
        assert text[line - 1].strip().startswith('"'), (line, message)
    assert [message for _, message in messages] == [
        'invalid server name "bad name!" (use letters, digits, "_" and "-")',
        'server "nothing" needs either "command" (stdio) or "url" (streamable HTTP)',
        'server "slow": timeout must be a positive number of seconds',
        'server "exposed": exposure must be one of "codemode", "deferred", "direct", "hidden"',
        'server "typed" needs either "command" (stdio) or "url" (streamable HTTP)',
    ]
    assert all(problem.severity == "error" for problem in config.diagnostics)


def test_dash_and_underscore_name_the_same_server(tmp_path):
    agent = tmp_path / "agent"
    _write(agent / "mcp.json", {"my-tools": {"command": "a"}, "my_tools": {"command": "b"}})
    config = load_mcp_config(tmp_path, agent, trusted=False)
    assert [server.name for server in config.servers] == ["my-tools"]
    assert config.diagnostics[0].message == 'server "my_tools" conflicts with "my-tools"'


def test_the_project_file_counts_only_in_a_trusted_workspace(tmp_path):
    agent, workspace = tmp_path / "agent", tmp_path / "ws"
    _write(workspace / ".pi" / "mcp.json", {"local": {"command": "x"}})
    assert load_mcp_config(workspace, agent, trusted=False).servers == ()
    assert [s.name for s in load_mcp_config(workspace, agent, trusted=True).servers] == ["local"]


def test_a_project_override_changes_only_enabled_and_exposure(tmp_path):
    agent, workspace = tmp_path / "agent", tmp_path / "ws"
    _write(agent / "mcp.json", {"tools": {"command": "x", "env": {"TOKEN": "${T}"}}})
    _write(
        workspace / ".pi" / "mcp.json",
        {"tools": {"enabled": False, "exposure": "codemode-deferred"}, "nobody": {"enabled": True}},
    )
    config = load_mcp_config(workspace, agent, trusted=True)
    (server,) = config.servers
    assert (server.enabled, server.exposure, server.env) == (False, "codemode", {"TOKEN": "${T}"})
    assert server.override == str(workspace / ".pi" / "mcp.json")
    assert server.source == str(agent / "mcp.json")
    assert [p.message for p in config.diagnostics] == [
        'server "nobody" needs "command" or "url", or a global server to override'
    ]


def test_an_override_with_other_fields_is_refused(tmp_path):
    agent, workspace = tmp_path / "agent", tmp_path / "ws"
    _write(agent / "mcp.json", {"tools": {"command": "x"}})
    _write(workspace / ".pi" / "mcp.json", {"tools": {"enabled": False, "env": {"A": "b"}}})
    config = load_mcp_config(workspace, agent, trusted=True)
    assert config.servers[0].enabled is True
    assert config.diagnostics[0].message == (
        'server "tools": an override can only set enabled, exposure, toolExposure'
    )


def test_a_full_project_entry_replaces_the_users(tmp_path):
    agent, workspace = tmp_path / "agent", tmp_path / "ws"
    _write(agent / "mcp.json", {"tools": {"command": "user"}})
    _write(workspace / ".pi" / "mcp.json", {"tools": {"command": "project"}})
    (server,) = load_mcp_config(workspace, agent, trusted=True).servers
    assert (server.command, server.scope) == ("project", "project")


def test_tool_exposure_exact_names_win_then_the_first_pattern():
    server = parse_server(
        "gh",
        {
            "command": "x",
            "exposure": "deferred",
            "toolExposure": {"get_*": "hidden", "get_me": "direct", "g*": "codemode"},
        },
        "f",
        "user",
    )
    assert not isinstance(server, str)
    assert server.tool_exposure_of("get_me") == "direct"
    assert server.tool_exposure_of("get_issue") == "hidden"
    assert server.tool_exposure_of("grep") == "codemode"
    assert server.tool_exposure_of("search") == "deferred"


def test_broken_json_is_a_diagnostic(tmp_path):
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "mcp.json").write_text('{"mcpServers": {\n  "a": }', encoding="utf-8")
    config = load_mcp_config(tmp_path, agent, trusted=False)
    assert config.servers == ()
    assert config.diagnostics[0].line == 2
    assert config.diagnostics[0].message.startswith("invalid JSON")


def test_the_snapshot_carries_the_servers_and_reports_their_changes(tmp_path):
    agent, workspace = tmp_path / "agent", tmp_path / "ws"
    workspace.mkdir()
    _write(agent / "mcp.json", {"a": {"command": "x"}, "bad": {"url": "ftp://x"}})
    before = load_resources(workspace, agent, trusted=True, home=tmp_path)
    assert [server.name for server in before.mcp.servers] == ["a"]
    assert any("url must be an http" in problem.message for problem in before.diagnostics)
    _write(agent / "mcp.json", {"a": {"command": "y"}})
    after = load_resources(workspace, agent, trusted=True, home=tmp_path, previous=before)
    changes = diff_snapshots(before, after)
    assert [(ref.kind, ref.name) for ref in changes.changed] == [("mcpServer", "a")]


def test_both_files_are_watched(tmp_path):
    agent, workspace = tmp_path / "agent", tmp_path / "ws"
    (workspace / ".pi").mkdir(parents=True)
    agent.mkdir()
    plan = watch_plan(workspace, agent, tmp_path)
    assert plan.is_shallow_resource(str(agent / "mcp.json"))
    assert plan.is_shallow_resource(str(workspace / ".pi" / "mcp.json"))


def test_every_oauth_option_of_pi_is_used_or_refused_in_pis_words():
    def problem(oauth):
        parsed = parse_server("s", {"url": "https://x/mcp", "oauth": oauth}, "f", "user")
        return parsed if isinstance(parsed, str) else None

    used = {
        "clientId": "c",
        "clientSecret": "${SECRET}",
        "scope": "a b",
        "clientName": "Claude Code",
        "callbackUrl": "http://localhost:8765/callback",
        "callbackPort": 8765,
        "clientRegistration": "dcr",
        "authServerMetadataUrl": "https://example.okta.com/.well-known/openid-configuration",
    }
    assert problem(used) is None
    assert problem({"authServerMetadataUrl": "http://[::1]:9000/.well-known/x"}) is None
    assert problem({"clientRegistration": "cimd"}) is None
    for oauth, message in [
        ({"clientName": " "}, "oauth.clientName must be a non-empty string"),
        (
            {"callbackUrl": "http://127.0.0.1:1/callback", "callbackPort": 2},
            "oauth.callbackUrl and oauth.callbackPort name different ports",
        ),
        ({"clientRegistration": "cimd", "clientId": "c"}, "cannot be combined with"),
        (
            {"clientRegistration": "cimd", "callbackUrl": "http://127.0.0.1/back"},
            "requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback",
        ),
        ({"authServerMetadataUrl": "http://example.com/m"}, "must be an https URL"),
        ({"authServerMetadataUrl": 7}, "must be an https URL"),
    ]:
        assert message in (problem(oauth) or ""), oauth
