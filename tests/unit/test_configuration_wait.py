"""A request waits for the client's settings once per question: a client that never answers
``workspace/configuration`` delays one request, not every request after it."""

from __future__ import annotations

import asyncio
import types

import pytest

from pi_lsp.handlers import configuration


@pytest.fixture
def short_wait(monkeypatch):
    monkeypatch.setattr(configuration, "ANSWER_TIMEOUT_SECONDS", 0.01)


def test_a_request_waits_until_the_answer_is_in(short_wait):
    async def scenario() -> bool:
        services = types.SimpleNamespace(client_configuration_ready=asyncio.Event())
        waiting = asyncio.create_task(configuration.wait_for_client_settings(services))
        await asyncio.sleep(0)
        services.client_configuration_ready.set()
        await waiting
        return services.client_configuration_ready.is_set()

    assert asyncio.run(scenario())


def test_an_unanswered_question_is_waited_for_once(short_wait):
    async def scenario() -> bool:
        services = types.SimpleNamespace(client_configuration_ready=asyncio.Event())
        await configuration.wait_for_client_settings(services)
        return services.client_configuration_ready.is_set()

    # The next request finds the question given up on and runs at once on the settings in force.
    assert asyncio.run(scenario())
