"""Where a workspace's sessions and its index live on disk.

pi keeps the sessions of a working directory in ``<agentDir>/sessions/--<cwd>--/`` (its
``getDefaultSessionDirPath``: the resolved cwd without its leading separator, every ``/``, ``\\``
and ``:`` turned into ``-``). The index is the user's state, not the project's: one database per
workspace in platformdirs' user state directory, named by a hash of the workspace path.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import platformdirs

INDEX_FOLDER = "session-index"


def pi_session_dir(workspace: Path, agent_dir: Path) -> Path:
    """pi 0.84.2's session directory for ``workspace`` (it need not exist)."""
    resolved = os.path.realpath(workspace)
    safe = re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", resolved))
    return Path(os.path.realpath(agent_dir)) / "sessions" / f"--{safe}--"


def index_path(workspace: Path) -> Path:
    """The index database of ``workspace`` in the user's state directory."""
    resolved = os.path.realpath(workspace)
    digest = hashlib.sha256(resolved.encode("utf-8", "surrogatepass")).hexdigest()[:20]
    state = Path(platformdirs.user_state_dir("pi-lsp", appauthor=False))
    return state / INDEX_FOLDER / f"{Path(resolved).name or 'root'}-{digest}.sqlite3"
