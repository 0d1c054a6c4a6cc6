"""The session's model as ``LiveConfig`` resolves it: ``pi/setModel`` to a model of another provider
than the configured one leaves the configured model's endpoint (``apiBase``) behind, and a provider
without a key is refused before any request, naming the provider."""

from __future__ import annotations

import pytest

from pi_lsp.errors import NoApiKeyError

KEY_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PI_LSP_API_BASE", "PI_LSP_API_KEY")


@pytest.fixture
def agent(make_agent, monkeypatch):
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return make_agent()


def test_a_model_of_the_configured_provider_keeps_its_endpoint(agent):
    chosen = agent.agent.set_model(agent.runtime, "openai/another")
    assert (chosen.api_base, chosen.key_status) == ("http://127.0.0.1:9/v1", "local")


async def test_a_model_of_another_provider_goes_to_its_own_api_with_its_own_key(agent):
    chosen = agent.agent.set_model(agent.runtime, "anthropic/claude-sonnet-4-5")
    assert (chosen.api_base, chosen.api_key, chosen.key_status) == (None, None, "missing")
    with pytest.raises(NoApiKeyError, match="No API key for anthropic") as raised:
        await agent.prompt("hello")
    assert raised.value.data == {"provider": "anthropic"}
    assert agent.model.requests == []
