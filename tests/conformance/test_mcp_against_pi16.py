"""MCP as pi 1.6 does it: pi-lsp's reading of ``mcp.json``, its names for server tools and its
cut of long results against pi 1.6's own ``loadMcpConfig``, ``createMcpToolName`` and
``limitMcpContent`` (``tests/reference/mcp_reference.mjs``) on the same input, so a session moves
between pi and pi-lsp with its MCP tool calls intact."""

from __future__ import annotations

import json
from pathlib import Path

from pi_lsp.mcp.naming import server_tool_names
from pi_lsp.mcp.output import limit_content
from pi_lsp.mcp.tool_search import rank, search_document
from pi_lsp.resources.mcp_config import load_mcp_config

from .harness import REFERENCE_DIR, run_node_script

SCRIPT = REFERENCE_DIR / "mcp_reference.mjs"
SERVERS = [
    ("time", ["get_current_time", "convert_time"]),
    ("everything", ["echo", "trigger-long-running-operation", "get-tiny-image"]),
    ("dev-radius", ["a-b", "a_b", "a.b", "plain"]),
    ("dev_radius2", ["x" * 80, "x" * 80 + "y"]),
    ("ünïcode", ["tööl", "tool", "smile🙂"]),
    ("other", ["echo"]),
]
TEXTS = [
    "short",
    "a" * (20 * 1024),
    "b" * (20 * 1024 + 1),
    "line\n" * 9000,
    "é" * 15_000 + "\n",
    "🙂" * 7000,
]
USER_FILE = {
    "mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server"]},
        "docs": {"url": "https://example.com/mcp", "headers": {"A": "${TOKEN}"}},
        "old": {"type": "sse", "url": "https://example.com/sse"},
        "bad name": {"command": "x"},
        "slow": {"command": "x", "timeout": 0},
        "shown": {"command": "x", "exposure": "codemode-deferred"},
        "same-name": {"command": "x"},
        "same_name": {"command": "y"},
        "neither": {"description": "nothing to start"},
        "wrong": {"command": "x", "toolExposure": {"a": "sometimes"}},
    }
}
PROJECT_FILE = {
    "mcpServers": {
        "files": {"enabled": False, "exposure": "direct"},
        "docs": {"enabled": False, "env": {"A": "b"}},
        "ghost": {"enabled": True},
        "local": {"command": "./serve"},
    }
}


NAMESPACES = {
    "mcp__github": "GitHub issues and pull requests",
    "mcp__peekaboo": "Screenshots of macOS windows",
    "mcp__time": "",
    "mcp__misc": "Tools that misbehave",
}
SEARCH_TOOLS = [
    ("mcp__github__create_issue", "Create a new issue in a GitHub repository",
     ["owner", "repo", "title", "body"]),
    ("mcp__github__search_issues", "Search issues and pull requests", ["query", "sort"]),
    ("mcp__github__get_file_contents", "Get the contents of a file or directory",
     ["path", "ref"]),
    ("mcp__peekaboo__app", "Launch, quit or focus an application", ["name", "action"]),
    ("mcp__peekaboo__see", "Take a screenshot of a window and describe it",
     ["app", "window_title"]),
    ("mcp__time__get_current_time", "Get current time in a specific timezones", ["timezone"]),
    ("mcp__time__convert_time", "Convert time between timezones",
     ["source_timezone", "time", "target_timezone"]),
    ("mcp__misc__echo", "Echo the text back", ["text"]),
]  # fmt: skip
QUERIES = [
    "create an issue",
    "screenshot window",
    "peekaboo app",
    "convert timezones",
    "get_current_time",
    "time__convert_time",
    "echo",
    "the of and",
    "files",
    "SearchIssues",
]


def _search_documents() -> list[dict]:
    return [
        {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    field: {"type": "string", "description": f"The {field}"} for field in fields
                },
            },
            "namespace": name.rsplit("__", 1)[0],
            "namespaceDescription": NAMESPACES[name.rsplit("__", 1)[0]],
        }
        for name, description, fields in SEARCH_TOOLS
    ]


def pi16(reference_node: Path, agent: Path, workspace: Path, trusted: bool) -> dict:
    request = {
        "config": {"agentDir": str(agent), "cwd": str(workspace), "trusted": trusted},
        "servers": SERVERS,
        "texts": TEXTS,
        "search": {"documents": _search_documents(), "queries": QUERIES, "limit": 3},
    }
    output = run_node_script(reference_node, SCRIPT, [], stdin=json.dumps(request).encode())
    return json.loads(output)


def _files(tmp_path: Path) -> tuple[Path, Path]:
    agent, workspace = tmp_path / "agent", tmp_path / "ws"
    (workspace / ".pi").mkdir(parents=True)
    agent.mkdir()
    (agent / "mcp.json").write_text(json.dumps(USER_FILE, indent=2))
    (workspace / ".pi" / "mcp.json").write_text(json.dumps(PROJECT_FILE, indent=2))
    return agent, workspace


def test_mcp_json_is_read_as_pi_16_reads_it(reference_node, tmp_path):
    agent, workspace = _files(tmp_path)
    for trusted in (True, False):
        reference = pi16(reference_node, agent, workspace, trusted)["config"]
        ours = load_mcp_config(workspace, agent, trusted=trusted)
        assert [
            {
                "name": server.name,
                "source": server.source,
                "enabled": server.enabled,
                "exposure": server.exposure,
                "kind": server.transport,
            }
            for server in ours.servers
        ] == reference["servers"]
        # pi prefixes each message with the file's path; pi-lsp puts it on the file's line.
        assert [f"{problem.path}: {problem.message}" for problem in ours.diagnostics] == reference[
            "errors"
        ]


def test_tool_names_are_pi_16s(reference_node, tmp_path):
    agent, workspace = _files(tmp_path)
    reference = pi16(reference_node, agent, workspace, True)["names"]
    owners: dict[str, str] = {}
    assert [server_tool_names(server, tools, owners) for server, tools in SERVERS] == reference


def test_long_results_are_cut_as_pi_16_cuts_them(reference_node, tmp_path):
    agent, workspace = _files(tmp_path)
    reference = pi16(reference_node, agent, workspace, True)["limited"]
    ours = [
        limit_content([{"type": "text", "text": text}], lambda data, extension: "FULL")[0][0][
            "text"
        ]
        for text in TEXTS
    ]
    assert ours == reference


def test_tool_search_ranks_as_pi_16_ranks(reference_node, tmp_path):
    agent, workspace = _files(tmp_path)
    reference = pi16(reference_node, agent, workspace, True)["ranked"]
    documents = [
        search_document(
            tool["name"],
            tool["description"],
            tool["parameters"],
            " ".join([tool["namespace"], tool["namespaceDescription"], ""]),
        )
        for tool in _search_documents()
    ]
    assert [rank(query, documents, 3) for query in QUERIES] == reference
    assert reference[0][0] == "mcp__github__create_issue"  # the comparison is not vacuous
