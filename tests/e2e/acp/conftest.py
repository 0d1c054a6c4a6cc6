"""Fixtures the ``pi-lsp acp`` end-to-end modules share.

Each module keeps one warm ``pi-lsp acp`` process (its ``warm`` fixture: the connection and the
module's recording client) for all its tests, on one scripted model of its own (this
``scripted_llm`` overrides the LSP tests' one, which belongs to their per-test server); every test
gets a workspace of its own (``tests/e2e/conftest.py``), since ACP sessions name their ``cwd``.
"""

from __future__ import annotations

import pytest
import pytest_asyncio

from pi_lsp.scripted_llm.server import ScriptedLLM


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def scripted_llm():
    async with ScriptedLLM() as server:
        yield server


@pytest.fixture
def agent(warm, scripted_llm):
    """The module's warm process, what its client recorded cleared for this test; a scripted
    reply or an answer the test left unused fails it."""
    warm[1].reset()
    yield warm
    assert not scripted_llm._queue, "a scripted reply was left for the next test"
    warm[1].check_nothing_left()
