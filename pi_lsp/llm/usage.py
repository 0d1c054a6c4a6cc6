"""pi's ``usage`` record (tokens and dollar cost) from an OpenAI-style usage object.

pi counts ``input`` as the prompt tokens that were neither read from nor written to the prompt
cache: ``input = prompt_tokens - cacheRead - cacheWrite``, so that ``totalTokens`` (the sum of the
four) is the context size the compaction threshold compares with the window. Cached tokens are
found where the providers put them: ``prompt_tokens_details.cached_tokens`` (OpenAI),
``cache_read_input_tokens`` / ``cache_creation_input_tokens`` (Anthropic through litellm),
``prompt_cache_hit_tokens`` (DeepSeek). Cost uses the per-token prices of litellm's model table
and is 0 for a model the table does not price; it never raises.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.models import model_info

_PRICE_KEYS = {
    "input": "input_cost_per_token",
    "output": "output_cost_per_token",
    "cacheRead": "cache_read_input_token_cost",
    "cacheWrite": "cache_creation_input_token_cost",
}


def empty_usage() -> dict[str, Any]:
    """pi's all-zero usage (a stream that failed before the usage chunk)."""
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def usage_from_openai(raw: Any, model: ModelConfig) -> dict[str, Any]:
    """pi's usage for a usage object (a dict or litellm's ``Usage``) reported for ``model``."""
    fields = _as_dict(raw)
    prompt = _count(fields.get("prompt_tokens"))
    details = _as_dict(fields.get("prompt_tokens_details"))
    cache_read = (
        _count(details.get("cached_tokens"))
        or _count(fields.get("cache_read_input_tokens"))
        or _count(fields.get("prompt_cache_hit_tokens"))
    )
    cache_write = (
        _count(details.get("cache_write_tokens"))
        or _count(details.get("cache_creation_tokens"))
        or _count(fields.get("cache_creation_input_tokens"))
    )
    usage = empty_usage()
    usage["input"] = max(0, prompt - cache_read - cache_write)
    usage["output"] = _count(fields.get("completion_tokens"))
    usage["cacheRead"] = cache_read
    usage["cacheWrite"] = cache_write
    usage["totalTokens"] = usage["input"] + usage["output"] + cache_read + cache_write
    usage["cost"] = _cost(usage, model)
    return usage


def _cost(usage: Mapping[str, Any], model: ModelConfig) -> dict[str, float | int]:
    try:
        prices = model_info(model) or {}
    except Exception:  # noqa: BLE001 — a broken price table must not fail a completed answer
        prices = {}
    cost: dict[str, float | int] = {}
    for field, price_key in _PRICE_KEYS.items():
        price = prices.get(price_key)
        cost[field] = (
            usage[field] * price if isinstance(price, (int, float)) and usage[field] else 0
        )
    cost["total"] = sum(cost.values())
    return cost


def _as_dict(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    dumped: Any = None
    if callable(dump):
        # Odd providers' pydantic objects may fail to dump; their usage then reads as zero.
        with contextlib.suppress(Exception):
            dumped = dump()
    if isinstance(dumped, dict):
        return dumped
    public = getattr(value, "__dict__", {})
    return {key: item for key, item in public.items() if not key.startswith("_")}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
