"""What is known about models, offline and without importing litellm: windows, prices, lists.

The source is litellm's model table: ``litellm.model_cost`` once litellm is imported (it may hold
models registered at runtime), else the copy litellm bundles as JSON, which loads in a few
hundredths of a second instead of the seconds ``import litellm`` takes. A model is looked up by
its full litellm string, then by its bare id when the table files it under the same provider
(``anthropic/claude-sonnet-4-5`` is listed as ``claude-sonnet-4-5``).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from pi_lsp.llm.config import ModelConfig, split_model_string

DEFAULT_CONTEXT_WINDOW = 128_000
_BUNDLED_TABLE = "model_prices_and_context_window_backup.json"


@attrs.frozen
class KnownModel:
    """One chat model of litellm's table, as ``pi/models`` lists it."""

    model: str
    provider: str
    model_id: str
    context_window: int | None
    max_output_tokens: int | None
    reasoning: bool
    vision: bool


def model_info(model: ModelConfig) -> Mapping[str, Any] | None:
    """litellm's table entry for ``model``, or ``None`` for a model it does not know.

    The prices a ``models.json`` ``cost`` gives (dollars per million tokens; the table's are per
    token) replace the table's; a model the table does not know pays nothing for the others.
    """
    entry = _table_entry(model)
    if model.cost is None:
        return entry
    given = {
        "input_cost_per_token": model.cost.input,
        "output_cost_per_token": model.cost.output,
        "cache_read_input_token_cost": model.cost.cache_read,
        "cache_creation_input_token_cost": model.cost.cache_write,
    }
    prices = {key: value / 1e6 for key, value in given.items() if value is not None}
    # A tier price of the table (``…_above_200k_tokens``) would undo the given price.
    kept = {
        key: value
        for key, value in (entry or {}).items()
        if not any(key.startswith(price) for price in prices)
    }
    return {**kept, **prices}


def _table_entry(model: ModelConfig) -> Mapping[str, Any] | None:
    table = _model_table()
    entry = table.get(model.model)
    if entry is None:
        prefix = model.model.partition("/")[0] if "/" in model.model else None
        bare = table.get(model.model.partition("/")[2]) if prefix else None
        if bare is not None and bare.get("litellm_provider") == prefix:
            entry = bare
    return entry if isinstance(entry, Mapping) else None


def context_window_for(model: ModelConfig) -> int:
    """The context window: the ``contextWindow`` setting, else litellm's table, else 128000."""
    if model.context_window:
        return model.context_window
    info = model_info(model) or {}
    for key in ("max_input_tokens", "max_tokens"):
        value = info.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return DEFAULT_CONTEXT_WINDOW


def max_output_tokens_for(model: ModelConfig) -> int | None:
    """The output limit: the ``maxOutputTokens`` setting, else litellm's table, else unknown."""
    if model.max_output_tokens:
        return model.max_output_tokens
    value = (model_info(model) or {}).get("max_output_tokens")
    return value if isinstance(value, int) and value > 0 else None


def supports_reasoning(model: ModelConfig) -> bool:
    """Whether to send a reasoning effort: the ``reasoning`` setting or litellm's table says so."""
    return model.reasoning or bool((model_info(model) or {}).get("supports_reasoning"))


def list_known_models(prefix: str = "") -> list[KnownModel]:
    """litellm's chat models whose litellm string starts with ``prefix``, sorted by that string."""
    found = []
    for key, entry in _model_table().items():
        if not isinstance(entry, Mapping) or entry.get("mode") != "chat":
            continue
        model = _litellm_string(key, str(entry.get("litellm_provider", "")))
        if model.startswith(prefix):
            found.append(_known_model(model, entry))
    return sorted(found, key=lambda known: known.model)


def _litellm_string(key: str, provider: str) -> str:
    if not provider or key.startswith(provider + "/"):
        return key
    return f"{provider}/{key}"


def _known_model(model: str, entry: Mapping[str, Any]) -> KnownModel:
    provider, model_id = split_model_string(model)
    return KnownModel(
        model=model,
        provider=provider,
        model_id=model_id,
        context_window=entry.get("max_input_tokens") or entry.get("max_tokens"),
        max_output_tokens=entry.get("max_output_tokens"),
        reasoning=bool(entry.get("supports_reasoning")),
        vision=bool(entry.get("supports_vision")),
    )


def _model_table() -> Mapping[str, Any]:
    imported = sys.modules.get("litellm")
    table = getattr(imported, "model_cost", None)
    if isinstance(table, Mapping) and table:
        return table
    return _bundled_table()


@functools.cache
def _bundled_table() -> Mapping[str, Any]:
    spec = importlib.util.find_spec("litellm")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / _BUNDLED_TABLE
        if path.is_file():
            table = json.loads(path.read_text(encoding="utf-8"))
            table.pop("sample_spec", None)
            return table
    return {}
