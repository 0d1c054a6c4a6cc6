"""pi's configuration values (``apiKey``, ``headers`` of models.json, ``key`` of auth.json),
resolved as pi 0.84.2's ``resolve-config-value.ts`` resolves them.

``$VAR`` and ``${VAR}`` are environment variables (an ``auth.json`` entry's own ``env`` first;
interpolation works inside longer text; a missing or empty variable leaves the value
unresolved), ``$$`` is a literal ``$`` and ``$!`` a literal ``!``, and a value starting with ``!``
is a command whose trimmed standard output is the value. Unlike pi, the command runs without a
shell (its words split as a POSIX shell would split them), with a 10 s timeout; its output is
cached for the server's life (a failure is not, so fixing the command is enough).
"""

from __future__ import annotations

import logging
import re
import shlex
import subprocess
import threading
from collections.abc import Mapping

from pi_lsp.llm.secrets import remember_secrets

logger = logging.getLogger(__name__)

COMMAND_TIMEOUT_SECONDS = 10.0
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class CommandOutputs:
    """The output of each ``!command`` value, cached for the server's life (successes only)."""

    def __init__(self, timeout: float = COMMAND_TIMEOUT_SECONDS) -> None:
        self.timeout = timeout
        self._outputs: dict[str, str] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self.runs = 0
        """How many commands actually ran (for tests)."""

    def output(self, command: str, environ: Mapping[str, str]) -> str | None:
        with self._lock:
            lock = self._locks.setdefault(command, threading.Lock())
        with lock:  # two requests at once run the command once
            if command in self._outputs:
                return self._outputs[command]
            output = self._run(command, environ)
            if output is not None:
                self._outputs[command] = output
            return output

    def _run(self, command: str, environ: Mapping[str, str]) -> str | None:
        try:
            argv = shlex.split(command)
        except ValueError as problem:
            logger.warning("cannot split the key command %r: %s", command, problem)
            return None
        if not argv:
            return None
        self.runs += 1
        try:
            completed = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                env=dict(environ),
                check=False,
            )
        except subprocess.TimeoutExpired:
            logger.warning("the key command %r took longer than %.0f s", argv[0], self.timeout)
            return None
        except OSError as problem:
            logger.warning("the key command %r could not run: %s", argv[0], problem.strerror)
            return None
        if completed.returncode != 0:
            logger.warning("the key command %r exited with %d", argv[0], completed.returncode)
            return None
        return completed.stdout.strip() or None


def is_command(value: str) -> bool:
    return value.startswith("!")


def template_variables(value: str) -> list[str]:
    """The environment variables a (non-command) value refers to, in order, once each."""
    if is_command(value):
        return []
    return list(dict.fromkeys(part for kind, part in _template(value) if kind == "env"))


def unset_variables(value: str, env: Mapping[str, str], environ: Mapping[str, str]) -> list[str]:
    """The variables ``value`` reads that are missing or empty."""
    return [name for name in template_variables(value) if _variable(name, env, environ) is None]


def is_configured(value: str, env: Mapping[str, str], environ: Mapping[str, str]) -> bool:
    """pi's availability check: a command counts without running it; variables must be set."""
    return not unset_variables(value, env, environ)


def resolve_value(
    value: str,
    env: Mapping[str, str],
    environ: Mapping[str, str],
    commands: CommandOutputs,
) -> str | None:
    """pi's ``resolveConfigValue`` (see the module docstring); None when it does not resolve."""
    if is_command(value):
        resolved = commands.output(value[1:], {**environ, **env})
    else:
        parts = []
        for kind, part in _template(value):
            text = part if kind == "literal" else _variable(part, env, environ)
            if text is None:
                return None
            parts.append(text)
        resolved = "".join(parts)
    if resolved:
        remember_secrets([resolved])
    return resolved


def _variable(name: str, env: Mapping[str, str], environ: Mapping[str, str]) -> str | None:
    return env.get(name) or environ.get(name) or None


def _template(value: str) -> list[tuple[str, str]]:
    """pi's ``parseConfigValueTemplate``: ("literal", text) and ("env", name) parts."""
    parts: list[tuple[str, str]] = []

    def literal(text: str) -> None:
        if not text:
            return
        if parts and parts[-1][0] == "literal":
            parts[-1] = ("literal", parts[-1][1] + text)
        else:
            parts.append(("literal", text))

    index = 0
    while index < len(value):
        dollar = value.find("$", index)
        if dollar < 0:
            literal(value[index:])
            break
        literal(value[index:dollar])
        following = value[dollar + 1 : dollar + 2]
        if following in ("$", "!"):
            literal(following)
            index = dollar + 2
        elif following == "{":
            end = value.find("}", dollar + 2)
            if end < 0:
                literal("$")
                index = dollar + 1
                continue
            name = value[dollar + 2 : end]
            if _VARIABLE_NAME.fullmatch(name):
                parts.append(("env", name))
            else:
                literal(value[dollar : end + 1])
            index = end + 1
        else:
            match = _VARIABLE_NAME.match(value, dollar + 1)
            if match:
                parts.append(("env", match[0]))
                index = match.end()
            else:
                literal("$")
                index = dollar + 1
    return parts


COMMANDS = CommandOutputs()
"""The server's one cache of ``!command`` outputs."""
