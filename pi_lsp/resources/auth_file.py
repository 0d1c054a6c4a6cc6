"""pi's ``<agentDir>/auth.json``: the credentials pi stores per provider, read and checked.

An entry is ``{"type": "api_key", "key": …, "env": {…}}`` (the key as written: a literal,
``$VAR``/``${VAR}`` or ``!command``, resolved by ``llm/`` only when a request needs it, with the
entry's ``env`` before the process environment) or ``{"type": "oauth", …}``, a subscription login
made by pi's ``/login``. pi-lsp cannot use subscription logins: each one is reported on its line,
naming the provider and what to use instead, before any prompt fails on it. The file is never
written here (see ``llm/auth_store.py``); a broken file keeps the last good content.

The keys are secrets: they are kept out of every ``repr`` and never put in a diagnostic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from pi_lsp.resources.diagnostics import ResourceDiagnostic, error, warning

AUTH_FILE = "auth.json"

CredentialKind = Literal["api_key", "oauth"]


@attrs.frozen
class StoredCredential:
    provider: str
    kind: CredentialKind
    line: int = 1
    key: str | None = attrs.field(default=None, repr=False)
    env: Mapping[str, str] = attrs.field(factory=dict, repr=False)


@attrs.frozen
class AuthFile:
    path: str
    credentials: tuple[StoredCredential, ...] = ()

    def credential(self, provider: str) -> StoredCredential | None:
        return next((entry for entry in self.credentials if entry.provider == provider), None)


def oauth_message(provider: str) -> str:
    """What to tell a user whose only credential for ``provider`` is pi's subscription login."""
    return (
        f"auth.json holds pi's subscription login (OAuth) for {provider}, which pi-lsp cannot "
        f"use: give {provider} an API key instead (its environment variable, "
        f'"Pi: Set API Key…" in VS Code, or :PiLogin {provider} in Neovim)'
    )


def load_auth_file(
    path: Path, previous: AuthFile | None, diagnostics: list[ResourceDiagnostic]
) -> AuthFile:
    """``auth.json`` at ``path`` (no file: no credentials); a broken file keeps ``previous``."""
    kept = previous if previous is not None and previous.path == str(path) else AuthFile(str(path))
    if not path.exists():
        return AuthFile(str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as problem:
        diagnostics.append(error(str(path), 1, f"cannot read auth.json: {problem.strerror}"))
        return kept
    except UnicodeDecodeError:
        diagnostics.append(error(str(path), 1, "cannot read auth.json: it is not UTF-8"))
        return kept
    if not text.strip():
        return AuthFile(str(path))
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as problem:
        # The message names the position only: the text around it may be a key.
        message = f"invalid JSON at line {problem.lineno}; keeping the last good credentials"
        diagnostics.append(error(str(path), problem.lineno, message))
        return kept
    if not isinstance(parsed, dict):
        diagnostics.append(error(str(path), 1, "auth.json must be a JSON object"))
        return kept
    credentials = []
    for provider, entry in parsed.items():
        credential = _credential(str(path), text, provider, entry, diagnostics)
        if credential is not None:
            credentials.append(credential)
    return AuthFile(str(path), tuple(credentials))


def _credential(
    path: str, text: str, provider: str, entry: Any, diagnostics: list[ResourceDiagnostic]
) -> StoredCredential | None:
    line = _key_line(text, provider)
    kind = entry.get("type") if isinstance(entry, dict) else None
    if kind == "oauth":
        diagnostics.append(warning(path, line, oauth_message(provider)))
        return StoredCredential(provider, "oauth", line)
    if kind != "api_key":
        diagnostics.append(
            warning(
                path, line, f'{provider}: an entry of type "api_key" or "oauth" expected; ignored'
            )
        )
        return None
    assert isinstance(entry, dict)
    key, env = entry.get("key"), entry.get("env", {})
    if key is not None and not isinstance(key, str):
        diagnostics.append(warning(path, line, f"{provider}: key must be a string; ignored"))
        return None
    if not isinstance(env, dict) or not all(isinstance(value, str) for value in env.values()):
        diagnostics.append(
            warning(path, line, f"{provider}: env must be an object of strings; ignored")
        )
        return None
    return StoredCredential(provider, "api_key", line, key or None, env)


def _key_line(text: str, key: str) -> int:
    match = re.search(re.escape(json.dumps(key)) + r"\s*:", text)
    return text.count("\n", 0, match.start()) + 1 if match else 1
