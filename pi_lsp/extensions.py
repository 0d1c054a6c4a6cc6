"""Python extensions: plugins registered under the ``pi_lsp.extensions`` entry-point group.

The hook pi-lsp offers is pi's ``session_before_compact``: before a compaction is summarized, each
extension (in load order) may look at the plan and return ``{"cancel": True}`` to stop it, or
``{"compaction": {"summary", "firstKeptEntryId", "tokensBefore", "details"?}}`` to supply its own
summary, which is then stored verbatim with ``fromHook: true`` (pi's marker for extension
summaries). The last supplied summary wins; a cancel stops at once. An extension that fails to load
or raises is logged and skipped: one broken plugin never stops a compaction or the server.

An entry point may name an object with a ``before_compact(event)`` method (sync or async), a class
to instantiate, or a module defining ``before_compact``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any

import attrs

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "pi_lsp.extensions"


@attrs.frozen
class BeforeCompactEvent:
    """What an extension sees before a compaction (pi's ``session_before_compact`` payload)."""

    preparation: Any
    """The ``CompactionPreparation``: messages to summarize, the kept entry, file operations…"""
    branch_entries: list[dict]
    instructions: str | None
    reason: str
    """``manual``, ``threshold`` or ``overflow``."""
    will_retry: bool


@attrs.frozen
class Extension:
    name: str
    handler: Any


@attrs.frozen
class HookDecision:
    cancelled_by: str | None = None
    compaction: dict | None = None
    supplied_by: str | None = None


def load_extensions() -> list[Extension]:
    """Every installed extension that loads; failures are logged and skipped."""
    loaded = []
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            target = entry_point.load()
            handler = target() if inspect.isclass(target) else target
        except Exception:
            logger.exception("extension %s failed to load; skipping it", entry_point.name)
            continue
        loaded.append(Extension(entry_point.name, handler))
        logger.info("loaded extension %s", entry_point.name)
    return loaded


async def run_before_compact(
    extensions: Sequence[Extension], event: BeforeCompactEvent
) -> HookDecision:
    decision = HookDecision()
    for extension in extensions:
        hook = getattr(extension.handler, "before_compact", None)
        if hook is None:
            continue
        try:
            result = hook(event)
            if inspect.isawaitable(result):
                result = await result
        except Exception:
            logger.exception("extension %s failed in before_compact; ignoring it", extension.name)
            continue
        if not isinstance(result, dict):
            continue
        if result.get("cancel") is True:
            return HookDecision(cancelled_by=extension.name)
        compaction = result.get("compaction")
        if _is_valid_compaction(compaction):
            decision = HookDecision(compaction=compaction, supplied_by=extension.name)
        elif compaction is not None:
            logger.warning(
                "extension %s returned an invalid compaction; ignoring it", extension.name
            )
    return decision


def _is_valid_compaction(compaction: Any) -> bool:
    return (
        isinstance(compaction, dict)
        and isinstance(compaction.get("summary"), str)
        and bool(compaction["summary"].strip())
        and isinstance(compaction.get("firstKeptEntryId"), str)
        and isinstance(compaction.get("tokensBefore"), (int, float))
    )
