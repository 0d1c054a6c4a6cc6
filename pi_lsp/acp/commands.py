"""Slash commands typed into an ACP client's prompt: the tree, navigation, compaction and the rest.

ACP has no requests for pi's session tree, so the tree is driven by commands in the prompt text,
which every ACP client can send: ``/tree [<id>]`` shows a window of the tree (around the leaf or
an entry, ``tree_text.py``) with entry ids, ``/navigate <id>`` moves the leaf there
(``--summarize`` leaves a branch summary, ``--files`` puts the agent's file changes back).
Each command calls the same service as its ``pi/*`` request; the answer is text shown as the
agent's message. Anything else (``/skill:name``, prompt templates, plain text) is a prompt for
the agent, which expands skills and templates itself.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Awaitable, Callable

import attrs
from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from pi_lsp.acp.tree_text import tree_text
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.errors import InvalidParamsError, McpSignInError, echoed
from pi_lsp.llm.providers import can_send
from pi_lsp.mcp.status_text import status_text
from pi_lsp.protocol import THINKING_LEVELS
from pi_lsp.services import Services
from pi_lsp.session.fork import conversation_leaf


@attrs.frozen
class CommandOutcome:
    """What a command says back, and the session the client is in afterwards (``/new``,
    ``/fork``)."""

    text: str
    runtime: SessionRuntime | None = None
    title: str | None = None
    """The session's new title (``/name``), for a ``session_info_update``."""


Handler = Callable[[Services, SessionRuntime, list[str]], Awaitable[CommandOutcome]]

COMMANDS: dict[str, tuple[str, str | None]] = {
    "compact": ("Compact the context now into a summary", "[instructions]"),
    "tree": ("Show the session tree around the leaf or an entry, with entry ids", "[id]"),
    "navigate": ("Move to an entry of the tree", "<id> [--summarize] [--files]"),
    "fork": ("Start a new session from an entry (default: the leaf)", "[id]"),
    "name": ("Name this session", "<name>"),
    "label": ("Label an entry of the tree (no text: clear it)", "<id> [text]"),
    "model": ("Use another model in this session", "<model>"),
    "thinking": ("Set the thinking level", "|".join(THINKING_LEVELS)),
    "new": ("Start a new session", None),
    "mcp": (
        "MCP servers: status, or reconnect, enable, disable, sign in to or out of one",
        "[reconnect|enable|disable|login|logout <server>] or login <server> <redirected URL>",
    ),
}
"""pi-lsp's own commands: description and input hint."""

CONFIG_COMMANDS = frozenset({"model", "thinking", "new", "fork"})
"""Commands after which the session's config options (model, thinking level) may differ."""


def available_commands(services: Services) -> list[AvailableCommand]:
    """Every command a client may offer: pi-lsp's own, then each skill and prompt template."""
    commands = [
        AvailableCommand(
            name=name,
            description=description,
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None,
        )
        for name, (description, hint) in COMMANDS.items()
    ]
    snapshot = services.resources.snapshot
    for skill in snapshot.skills:
        commands.append(
            AvailableCommand(name=f"skill:{skill.name}", description=skill.description or "skill")
        )
    for template in snapshot.templates:
        commands.append(
            AvailableCommand(name=template.name, description=template.description or "template")
        )
    return commands


def parse(text: str) -> tuple[str, list[str]] | None:
    """``(command, arguments)`` when ``text`` is one of pi-lsp's own commands, else None."""
    if not text.startswith("/"):
        return None
    name, _, rest = text[1:].partition(" ")
    if name not in COMMANDS:
        return None
    if name == "compact":
        return name, [rest.strip()] if rest.strip() else []
    try:
        return name, shlex.split(rest)
    except ValueError as error:
        raise InvalidParamsError(f"/{name}: {error}") from error


async def run(
    services: Services, runtime: SessionRuntime, name: str, arguments: list[str]
) -> CommandOutcome:
    return await HANDLERS[name](services, runtime, arguments)


async def _compact(services: Services, runtime: SessionRuntime, arguments: list[str]):
    result = await services.agent.compact(runtime, arguments[0] if arguments else None)
    # The summary itself reached the client as the compaction's card (``compaction_end``).
    return CommandOutcome(
        f"Compacted {result.tokens_before:,} tokens into a summary (entry {result.entry_id})."
    )


async def _tree(services: Services, runtime: SessionRuntime, arguments: list[str]):
    if len(arguments) > 1:
        raise InvalidParamsError("usage: /tree [<id>]")
    text = tree_text(runtime.session, arguments[0] if arguments else None)
    return CommandOutcome(
        f"```\n{text}\n```\n\n`/tree <id>` shows the tree around an entry and what is under "
        "it; `/navigate <id>` moves there (`--summarize` keeps a summary of the branch you leave)."
    )


async def _navigate(services: Services, runtime: SessionRuntime, arguments: list[str]):
    flags = {argument for argument in arguments if argument.startswith("--")}
    unknown = flags - {"--summarize", "--files"}
    targets = [argument for argument in arguments if not argument.startswith("--")]
    if unknown or len(targets) != 1:
        raise InvalidParamsError("usage: /navigate <id> [--summarize] [--files]")
    result = await services.navigator.navigate(
        runtime,
        targets[0],
        summarize="--summarize" in flags,
        restore_files="--files" in flags,
    )
    lines = [f"Moved to {targets[0]}."]
    if result.summary_entry_id:
        lines.append(f"The branch you left is summarized in entry {result.summary_entry_id}.")
    if result.editor_text:
        lines.append(f"The message there was:\n\n> {result.editor_text}")
    for outcome in result.files or ():
        lines.append(
            f"- {outcome.path}: {outcome.action}"
            + (f" ({outcome.reason})" if outcome.reason else "")
        )
    return CommandOutcome("\n".join(lines))


async def _fork(services: Services, runtime: SessionRuntime, arguments: list[str]):
    entry_id = arguments[0] if arguments else conversation_leaf(runtime.session)
    if entry_id is None:
        raise InvalidParamsError("/fork: the session is empty")
    forked = (await services.navigator.fork(runtime, entry_id)).runtime
    return CommandOutcome(f"Forked into session {forked.id} from entry {entry_id}.", forked)


async def _name(services: Services, runtime: SessionRuntime, arguments: list[str]):
    if not arguments:
        raise InvalidParamsError("usage: /name <name>")
    name = " ".join(arguments)
    services.navigator.set_name(runtime, name)
    return CommandOutcome(f"Session named {name!r}.", title=runtime.session.name)


async def _label(services: Services, runtime: SessionRuntime, arguments: list[str]):
    if not arguments:
        raise InvalidParamsError("usage: /label <id> [text]")
    label = " ".join(arguments[1:]) or None
    entry_id = services.navigator.set_label(runtime, arguments[0], label)
    return CommandOutcome(f"Label of {entry_id} {'set' if label else 'cleared'}.")


async def _model(services: Services, runtime: SessionRuntime, arguments: list[str]):
    if len(arguments) != 1:
        raise InvalidParamsError("usage: /model <model>")
    candidate = services.live.model_named(arguments[0])
    # Checked before the switch: a model_change entry, once written, stays in the session.
    if candidate is not None and candidate.source == "editor" and not can_send(candidate):
        raise InvalidParamsError(services.live.catalog().missing_key_message(candidate))
    if candidate is not None and not await asyncio.to_thread(can_send, candidate):
        raise InvalidParamsError(
            f"unknown model '{echoed(arguments[0])}': its provider is not one pi-lsp sends to, "
            "not in models.json and not one litellm knows (provider/model, e.g. "
            "anthropic/claude-sonnet-4-5)"
        )
    chosen = services.agent.set_model(runtime, arguments[0])
    return CommandOutcome(f"Model: {chosen.provider}/{chosen.model_id}.")


async def _thinking(services: Services, runtime: SessionRuntime, arguments: list[str]):
    if len(arguments) != 1 or arguments[0] not in THINKING_LEVELS:
        raise InvalidParamsError(f"usage: /thinking {'|'.join(THINKING_LEVELS)}")
    services.agent.set_thinking_level(runtime, arguments[0])
    return CommandOutcome(f"Thinking level: {arguments[0]}.")


async def _new(services: Services, runtime: SessionRuntime, arguments: list[str]):
    created = services.sessions.create()
    return CommandOutcome(f"New session {created.id}.", created)


async def _mcp(services: Services, runtime: SessionRuntime, arguments: list[str]):
    actions = ("reconnect", "enable", "disable", "login", "logout")
    if not arguments:
        return CommandOutcome(status_text(services.mcp.statuses()))
    if len(arguments) == 3 and arguments[0] == "login":
        return CommandOutcome(await _mcp_pasted_redirect(services, *arguments[1:]))
    if len(arguments) != 2 or arguments[0] not in actions:
        raise InvalidParamsError(
            f"usage: /mcp [{'|'.join(actions)} <server>] or /mcp login <server> <redirected URL>"
        )
    action, name = arguments
    try:
        return CommandOutcome(await _mcp_action(services, action, name))
    except KeyError as unknown:
        raise InvalidParamsError(str(unknown.args[0])) from None


async def _mcp_pasted_redirect(services: Services, name: str, redirected_url: str) -> str:
    """Finish the sign-in to ``name`` that ``/mcp login <name>`` started with the URL the browser
    was redirected to (pi's fallback when it cannot reach this machine's loopback port)."""
    from pi_lsp.mcp.connection import McpCallError

    try:
        services.mcp.paste_redirect(name, redirected_url)
    except KeyError as unknown:
        raise InvalidParamsError(str(unknown.args[0])) from None
    except McpCallError as wrong:
        raise InvalidParamsError(str(wrong)) from None
    try:
        status = await services.mcp.signed_in(name)
    except McpCallError as failure:
        raise McpSignInError(str(failure)) from None
    return f"Signed in to MCP server {name}: {status['state']}, {status['toolCount']} tools."


async def _mcp_action(services: Services, action: str, name: str) -> str:
    """Do ``action`` to the server ``name``; what to tell the user."""
    from pi_lsp.mcp.connection import McpCallError

    if action == "login":
        try:
            status = await services.mcp.sign_in(name)
        except McpCallError as failure:
            raise McpSignInError(str(failure)) from None
        return f"Signed in to MCP server {name}: {status['state']}, {status['toolCount']} tools."
    if action == "logout":
        try:
            removed, _ = services.mcp.sign_out(name)
        except McpCallError as failure:
            raise InvalidParamsError(str(failure)) from None
        return f"Signed out of MCP server {name}." if removed else f"MCP server {name}: no sign-in."
    if action == "reconnect":
        services.mcp.reconnect(name)
    else:
        services.mcp.set_enabled(name, action == "enable")
    done = {"reconnect": "reconnecting", "enable": "enabled", "disable": "disabled"}[action]
    return f"MCP server {name}: {done}."


HANDLERS: dict[str, Handler] = {
    "mcp": _mcp,
    "compact": _compact,
    "tree": _tree,
    "navigate": _navigate,
    "fork": _fork,
    "name": _name,
    "label": _label,
    "model": _model,
    "thinking": _thinking,
    "new": _new,
}
