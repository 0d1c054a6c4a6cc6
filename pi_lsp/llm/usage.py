"""pi's ``usage`` record (tokens and dollar cost) from an OpenAI-style usage object.

pi counts ``input`` as the prompt tokens that were neither read from nor written to the prompt
cache: ``input = prompt_tokens - cacheRead - cacheWrite``, so that ``totalTokens`` (the sum of the
four) is the context size the compaction threshold compares with the window. Cached tokens are
found where the providers put them: ``prompt_tokens_details.cached_tokens`` (OpenAI),
``cache_read_input_tokens`` / ``cache_creation_input_tokens`` (Anthropic through litellm),
``prompt_cache_hit_tokens`` (DeepSeek). Anthropic's 1-hour cache writes are also recorded as
``cacheWrite1h`` (part of ``cacheWrite``), as pi does.

Cost uses the per-token prices of litellm's model table, and is 0 for a model the table does not
price; it never raises. Like pi's ``calculateCost``: cache reads at the cache-read price, 5-minute
writes at the cache-creation price, 1-hour writes at the table's 1-hour price (twice the input
price when it has none), and a prompt beyond a price tier (``…_above_200k_tokens``,
``…_above_272k_tokens``) at that tier's prices. A cache price the table lacks falls back to the
input price.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.models import model_info
from pi_lsp.session.message_types import Cost, Usage

_PRICE_KEYS = {
    "input": "input_cost_per_token",
    "output": "output_cost_per_token",
    "cacheRead": "cache_read_input_token_cost",
    "cacheWrite": "cache_creation_input_token_cost",
}
_ONE_HOUR_WRITE_PRICE = "cache_creation_input_token_cost_above_1hr"
_TIERS = (272_000, 200_000)


def empty_usage() -> Usage:
    """pi's all-zero usage (a stream that failed before the usage chunk)."""
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def usage_from_openai(raw: Any, model: ModelConfig) -> Usage:
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
    creation_details = _as_dict(details.get("cache_creation_token_details"))
    cache_write_1h = min(cache_write, _count(creation_details.get("ephemeral_1h_input_tokens")))
    usage = empty_usage()
    usage["input"] = max(0, prompt - cache_read - cache_write)
    usage["output"] = _count(fields.get("completion_tokens"))
    usage["cacheRead"] = cache_read
    usage["cacheWrite"] = cache_write
    usage["totalTokens"] = usage["input"] + usage["output"] + cache_read + cache_write
    if cache_write_1h:
        usage["cacheWrite1h"] = cache_write_1h
    usage["cost"] = usage_cost(usage, model)
    return usage


def usage_cost(usage: Mapping[str, Any], model: ModelConfig) -> Cost:
    """pi's ``cost`` record for ``usage`` at ``model``'s prices (see the module docstring)."""
    try:
        prices = _tier_prices(model_info(model) or {}, usage)
    except Exception:  # noqa: BLE001 — a broken price table must not fail a completed answer
        prices = {}
    input_price = _price(prices, _PRICE_KEYS["input"])
    cost: dict[str, float | int] = {}
    for field, price_key in _PRICE_KEYS.items():
        price = _price(prices, price_key) if field in ("input", "output") else None
        if field in ("cacheRead", "cacheWrite"):
            price = _price(prices, price_key, input_price)
        tokens = usage.get(field) or 0
        cost[field] = tokens * price if price and tokens else 0
    one_hour = usage.get("cacheWrite1h") or 0
    if one_hour and cost["cacheWrite"]:
        one_hour_price = _price(prices, _ONE_HOUR_WRITE_PRICE, 2 * input_price)
        short_price = _price(prices, _PRICE_KEYS["cacheWrite"], input_price)
        cost["cacheWrite"] = (usage["cacheWrite"] - one_hour) * short_price + one_hour * (
            one_hour_price
        )
    return {
        "input": cost["input"],
        "output": cost["output"],
        "cacheRead": cost["cacheRead"],
        "cacheWrite": cost["cacheWrite"],
        "total": sum(cost.values()),
    }


def _tier_prices(prices: Mapping[str, Any], usage: Mapping[str, Any]) -> Mapping[str, Any]:
    prompt = sum(usage.get(field) or 0 for field in ("input", "cacheRead", "cacheWrite"))
    for threshold in _TIERS:
        suffix = f"_above_{threshold // 1000}k_tokens"
        if prompt > threshold and _PRICE_KEYS["input"] + suffix in prices:
            tiered = dict(prices)
            for price_key in _PRICE_KEYS.values():
                if price_key + suffix in prices:
                    tiered[price_key] = prices[price_key + suffix]
            return tiered
    return prices


def _price(prices: Mapping[str, Any], key: str, fallback: float = 0.0) -> float:
    price = prices.get(key)
    if isinstance(price, (int, float)) and not isinstance(price, bool):
        return float(price)
    return fallback


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
