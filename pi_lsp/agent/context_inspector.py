"""What the next model request of a session carries, part by part, with token counts: the context
inspector behind ``pi/context`` (and the figure ``pi/state``'s meter shows).

The messages come from the context pipeline that builds requests (``chosen_context``), the system
prompt from the sections ``build_system_prompt`` joins, and the tool declarations from the tools a
turn gets: nothing is computed a second way. Each part is estimated with the session's token
counter, the one compaction and the meter use. Where the last answer reported its usage (and no
context edit came after it), the total is pi's: that usage plus estimates of the messages after
it, and a ``usageDifference`` part holds what the provider counted beyond the estimates of the
parts it covered (negative when it counted less), so the parts add up to the total. Otherwise
every part is estimated and the total is their sum. A message a context edit left out is listed
with no tokens, so it can be restored from the list.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from pi_lsp.agent.context_pipeline import chosen_context
from pi_lsp.agent.live_config import LiveConfig
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.agent.system_prompt import system_prompt_sections
from pi_lsp.compaction.policy import compaction_start
from pi_lsp.compaction.tokens import (
    TokenCounter,
    calculate_context_tokens,
    context_usage_index,
    get_assistant_usage,
)
from pi_lsp.protocol import ContextEditEffect, ContextPart
from pi_lsp.protocol import ContextPartKind as PartKind
from pi_lsp.session.path_index import active_path_index
from pi_lsp.session.projection import effect_name
from pi_lsp.session.tree_view import preview
from pi_lsp.tools.base import Tool

NESTED_CONTEXT_TYPE = "pi-lsp.context-file"


@attrs.frozen
class ContextBreakdown:
    parts: list[ContextPart]
    total: int
    basis: Literal["usage", "estimate"]
    """``usage``: the last answer's reported usage plus estimates; ``estimate``: all estimated."""
    context_window: int
    compact_at: int | None
    """Where automatic compaction starts; None when it is turned off."""


async def inspect_context(
    live: LiveConfig, runtime: SessionRuntime, tools: Sequence[Tool], context_window: int
) -> ContextBreakdown:
    """The parts of the next request of ``runtime``'s session (whose model has
    ``context_window``)."""
    counter = live.token_counter()
    chosen = await chosen_context(runtime, live.resources.extensions, inspecting=True)
    prefix = request_prefix_parts(live, runtime, tools, counter)
    messages = chosen.messages
    usage_index = context_usage_index(runtime.session.branch(), messages)
    message_parts = _message_parts(runtime, messages, chosen.entry_ids, counter)
    parts = [*prefix, *message_parts]
    basis: Literal["usage", "estimate"] = "estimate"
    if usage_index is not None:
        usage = get_assistant_usage(messages[usage_index])
        assert usage is not None
        covered = len(prefix) + usage_index + 1  # the parts the reported usage counted
        reported = int(calculate_context_tokens(usage))
        difference = reported - sum(part.tokens for part in parts[:covered])
        parts.insert(
            covered,
            ContextPart("usageDifference", "Provider's count beyond the estimates", difference),
        )
        basis = "usage"
    parts.extend(_removed_parts(runtime))
    return _breakdown(live, runtime, context_window, parts, basis)


def request_prefix_parts(
    live: LiveConfig, runtime: SessionRuntime, tools: Sequence[Tool], counter: TokenCounter
) -> list[ContextPart]:
    """The system prompt's sections, the last turn's extension additions and the tool
    declarations, estimated."""
    specs = [tool.spec() for tool in tools]
    sections = system_prompt_sections(live.config.workspace_root, specs, live.resources.snapshot)
    root = live.config.workspace_root
    parts = [
        ContextPart(
            section.kind,
            _shown_path(section.label, root) if section.path else section.label,
            _text_tokens(counter, section.text),
            path=section.path,
        )
        for section in sections
    ]
    added = runtime.extension_prompt_addition
    if added:
        parts.append(
            ContextPart(
                "extension", "Extensions' additions (last turn)", _text_tokens(counter, added)
            )
        )
    if specs:
        declared = json.dumps(specs, ensure_ascii=False)
        parts.append(
            ContextPart(
                "tools", f"Tool declarations ({len(specs)})", _text_tokens(counter, declared)
            )
        )
    return parts


def meter_tokens(
    live: LiveConfig, runtime: SessionRuntime, tools: Sequence[Tool], messages_tokens: int
) -> int:
    """``pi/state``'s figure from pi's message estimate: the request prefix is added when every
    message is estimated (a reported usage already counts it), as the inspector's total does."""
    session = runtime.session
    messages = session.build_context().messages
    if context_usage_index(session.branch(), messages) is not None:
        return messages_tokens
    counter = live.token_counter()
    return messages_tokens + sum(
        part.tokens for part in request_prefix_parts(live, runtime, tools, counter)
    )


def _message_parts(
    runtime: SessionRuntime,
    messages: Sequence[Mapping[str, Any]],
    entry_ids: Sequence[str | None],
    counter: TokenCounter,
) -> list[ContextPart]:
    """A part per message. A message the previous request of this session listed (the same
    object: the session keeps its context between requests) reuses its part, so an editor
    refreshing its view pays for the new messages only."""
    session = runtime.session
    effects = _effects(runtime)
    previous = _PART_CACHES.get(runtime)
    known = previous.parts if previous is not None and previous.counter == counter.name else {}
    cache = _PartCache(counter.name)
    parts = []
    for message, entry_id in zip(messages, entry_ids, strict=True):
        effect = effects.get(entry_id) if entry_id is not None else None
        hit = known.get(id(message))
        if hit is not None and hit[0] is message and hit[1] == (entry_id, effect):
            part = hit[2]
        else:
            part = _message_part(
                session.get_entry(entry_id) if entry_id else None,
                message,
                entry_id,
                effect,
                counter,
            )
        cache.parts[id(message)] = (message, (entry_id, effect), part)
        parts.append(part)
    _PART_CACHES[runtime] = cache
    return parts


@attrs.define
class _PartCache:
    counter: str
    parts: dict[int, tuple[Mapping[str, Any], tuple[Any, Any], ContextPart]] = attrs.Factory(dict)
    """By the message's ``id()``: the message itself (held, so the id stays its own), what else
    the part depends on, and the part."""


_PART_CACHES: weakref.WeakKeyDictionary[SessionRuntime, _PartCache] = weakref.WeakKeyDictionary()


def _message_part(
    entry: Mapping[str, Any] | None,
    message: Mapping[str, Any],
    entry_id: str | None,
    effect: ContextEditEffect | None,
    counter: TokenCounter,
) -> ContextPart:
    kind, label, path = _kind_of(message, entry_id is None)
    return ContextPart(
        kind,
        label,
        counter.estimate_message_tokens(message),
        entry_id=entry_id,
        role=str(message.get("role")),
        preview=preview(_as_entry(message, entry)),
        path=path,
        context_edit=effect,
    )


def _kind_of(message: Mapping[str, Any], added: bool) -> tuple[PartKind, str, str | None]:
    role = message.get("role")
    if role == "compactionSummary":
        return "compactionSummary", "Compaction summary", None
    if role == "branchSummary":
        return "branchSummary", "Branch summary", None
    if role == "custom" and message.get("customType") == NESTED_CONTEXT_TYPE:
        details = message.get("details")
        path = details.get("path") if isinstance(details, Mapping) else None
        return "nestedContextFile", str(path or "Context file"), path
    if added:
        return "extension", "Added by an extension", None
    return "message", str(role), None


def _as_entry(message: Mapping[str, Any], entry: Mapping[str, Any] | None) -> dict[str, Any]:
    """An entry whose preview is the message as the model gets it (after a replacement)."""
    role = message.get("role")
    if role in ("compactionSummary", "branchSummary"):
        return {"type": "compaction", "summary": message.get("summary")}
    if entry is not None and entry.get("type") == "custom_message":
        return {"type": "custom_message", "content": message.get("content")}
    return {"type": "message", "message": message}


def _effects(runtime: SessionRuntime) -> dict[Any, ContextEditEffect]:
    """What context edits did on the active path, by entry id (kept by the path's index)."""
    if not runtime.session.has_context_edits:
        return {}
    changed = active_path_index(runtime.session).effects
    return {entry_id: effect_name(projected) for entry_id, projected in changed.items()}


def _removed_parts(runtime: SessionRuntime) -> list[ContextPart]:
    if not runtime.session.has_context_edits:
        return []
    parts = []
    for projected in active_path_index(runtime.session).effects.values():
        if projected.removed:
            entry = projected.entry
            message = entry.get("message")
            role = str(message.get("role")) if isinstance(message, Mapping) else "custom"
            parts.append(
                ContextPart(
                    "message",
                    role,
                    0,
                    entry_id=str(entry.get("id")),
                    role=role,
                    preview=preview(entry),
                    context_edit="removed",
                )
            )
    return parts


def _shown_path(path: str, root: Path) -> str:
    """A context file's path as the list shows it: relative to the workspace when inside it."""
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return path


def _text_tokens(counter: TokenCounter, text: str) -> int:
    return counter.estimate_message_tokens({"role": "user", "content": text})


def _breakdown(
    live: LiveConfig,
    runtime: SessionRuntime,
    window: int,
    parts: list[ContextPart],
    basis: Literal["usage", "estimate"],
) -> ContextBreakdown:
    settings = live.compaction_settings(runtime)
    compact_at = int(compaction_start(window, settings)) if settings.enabled else None
    return ContextBreakdown(parts, sum(part.tokens for part in parts), basis, window, compact_at)
