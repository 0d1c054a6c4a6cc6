"""Path arguments the way pi reads them: ``~`` expansion,
``@`` prefix, ``file://`` URLs, cwd-relative."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote, urlparse

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_NARROW_NO_BREAK_SPACE = "\u202f"


def expand_path(raw: str) -> str:
    """Normalize a path argument: odd Unicode spaces, a leading ``@``, ``~``, ``file://`` URLs."""
    text = _UNICODE_SPACES.sub(" ", raw)
    text = text.removeprefix("@")
    if text == "~":
        return os.path.expanduser("~")
    if text.startswith("~/"):
        return os.path.join(os.path.expanduser("~"), text[2:])
    if text.startswith("file://"):
        return unquote(urlparse(text).path)
    return text


def resolve_to_cwd(raw: str, cwd: Path) -> Path:
    """The absolute, normalized path a tool argument names (not following symlinks)."""
    expanded = expand_path(raw)
    joined = expanded if os.path.isabs(expanded) else os.path.join(os.fspath(cwd), expanded)
    return Path(os.path.normpath(joined))


def resolve_read_path(raw: str, cwd: Path) -> Path:
    """Like :func:`resolve_to_cwd`, also trying the spellings macOS uses in screenshot names."""
    resolved = resolve_to_cwd(raw, cwd)
    if resolved.exists():
        return resolved
    text = str(resolved)
    am_pm = re.sub(
        r" (AM|PM)\.", lambda m: f"{_NARROW_NO_BREAK_SPACE}{m.group(1)}.", text, flags=re.IGNORECASE
    )
    nfd = unicodedata.normalize("NFD", text)
    for candidate in (am_pm, nfd, text.replace("'", "\u2019"), nfd.replace("'", "\u2019")):
        if candidate != text and os.path.exists(candidate):
            return Path(candidate)
    return resolved
