"""A simulated provider prompt cache, so tests and benchmarks can see what caching would save.

Two rule sets, one clock:

**Anthropic** (``anthropic_usage``): a request is read as blocks in the provider's order (each
tool definition, each system block, each content block of each message). Cache entries exist
only where a block carried ``cache_control`` (a *breakpoint*; at most four per request, longer
TTLs before shorter ones, as the API insists). For each breakpoint the cache looks for a live
entry at that block or at any of the 20 blocks before it; the longest prefix found is a **cache
read**. Everything after that prefix up to the last breakpoint is a **cache write** (billed once,
then readable by later requests for the TTL: 5 minutes, or 1 hour with ``"ttl": "1h"``), and
whatever follows the last breakpoint is plain input. Prefixes shorter than the model's minimum
(1024 tokens) are never cached. A read refreshes the entry's TTL.

**OpenAI** (``openai_usage``): caching is automatic. Every request leaves its prefixes (at each
tool and message boundary) in the cache, scoped by model and ``prompt_cache_key``; a later request
reads the longest live prefix, counted in 128-token steps from 1024 tokens. Entries live 10
minutes, or 24 hours with ``prompt_cache_retention: "24h"``. There are no cache writes to bill.

Tokens are estimated as a quarter of each block's JSON length, the same for every client, which
is all a comparison needs. Cached content is compared without its ``cache_control`` markers, and
the message part of the Anthropic prefix also depends on ``tool_choice`` and ``thinking``, since
changing those invalidates cached messages on the real API.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
MINIMUM_CACHEABLE_TOKENS = 1024
ANTHROPIC_TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
OPENAI_TTL_SECONDS = {"in_memory": 600.0, "24h": 86400.0}
OPENAI_CACHE_STEP = 128


class CacheRequestError(ValueError):
    """A request the real API would refuse (too many breakpoints, TTLs out of order)."""


@attrs.frozen
class CacheUsage:
    """What one request cost in prompt tokens: plain input, read from and written to the cache."""

    input_tokens: int
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_read + self.cache_write


@attrs.frozen
class _Block:
    digest: str
    tokens: int
    ttl: str | None  # "5m"/"1h" on a breakpoint, else None


def estimate_tokens(value: Any) -> int:
    """A quarter of the JSON length, at least one token."""
    return max(1, math.ceil(len(_canonical(value)) / 4))


@attrs.define
class PromptCache:
    """The cache of one simulated provider (see the module docstring for its rules)."""

    clock: Callable[[], float] = time.monotonic
    minimum_tokens: int = MINIMUM_CACHEABLE_TOKENS
    _entries: dict[str, float] = attrs.field(factory=dict)
    """Prefix digest → expiry time on ``clock``."""

    def clear(self) -> None:
        self._entries.clear()

    # ------------------------------------------------------------------ Anthropic

    def anthropic_usage(self, body: Mapping[str, Any]) -> CacheUsage:
        """Read and write the cache for one Messages API request body."""
        blocks = anthropic_blocks(body)
        breakpoints = [index for index, block in enumerate(blocks) if block.ttl is not None]
        _check_breakpoints(blocks, breakpoints)
        totals = _running_totals(blocks)
        total = totals[-1] if totals else 0
        now = self.clock()
        hit = self._longest_hit(blocks, breakpoints, now)
        read = totals[hit] if hit >= 0 else 0
        end = end_1h = read
        for index in breakpoints:
            if totals[index] < self.minimum_tokens:
                continue
            ttl = blocks[index].ttl or "5m"
            self._entries[blocks[index].digest] = now + ANTHROPIC_TTL_SECONDS[ttl]
            end = max(end, totals[index])
            if ttl == "1h":
                end_1h = max(end_1h, totals[index])
        if hit >= 0:
            ttl = _ttl_of_read(blocks, breakpoints, hit)
            expiry = now + ANTHROPIC_TTL_SECONDS[ttl]
            self._entries[blocks[hit].digest] = max(self._entries[blocks[hit].digest], expiry)
        write, write_1h = end - read, end_1h - read
        return CacheUsage(total - read - write, read, write, write_1h)

    def _longest_hit(self, blocks: list[_Block], breakpoints: list[int], now: float) -> int:
        best = -1
        for index in breakpoints:
            for position in range(index, max(-1, index - LOOKBACK_BLOCKS), -1):
                if position <= best:
                    break
                if self._entries.get(blocks[position].digest, -1.0) > now:
                    best = position
                    break
        return best

    # ------------------------------------------------------------------ OpenAI

    def openai_usage(self, body: Mapping[str, Any]) -> CacheUsage:
        """Read and fill the automatic cache for one chat-completions request body."""
        scope = [body.get("model"), body.get("prompt_cache_key")]
        parts = [*(body.get("tools") or []), *(body.get("messages") or [])]
        digests, totals = [], []
        running = 0
        digest = hashlib.sha256(_canonical(scope).encode())
        for part in parts:
            digest.update(_canonical(_without_cache_control(part)).encode())
            running += estimate_tokens(part)
            digests.append(digest.hexdigest())
            totals.append(running)
        now = self.clock()
        read = 0
        for index in range(len(digests) - 1, -1, -1):
            if self._entries.get(digests[index], -1.0) > now:
                read = _openai_cached(totals[index])
                break
        ttl = OPENAI_TTL_SECONDS.get(str(body.get("prompt_cache_retention")), 600.0)
        for index, prefix_digest in enumerate(digests):
            if totals[index] >= self.minimum_tokens:
                self._entries[prefix_digest] = now + ttl
        total = totals[-1] if totals else 0
        return CacheUsage(total - read, read)


def anthropic_blocks(body: Mapping[str, Any]) -> list[_Block]:
    """The request as cacheable blocks, in the API's prefix order: tools, system, messages."""
    items: list[tuple[Any, Any]] = []
    for tool in body.get("tools") or []:
        items.append((("tool", _without_cache_control(tool)), tool.get("cache_control")))
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        items.append((("system", _without_cache_control(block)), block.get("cache_control")))
    message_scope = {"tool_choice": body.get("tool_choice"), "thinking": body.get("thinking")}
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content or []:
            key = ("message", message_scope, message.get("role"), _without_cache_control(block))
            items.append((key, _cache_control_in(block)))
    digest = hashlib.sha256(_canonical(body.get("model")).encode())
    blocks = []
    for key, cache_control in items:
        digest.update(_canonical(key).encode())
        ttl = None
        if isinstance(cache_control, Mapping):
            ttl = str(cache_control.get("ttl") or "5m")
        blocks.append(_Block(digest.hexdigest(), estimate_tokens(key[-1]), ttl))
    return blocks


def _check_breakpoints(blocks: Sequence[_Block], breakpoints: Sequence[int]) -> None:
    if len(breakpoints) > MAX_BREAKPOINTS:
        raise CacheRequestError(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(breakpoints)}."
        )
    seen_short = False
    for index in breakpoints:
        ttl = blocks[index].ttl
        if ttl not in ANTHROPIC_TTL_SECONDS:
            raise CacheRequestError(f"cache_control.ttl must be '5m' or '1h', got {ttl!r}")
        if ttl == "1h" and seen_short:
            raise CacheRequestError(
                "a ttl='1h' cache_control block must not come after a ttl='5m' one"
            )
        seen_short = seen_short or ttl == "5m"


def _running_totals(blocks: Sequence[_Block]) -> list[int]:
    totals, running = [], 0
    for block in blocks:
        running += block.tokens
        totals.append(running)
    return totals


def _ttl_of_read(blocks: Sequence[_Block], breakpoints: Sequence[int], hit: int) -> str:
    later = [blocks[index].ttl for index in breakpoints if index >= hit]
    return "1h" if "1h" in later else "5m"


def _openai_cached(tokens: int) -> int:
    if tokens < MINIMUM_CACHEABLE_TOKENS:
        return 0
    steps = (tokens - MINIMUM_CACHEABLE_TOKENS) // OPENAI_CACHE_STEP
    return MINIMUM_CACHEABLE_TOKENS + steps * OPENAI_CACHE_STEP


def _cache_control_in(block: Mapping[str, Any]) -> Any:
    """A block's ``cache_control``, or one set on a block nested in it (a tool result's text)."""
    if block.get("cache_control") is not None:
        return block["cache_control"]
    nested = block.get("content")
    if isinstance(nested, list):
        for item in reversed(nested):
            if isinstance(item, Mapping) and item.get("cache_control") is not None:
                return item["cache_control"]
    return None


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            key: _without_cache_control(item)
            for key, item in value.items()
            if key != "cache_control"
        }
    if isinstance(value, list):
        return [_without_cache_control(item) for item in value]
    return value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
