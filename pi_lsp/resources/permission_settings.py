"""The ``permissions`` setting: which tool calls run at once and which ask the user first.

One object, the same in pi's settings files (``<agentDir>/settings.json``, the project's
``.pi/settings.json`` when the workspace is trusted) and in the editor's settings
(``pi.permissions``, ``initializationOptions.permissions``); the editor's keys win over pi's, key
by key::

    "permissions": {
      "bash": {"ask": true, "allow": ["git status", "npm test*"]},
      "write": "ask",
      "edit": {"allow": ["docs/**"]},
      "readOnly": "allow",
      "timeoutSeconds": 120
    }

A tool's value is ``"allow"``, ``"ask"`` or ``{"ask": bool, "allow": [patterns]}``; ``readOnly``
stands for ``read``, ``grep``, ``find`` and ``ls``. A key with ``*`` names every tool it
matches (``"mcp__github__*": "ask"``); a tool's own key wins over patterns. A rule left out (or
``ask`` left out of an object) keeps the default of the workspace's trust, which
``agent/permission_policy.py`` applies.
Invalid values are reported and replaced by the default, never refused.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

import attrs

READ_ONLY_GROUP = "readOnly"
READ_ONLY_TOOLS = ("read", "grep", "find", "ls")
ASKING_WHEN_UNTRUSTED = ("bash", "write", "edit")
DEFAULT_TIMEOUT_SECONDS = 120.0
TIMEOUT_KEY = "timeoutSeconds"


@attrs.frozen
class ToolRule:
    """One tool's (or the read-only group's) rule."""

    ask: bool | None = None
    """True: ask; False: allow; None: the trust default."""
    allow: tuple[str, ...] = ()
    """Commands (``bash``) or paths (the others) that run without asking."""


@attrs.frozen
class PermissionSettings:
    rules: Mapping[str, ToolRule] = attrs.Factory(dict)
    """The configured rules by key (a tool name or ``readOnly``)."""
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    """How long a question waits for an answer before the call is refused."""

    def rule_for(self, tool_name: str) -> ToolRule:
        """The configured rule of ``tool_name`` (its group's for a read-only tool); else the
        first key with ``*`` that matches it (``mcp__github__*``)."""
        key = READ_ONLY_GROUP if tool_name in READ_ONLY_TOOLS else tool_name
        rule = self.rules.get(key)
        if rule is not None:
            return rule
        for pattern, candidate in self.rules.items():
            if "*" in pattern and fnmatch.fnmatchcase(tool_name, pattern):
                return candidate
        return ToolRule()


def merged_permissions(
    pi_settings: Mapping[str, Any], client_options: Mapping[str, Any]
) -> dict[str, Any]:
    """pi's ``permissions`` with the editor's keys winning, key by key."""
    merged: dict[str, Any] = {}
    for source in (pi_settings.get("permissions"), client_options.get("permissions")):
        if isinstance(source, Mapping):
            merged.update({key: value for key, value in source.items() if value is not None})
    return merged


def parse_permissions(raw: Any) -> tuple[PermissionSettings, list[str]]:
    """The typed setting and what was wrong with ``raw`` (each wrong part falls back alone)."""
    if raw is None:
        return PermissionSettings(), []
    if not isinstance(raw, Mapping):
        return PermissionSettings(), ["setting permissions must be an object; using the defaults"]
    problems: list[str] = []
    rules: dict[str, ToolRule] = {}
    timeout = DEFAULT_TIMEOUT_SECONDS
    for key, value in raw.items():
        if key == TIMEOUT_KEY:
            if _is_positive_number(value):
                timeout = float(value)
            else:
                problems.append(
                    f"setting permissions.{TIMEOUT_KEY} must be a number above 0; "
                    f"using {DEFAULT_TIMEOUT_SECONDS:g}"
                )
            continue
        rule = _rule(value)
        if rule is None:
            problems.append(
                f'setting permissions.{key} must be "allow", "ask" or '
                '{"ask": true|false, "allow": ["pattern", …]}; using the default'
            )
            continue
        rules[str(key)] = rule
    return PermissionSettings(rules, timeout), problems


def _rule(value: Any) -> ToolRule | None:
    if value in ("allow", "ask"):
        return ToolRule(ask=value == "ask")
    if not isinstance(value, Mapping) or not set(value) <= {"ask", "allow"}:
        return None
    ask = value.get("ask")
    allow = value.get("allow", [])
    if ask is not None and not isinstance(ask, bool):
        return None
    if not isinstance(allow, list) or not all(
        isinstance(pattern, str) and pattern.strip() for pattern in allow
    ):
        return None
    return ToolRule(ask=ask, allow=tuple(pattern.strip() for pattern in allow))


def _is_positive_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
