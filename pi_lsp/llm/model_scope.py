"""pi's choice among models: its default model of each provider, and the ``enabledModels``
patterns of its settings (``model-resolver.ts`` of pi 0.84.2)."""

from __future__ import annotations

import fnmatch
import re

PI_DEFAULT_MODELS: dict[str, str] = {
    "amazon-bedrock": "us.anthropic.claude-opus-4-6-v1",
    "ant-ling": "Ring-2.6-1T",
    "anthropic": "claude-opus-4-8",
    "openai": "gpt-5.5",
    "azure-openai-responses": "gpt-5.4",
    "nvidia": "nvidia/nemotron-3-super-120b-a12b",
    "deepseek": "deepseek-v4-pro",
    "google": "gemini-3.1-pro-preview",
    "google-vertex": "gemini-3.1-pro-preview",
    "openrouter": "moonshotai/kimi-k2.6",
    "vercel-ai-gateway": "zai/glm-5.1",
    "xai": "grok-4.5",
    "groq": "openai/gpt-oss-120b",
    "cerebras": "zai-glm-4.7",
    "zai": "glm-5.1",
    "zai-coding-cn": "glm-5.1",
    "mistral": "devstral-medium-latest",
    "minimax": "MiniMax-M2.7",
    "minimax-cn": "MiniMax-M2.7",
    "moonshotai": "kimi-k2.6",
    "moonshotai-cn": "kimi-k2.6",
    "huggingface": "moonshotai/Kimi-K2.6",
    "fireworks": "accounts/fireworks/models/kimi-k2p6",
    "together": "moonshotai/Kimi-K2.6",
    "baseten": "zai-org/GLM-5.2",
    "opencode": "kimi-k2.6",
    "opencode-go": "kimi-k2.6",
    "kimi-coding": "kimi-for-coding",
    "cloudflare-workers-ai": "@cf/moonshotai/kimi-k2.6",
    "cloudflare-ai-gateway": "workers-ai/@cf/moonshotai/kimi-k2.6",
    "qwen-token-plan": "qwen3.7-max",
    "qwen-token-plan-cn": "qwen3.7-max",
    "qwen-token-plan-individual": "qwen3.8-max",
    "xiaomi": "mimo-v2.5-pro",
    "xiaomi-token-plan-cn": "mimo-v2.5-pro",
    "xiaomi-token-plan-ams": "mimo-v2.5-pro",
    "xiaomi-token-plan-sgp": "mimo-v2.5-pro",
}
"""pi 0.84.2's default model of each provider (``defaultModelPerProvider``), in pi's order."""

THINKING_SUFFIXES = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
_DATED = re.compile(r"-\d{8}$")


def scope_models(patterns: list[str], available: list[tuple[str, str | None]]) -> list[str]:
    """pi's ``resolveModelScope`` over ``provider/id`` references: globs match the reference
    or the id (ignoring case); other patterns match exactly, else by substring of id or name,
    preferring undated aliases. A ``:level`` thinking suffix is ignored."""
    scoped: list[str] = []
    for raw in patterns:
        pattern = _without_thinking_suffix(raw.strip())
        if any(char in pattern for char in "*?["):
            matches = [
                reference
                for reference, _ in available
                if fnmatch.fnmatchcase(reference.lower(), pattern.lower())
                or fnmatch.fnmatchcase(reference.partition("/")[2].lower(), pattern.lower())
            ]
        else:
            match = _match_one(pattern, available)
            matches = [match] if match else []
        scoped += [match for match in matches if match not in scoped]
    return scoped


def _match_one(pattern: str, available: list[tuple[str, str | None]]) -> str | None:
    lowered = pattern.lower()
    exact = [ref for ref, _ in available if lowered in (ref.lower(), ref.partition("/")[2].lower())]
    if len(exact) == 1:
        return exact[0]
    partial = [
        ref
        for ref, name in available
        if lowered in ref.partition("/")[2].lower() or (name and lowered in name.lower())
    ]
    aliases = sorted((ref for ref in partial if not _DATED.search(ref)), reverse=True)
    dated = sorted((ref for ref in partial if _DATED.search(ref)), reverse=True)
    found = aliases or dated
    return found[0] if found else None


def _without_thinking_suffix(pattern: str) -> str:
    head, colon, suffix = pattern.rpartition(":")
    return head if colon and suffix in THINKING_SUFFIXES else pattern
