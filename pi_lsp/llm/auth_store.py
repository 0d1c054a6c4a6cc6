"""Writing an API key into pi's ``auth.json``, the only place pi-lsp writes that file.

Only Neovim's ``:PiLogin``/``:PiLogout`` (``pi/login``, ``pi/logout``) come here; VS Code keeps
keys in its own secret storage. The file is written the way pi 0.84.2's ``AuthStorage`` writes
it, so pi sees the key too: ``JSON.stringify(data, null, 2)``, mode 0600 in a directory created
0700, every other entry kept as it was, under pi's lock (``proper-lockfile``: the directory
``auth.json.lock``, taken over when older than pi's 10 s stale limit). The new content goes to a
temporary file first and replaces the old one in one step, so a crash never leaves half a file.

A subscription login pi made (an OAuth entry) is not replaced unless asked for: pi would lose it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pi_lsp.errors import InvalidParamsError, PiError

LOCK_STALE_SECONDS = 10.0
LOCK_WAIT_SECONDS = 2.0
_FILE_MODE = 0o600
_DIRECTORY_MODE = 0o700


class AuthFileError(PiError):
    """auth.json could not be read or written; it is left as it was."""


def save_api_key(path: Path, provider: str, key: str, *, replace_subscription: bool) -> None:
    """Store ``key`` as ``provider``'s ``api_key`` entry of ``auth.json`` at ``path``."""
    provider, key = provider.strip(), key.strip()
    if not provider:
        raise InvalidParamsError("pi/login: provider must not be empty")
    if not key or any(char in key for char in "\r\n"):
        raise InvalidParamsError("pi/login: the key must be one non-empty line")
    with locked_like_pi(path):
        data = read_json_object(path)
        current = data.get(provider)
        if (
            isinstance(current, dict)
            and current.get("type") == "oauth"
            and not replace_subscription
        ):
            raise AuthFileError(
                f"auth.json holds pi's subscription login for {provider}; storing a key would "
                f"replace it (pi would lose it). Log out in pi first, or replace it on purpose "
                f"(:PiLogin! {provider})"
            )
        data[provider] = {"type": "api_key", "key": key}
        write_json_object(path, data)


def remove_api_key(path: Path, provider: str) -> bool:
    """Remove ``provider``'s ``api_key`` entry; False when it had none. OAuth entries stay."""
    if not path.exists():
        return False
    with locked_like_pi(path):
        data = read_json_object(path)
        current = data.get(provider)
        if current is None:
            return False
        if not (isinstance(current, dict) and current.get("type") == "api_key"):
            raise AuthFileError(
                f"auth.json's entry for {provider} is pi's subscription login, not an API key; "
                "log out in pi (/logout) to remove it"
            )
        del data[provider]
        write_json_object(path, data)
        return True


def read_json_object(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as problem:
        raise AuthFileError(f"cannot read {path}: {problem.strerror}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as problem:
        # Overwriting a file we cannot read would lose what is in it.
        raise AuthFileError(
            f"{path} is not valid JSON (line {problem.lineno}); fix it first, it was left as it is"
        ) from None
    if not isinstance(data, dict):
        raise AuthFileError(f"{path} is not a JSON object; fix it first, it was left as it is")
    return data


def write_json_object(path: Path, data: dict[str, Any], *, trailing_newline: bool = False) -> None:
    """``data`` as ``JSON.stringify(data, null, 2)`` (and a newline where pi writes one), mode
    0600, replacing ``path`` in one step."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + ("\n" if trailing_newline else "")
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(descriptor, _FILE_MODE)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
        os.chmod(path, _FILE_MODE)
    except OSError as problem:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise AuthFileError(f"cannot write {path}: {problem.strerror}") from None


@contextlib.contextmanager
def locked_like_pi(
    path: Path, stale: float = LOCK_STALE_SECONDS, wait: float = LOCK_WAIT_SECONDS
) -> Iterator[None]:
    """pi's lock on ``path``: ``proper-lockfile`` makes the directory ``<path>.lock``, and takes
    over one older than ``stale`` seconds (its holder died); gives up after ``wait`` seconds."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=_DIRECTORY_MODE)
    except OSError as problem:
        raise AuthFileError(f"cannot create {path.parent}: {problem.strerror}") from None
    lock = path.with_name(path.name + ".lock")
    deadline = time.monotonic() + wait
    while True:
        try:
            lock.mkdir()
            break
        except FileExistsError:
            if _is_stale(lock, stale):
                with contextlib.suppress(OSError):
                    lock.rmdir()
                continue
            if time.monotonic() > deadline:
                raise AuthFileError(
                    f"{path} is locked by another process (pi?); try again"
                ) from None
            time.sleep(0.02)
        except OSError as problem:
            raise AuthFileError(f"cannot lock {path}: {problem.strerror}") from None
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            lock.rmdir()


def _is_stale(lock: Path, stale: float) -> bool:
    try:
        return time.time() - lock.stat().st_mtime > stale
    except OSError:
        return False
