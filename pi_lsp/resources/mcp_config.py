"""pi 1.6's ``mcp.json``: the MCP servers of ``<agentDir>/mcp.json`` and, in trusted workspaces,
of the project's ``.pi/mcp.json``, read and checked as pi 1.6 reads them (its ``docs/mcp.md`` and
``extensions/mcp/config.js``).

Each ``mcpServers`` entry is a stdio server (``command``, ``args``, ``env``, ``cwd``) or a
streamable-HTTP one (``url``, ``headers``, ``oauth``), with ``type`` (``stdio``, ``http``,
``streamable-http``; ``sse`` is refused with pi's message), ``enabled``, ``timeout`` (seconds,
60 by default), ``description``, ``exposure`` and ``toolExposure``. A project entry with neither
``command``, ``url`` nor ``type`` only overrides ``enabled``/``exposure``/``toolExposure`` of the
user's entry of that name; any other project entry replaces the user's.

Values are kept as written: ``${VAR}`` and ``!command`` in ``env`` and ``headers`` are resolved by
``pi_lsp/mcp`` when it connects, so reading the file runs nothing. Every problem is a diagnostic
on its line and only the entry concerned is left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import attrs

from pi_lsp.resources.diagnostics import ResourceDiagnostic, error
from pi_lsp.resources.settings import key_line

MCP_FILE = "mcp.json"
DEFAULT_TIMEOUT_SECONDS = 60.0
EXPOSURES = ("codemode", "deferred", "direct", "hidden")
EXPOSURE_ALIASES = {"codemode-deferred": "codemode"}
OVERRIDE_KEYS = ("enabled", "exposure", "toolExposure")
_SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")
_LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1")

Exposure = Literal["codemode", "deferred", "direct", "hidden"]
Transport = Literal["stdio", "http"]
Scope = Literal["user", "project", "acp"]


@attrs.frozen
class McpServerConfig:
    """One server as configured (values unresolved)."""

    name: str
    transport: Transport
    source: str
    """The file that defines it (or ``ACP session/new`` for a server an ACP client passed)."""
    scope: Scope
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    oauth: Mapping[str, Any] | None = None
    enabled: bool = True
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    description: str | None = None
    exposure: Exposure = "codemode"
    tool_exposure: Mapping[str, Exposure] = attrs.field(factory=dict)
    override: str | None = None
    """The project file whose override changed ``enabled``/``exposure``/``toolExposure``."""

    def tool_exposure_of(self, tool: str) -> Exposure:
        """pi's ``getMcpToolExposure``: an exact ``toolExposure`` key, else the first matching
        pattern (``*`` any characters), else the server's exposure."""
        exact = self.tool_exposure.get(tool)
        if exact is not None:
            return exact
        for pattern, exposure in self.tool_exposure.items():
            if "*" in pattern and tool_pattern(pattern).fullmatch(tool):
                return exposure
        return self.exposure


@attrs.frozen
class McpConfig:
    servers: tuple[McpServerConfig, ...] = ()
    diagnostics: tuple[ResourceDiagnostic, ...] = ()
    files: tuple[str, ...] = ()
    """The ``mcp.json`` files that were read (existing ones)."""


def tool_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def namespace(server: str) -> str:
    """``mcp__<server>`` with ``-`` as ``_``: names differing only there are the same server."""
    return f"mcp__{server.replace('-', '_')}"


def load_mcp_config(workspace: Path, agent_dir: Path, *, trusted: bool) -> McpConfig:
    """The servers of the user's file, then the project's (trusted workspaces only)."""
    reader = _Reader()
    reader.read(agent_dir / MCP_FILE, "user")
    if trusted:
        reader.read(workspace / ".pi" / MCP_FILE, "project")
    return McpConfig(tuple(reader.servers.values()), tuple(reader.problems), tuple(reader.files))


def parse_server(name: str, raw: Any, source: str, scope: Scope) -> McpServerConfig | str:
    """One ``mcpServers`` entry checked as pi 1.6 checks it; the error message when invalid."""
    if not _SERVER_NAME.fullmatch(name):
        return f'invalid server name "{name}" (use letters, digits, "_" and "-")'
    if not isinstance(raw, Mapping):
        return f'server "{name}" must be an object'
    raw = _resolve_aliases(raw)
    problem = _base_problem(raw) or _exposure_problem(raw)
    if problem:
        return f'server "{name}": {problem}'
    kind, url, command = raw.get("type"), raw.get("url"), raw.get("command")
    if kind == "sse":
        return (
            f'server "{name}": legacy SSE transport is not supported; use the streamable HTTP URL'
        )
    common: dict[str, Any] = {
        "name": name,
        "source": source,
        "scope": scope,
        "enabled": raw.get("enabled", True),
        "timeout": float(raw.get("timeout", DEFAULT_TIMEOUT_SECONDS)),
        "description": raw.get("description"),
        "exposure": raw.get("exposure", "codemode"),
        "tool_exposure": dict(raw.get("toolExposure") or {}),
    }
    if isinstance(url, str) and kind in (None, "http", "streamable-http"):
        problem = _http_problem(raw, url)
        if problem:
            return f'server "{name}": {problem}'
        oauth = raw.get("oauth")
        return McpServerConfig(
            transport="http",
            url=url,
            headers=dict(raw.get("headers") or {}),
            oauth=dict(oauth) if isinstance(oauth, Mapping) else None,
            **common,
        )
    if isinstance(command, str) and kind in (None, "stdio"):
        problem = _stdio_problem(raw)
        if problem:
            return f'server "{name}": {problem}'
        return McpServerConfig(
            transport="stdio",
            command=command,
            args=tuple(raw.get("args") or ()),
            env=dict(raw.get("env") or {}),
            cwd=raw.get("cwd"),
            **common,
        )
    return f'server "{name}" needs either "command" (stdio) or "url" (streamable HTTP)'


class _Reader:
    def __init__(self) -> None:
        self.servers: dict[str, McpServerConfig] = {}
        self.problems: list[ResourceDiagnostic] = []
        self.files: list[str] = []

    def read(self, path: Path, scope: Scope) -> None:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            return
        except OSError as unreadable:
            self.problems.append(error(str(path), 1, f"cannot read {MCP_FILE}: {unreadable}"))
            return
        self.files.append(str(path))
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as broken:
            self.problems.append(error(str(path), broken.lineno, f"invalid JSON: {broken.msg}"))
            return
        servers = parsed.get("mcpServers", {}) if isinstance(parsed, dict) else None
        if not isinstance(servers, dict):
            message = 'expected an object with an "mcpServers" object'
            self.problems.append(error(str(path), 1, message))
            return
        for name, raw in servers.items():
            problem = self._add(path, scope, str(name), raw)
            if problem:
                line = key_line(text, ("mcpServers", str(name)))
                self.problems.append(error(str(path), line, problem))

    def _add(self, path: Path, scope: Scope, name: str, raw: Any) -> str | None:
        source = str(path)
        if scope == "project" and isinstance(raw, Mapping) and _is_override(raw):
            return self._override(source, name, raw)
        parsed = parse_server(name, raw, source, scope)
        if isinstance(parsed, str):
            return parsed
        clash = next(
            (
                other
                for other in self.servers
                if other != name and namespace(other) == namespace(name)
            ),
            None,
        )
        if clash is not None:
            return f'server "{name}" conflicts with "{clash}"'
        self.servers[name] = parsed
        return None

    def _override(self, source: str, name: str, raw: Mapping[str, Any]) -> str | None:
        base = self.servers.get(name)
        if base is None:
            return f'server "{name}" needs "command" or "url", or a global server to override'
        if set(raw) - set(OVERRIDE_KEYS):
            return f'server "{name}": an override can only set {", ".join(OVERRIDE_KEYS)}'
        raw = _resolve_aliases(raw)
        problem = _base_problem(raw) or _exposure_problem(raw)
        if problem:
            return f'server "{name}": {problem}'
        changes: dict[str, Any] = {"override": source}
        if "enabled" in raw:
            changes["enabled"] = raw["enabled"]
        if "exposure" in raw:
            changes["exposure"] = raw["exposure"]
        if "toolExposure" in raw:
            changes["tool_exposure"] = dict(raw["toolExposure"])
        self.servers[name] = attrs.evolve(base, **changes)
        return None


def _is_override(raw: Mapping[str, Any]) -> bool:
    return "command" not in raw and "url" not in raw and "type" not in raw


def _resolve_aliases(raw: Mapping[str, Any]) -> dict[str, Any]:
    resolved = dict(raw)
    exposure = resolved.get("exposure")
    if isinstance(exposure, str):
        resolved["exposure"] = EXPOSURE_ALIASES.get(exposure, exposure)
    tool_exposure = resolved.get("toolExposure")
    if isinstance(tool_exposure, Mapping):
        resolved["toolExposure"] = {
            tool: EXPOSURE_ALIASES.get(value, value) if isinstance(value, str) else value
            for tool, value in tool_exposure.items()
        }
    return resolved


def _base_problem(raw: Mapping[str, Any]) -> str | None:
    enabled, timeout, description = raw.get("enabled"), raw.get("timeout"), raw.get("description")
    if enabled is not None and not isinstance(enabled, bool):
        return "enabled must be a boolean"
    if description is not None and not isinstance(description, str):
        return "description must be a string"
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
    ):
        return "timeout must be a positive number of seconds"
    return None


def _exposure_problem(raw: Mapping[str, Any]) -> str | None:
    choices = ", ".join(f'"{value}"' for value in EXPOSURES)
    exposure, tool_exposure = raw.get("exposure"), raw.get("toolExposure")
    if exposure is not None and exposure not in EXPOSURES:
        return f"exposure must be one of {choices}"
    if tool_exposure is not None:
        if not isinstance(tool_exposure, Mapping):
            return "toolExposure must map tool names to exposures"
        for tool, value in tool_exposure.items():
            if value not in EXPOSURES:
                return f'toolExposure "{tool}" must be one of {choices}'
    return None


def _is_string_map(value: Any) -> bool:
    return isinstance(value, Mapping) and all(isinstance(item, str) for item in value.values())


def _stdio_problem(raw: Mapping[str, Any]) -> str | None:
    args, env, cwd = raw.get("args"), raw.get("env"), raw.get("cwd")
    if args is not None and not (
        isinstance(args, list) and all(isinstance(arg, str) for arg in args)
    ):
        return "args must be an array of strings"
    if env is not None and not _is_string_map(env):
        return "env must map names to strings"
    if cwd is not None and not isinstance(cwd, str):
        return "cwd must be a string"
    return None


def _http_problem(raw: Mapping[str, Any], url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return "url must be an http or https URL"
    headers = raw.get("headers")
    if headers is not None and not _is_string_map(headers):
        return "headers must map names to strings"
    return _oauth_problem(raw.get("oauth"))


def _oauth_problem(oauth: Any) -> str | None:
    """pi 1.6's checks of ``oauth`` (its ``validateOAuth``), in its words."""
    if oauth is None:
        return None
    if not isinstance(oauth, Mapping):
        return "oauth must be an object"
    for key in ("clientId", "clientSecret", "scope"):
        if key in oauth and not isinstance(oauth[key], str):
            return f"oauth.{key} must be a string"
    port = oauth.get("callbackPort")
    if port is not None and (
        isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535
    ):
        return "oauth.callbackPort must be a port number"
    name = oauth.get("clientName")
    if name is not None and not (isinstance(name, str) and name.strip()):
        return "oauth.clientName must be a non-empty string"
    return (
        _callback_url_problem(oauth.get("callbackUrl"), port)
        or _registration_problem(oauth)
        or _metadata_url_problem(oauth.get("authServerMetadataUrl"))
    )


def _callback_url_problem(callback: Any, port: int | None) -> str | None:
    if callback is None:
        return None
    parts = urlsplit(callback) if isinstance(callback, str) else None
    try:
        written_port = parts.port if parts else None
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme != "http"
        or parts.hostname not in _LOOPBACK_HOSTS
        or parts.query
        or parts.fragment
    ):
        return (
            "oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] "
            "without query or fragment"
        )
    if written_port is not None and port is not None and written_port != port:
        return "oauth.callbackUrl and oauth.callbackPort name different ports"
    return None


def _registration_problem(oauth: Mapping[str, Any]) -> str | None:
    """``cimd`` (pi's Client ID Metadata Documents) needs a redirect URI the documents list."""
    registration = oauth.get("clientRegistration")
    if registration is None or registration in ("auto", "dcr"):
        return None
    if registration != "cimd":
        return 'oauth.clientRegistration must be "auto", "dcr", or "cimd"'
    if "clientId" in oauth or "clientName" in oauth:
        return (
            'oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or '
            "oauth.clientName"
        )
    callback = oauth.get("callbackUrl")
    if callback and (
        urlsplit(str(callback)).hostname == "::1" or urlsplit(str(callback)).path != "/callback"
    ):
        return (
            'oauth.clientRegistration "cimd" requires oauth.callbackUrl on localhost or '
            "127.0.0.1 with path /callback"
        )
    return None


def _metadata_url_problem(url: Any) -> str | None:
    parts = urlsplit(url) if isinstance(url, str) else None
    if url is None or (
        parts is not None
        and parts.netloc
        and (
            parts.scheme == "https"
            or (parts.scheme == "http" and parts.hostname in _LOOPBACK_HOSTS)
        )
    ):
        return None
    return (
        "oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, "
        "or [::1]"
    )
