"""The demo's one error: which step failed and why, printed as the command's last line."""

from __future__ import annotations

from pi_lsp.errors import PiError


class DemoError(PiError):
    """The demo could not run its story; the message says which step failed and why."""
