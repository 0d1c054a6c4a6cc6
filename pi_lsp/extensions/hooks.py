"""Running hooks: in load order, plain or ``async``, each failure logged and skipped.

A hook returns ``None`` (no change) or a dict in pi's camelCase shape. Changes chain: each hook
sees what the ones before it made of the system prompt, the messages or the tool result. For the
``before_*`` events a ``{"cancel": True}`` stops at once and the last valid supplied summary
wins. A result of the wrong shape is logged and ignored, so one broken extension never stops a
turn, a compaction or a navigation. The time spent in hooks is added up in ``HookTimings``.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from pi_lsp.extensions.events import (
    BeforeAgentStartEvent,
    BeforeCompactEvent,
    BeforeTreeEvent,
    ContextEvent,
    SessionStartEvent,
    ToolResultEvent,
)
from pi_lsp.extensions.loading import Extension
from pi_lsp.extensions.timings import HookTimings

logger = logging.getLogger(__name__)

_MISSING = object()


@attrs.frozen
class HookDecision:
    cancelled_by: str | None = None
    compaction: dict | None = None
    supplied_by: str | None = None


@attrs.frozen
class TreeDecision:
    cancelled_by: str | None = None
    summary: dict | None = None
    """``{"summary", "details"?}`` supplied by an extension."""
    supplied_by: str | None = None


@attrs.frozen
class ToolResultChange:
    content: list[dict[str, Any]]
    details: Any
    is_error: bool


async def call_hook(
    extension: Extension, hook_name: str, event: Any, timings: HookTimings | None = None
) -> Any:
    """The hook's result; ``_MISSING`` when it is absent or failed (logged)."""
    hook = extension.hook(hook_name)
    if hook is None:
        return _MISSING
    started = time.perf_counter()
    try:
        result = hook(event)
        if inspect.isawaitable(result):
            result = await result
    except Exception:
        logger.exception("extension %s failed in %s; ignoring it", extension.name, hook_name)
        return _MISSING
    finally:
        if timings is not None:
            timings.seconds[hook_name] += time.perf_counter() - started
            timings.calls[hook_name] += 1
    return result


async def run_session_start(
    extensions: Sequence[Extension], event: SessionStartEvent, timings: HookTimings | None = None
) -> None:
    for extension in extensions:
        await call_hook(extension, "session_start", event, timings)


async def run_before_agent_start(
    extensions: Sequence[Extension],
    event: BeforeAgentStartEvent,
    timings: HookTimings | None = None,
) -> str:
    """The system prompt for this turn."""
    for extension in extensions:
        result = await call_hook(extension, "before_agent_start", event, timings)
        if not isinstance(result, dict) or "systemPrompt" not in result:
            _warn_if_unusable(extension, "before_agent_start", result)
            continue
        prompt = result["systemPrompt"]
        if isinstance(prompt, str):
            event = attrs.evolve(event, system_prompt=prompt)
        else:
            logger.warning("extension %s: systemPrompt must be a string", extension.name)
    return event.system_prompt


async def run_context(
    extensions: Sequence[Extension], event: ContextEvent, timings: HookTimings | None = None
) -> list[dict[str, Any]]:
    """The messages for this model request."""
    for extension in extensions:
        result = await call_hook(extension, "context", event, timings)
        if not isinstance(result, dict) or "messages" not in result:
            _warn_if_unusable(extension, "context", result)
            continue
        messages = result["messages"]
        if isinstance(messages, list) and all(_is_message(message) for message in messages):
            event = attrs.evolve(event, messages=messages)
        else:
            logger.warning(
                "extension %s: context must return messages with a role each; ignoring them",
                extension.name,
            )
    return event.messages


async def run_tool_result(
    extensions: Sequence[Extension], event: ToolResultEvent, timings: HookTimings | None = None
) -> ToolResultChange:
    """The tool result to store and send: ``content``, ``details`` and ``isError`` patched."""
    for extension in extensions:
        result = await call_hook(extension, "tool_result", event, timings)
        if not isinstance(result, dict):
            _warn_if_unusable(extension, "tool_result", result)
            continue
        content = result.get("content", event.content)
        is_error = result.get("isError", event.is_error)
        if not (isinstance(content, list) and all(_is_block(block) for block in content)):
            logger.warning("extension %s: tool_result content must be blocks", extension.name)
            continue
        if not isinstance(is_error, bool):
            logger.warning("extension %s: tool_result isError must be a bool", extension.name)
            continue
        event = attrs.evolve(
            event, content=content, details=result.get("details", event.details), is_error=is_error
        )
    return ToolResultChange(event.content, event.details, event.is_error)


async def run_before_compact(
    extensions: Sequence[Extension], event: BeforeCompactEvent, timings: HookTimings | None = None
) -> HookDecision:
    cancelled_by, compaction, supplied_by = await _cancel_or_supply(
        extensions, "before_compact", "compaction", _is_valid_compaction, event, timings
    )
    return HookDecision(cancelled_by, compaction, supplied_by)


async def run_before_tree(
    extensions: Sequence[Extension], event: BeforeTreeEvent, timings: HookTimings | None = None
) -> TreeDecision:
    cancelled_by, summary, supplied_by = await _cancel_or_supply(
        extensions, "before_tree", "summary", _is_valid_summary, event, timings
    )
    return TreeDecision(cancelled_by, summary, supplied_by)


async def _cancel_or_supply(
    extensions: Sequence[Extension],
    hook_name: str,
    key: str,
    is_valid: Callable[[Any], bool],
    event: Any,
    timings: HookTimings | None,
) -> tuple[str | None, dict | None, str | None]:
    """pi's ``session_before_*`` rule: a cancel stops at once, else the last valid ``key`` wins.
    (who cancelled, what was supplied, by whom)"""
    supplied: tuple[str | None, dict | None, str | None] = (None, None, None)
    for extension in extensions:
        result = await call_hook(extension, hook_name, event, timings)
        if not isinstance(result, dict):
            continue
        if result.get("cancel") is True:
            return extension.name, None, None
        value = result.get(key)
        if is_valid(value):
            supplied = (None, value, extension.name)
        elif value is not None:
            logger.warning("extension %s returned an invalid %s; ignoring it", extension.name, key)
    return supplied


def _warn_if_unusable(extension: Extension, hook_name: str, result: Any) -> None:
    if result is not None and result is not _MISSING:
        logger.warning(
            "extension %s: %s returned %s, not a dict of pi's shape; ignoring it",
            extension.name,
            hook_name,
            type(result).__name__,
        )


def _is_message(message: Any) -> bool:
    return isinstance(message, dict) and isinstance(message.get("role"), str)


def _is_block(block: Any) -> bool:
    return isinstance(block, dict) and isinstance(block.get("type"), str)


def _non_empty_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _is_valid_summary(summary: Any) -> bool:
    return isinstance(summary, dict) and _non_empty_text(summary.get("summary"))


def _is_valid_compaction(compaction: Any) -> bool:
    return (
        isinstance(compaction, dict)
        and _non_empty_text(compaction.get("summary"))
        and isinstance(compaction.get("firstKeptEntryId"), str)
        and isinstance(compaction.get("tokensBefore"), (int, float))
    )
