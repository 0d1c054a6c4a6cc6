"""The one shape every resource loader reports problems in.

A diagnostic names the file and the 1-based line where the problem can be found, so the server
can publish it on that file; loaders return these instead of raising.
"""

from __future__ import annotations

from pi_lsp.protocol import ResourceDiagnostic, Severity

__all__ = ["ResourceDiagnostic", "Severity", "error", "warning"]


def error(path: str, line: int, message: str) -> ResourceDiagnostic:
    return ResourceDiagnostic(path, max(line, 1), message, "error")


def warning(path: str, line: int, message: str) -> ResourceDiagnostic:
    return ResourceDiagnostic(path, max(line, 1), message, "warning")
