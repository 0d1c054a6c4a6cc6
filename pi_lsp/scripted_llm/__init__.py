"""A scripted OpenAI-compatible LLM server for tests and demos (see ``server`` and ``replies``).

In-process::

    async with ScriptedLLM() as llm:
        llm.enqueue(
            replies.text("Hello"), replies.tool_calls([("call_1", "read", {"path": "a.py"})])
        )
        ...  # point litellm at llm.base_url; inspect llm.requests afterwards

As a separate process (for a language server under test that runs as a subprocess)::

    python -m pi_lsp.scripted_llm --script replies.json --port-file port.txt

The pytest fixture ``scripted_llm`` lives in ``tests/scripted_llm_fixtures.py``.
"""

from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.replies import Reply, reply_from_json
from pi_lsp.scripted_llm.server import SCRIPTED_MODEL_ID, ScriptedLLM

__all__ = ["SCRIPTED_MODEL_ID", "Reply", "ScriptedLLM", "replies", "reply_from_json"]
