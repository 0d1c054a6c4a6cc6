"""The ``scripted_llm`` pytest fixture: a started ``ScriptedLLM`` on a free port, per test.

Import it into a test module or a conftest (``from pi_lsp.scripted_llm_fixtures import
scripted_llm``); pytest-asyncio runs it on the test's event loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from pi_lsp.scripted_llm.server import ScriptedLLM


@pytest_asyncio.fixture
async def scripted_llm() -> AsyncIterator[ScriptedLLM]:
    """A running scripted LLM server with an empty queue; stopped after the test."""
    async with ScriptedLLM() as server:
        yield server
