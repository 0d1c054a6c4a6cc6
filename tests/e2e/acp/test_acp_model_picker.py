"""The model picker of ``pi-lsp acp`` (its ``model`` session config option) as a client sees it:
the configured model and pi's ``models.json`` models first, then the chat models of the provider
table for the providers that have a key; never the cloud catalogue of a provider whose models
would go to the configured local ``apiBase``, never a non-chat model; and the configured model
still listed after the session switched to another."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import ClientCapabilities

from pi_lsp.client import isolated_environment
from pi_lsp.scripted_llm import replies
from tests.e2e.acp.support import RecordingClient, acp_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

NOT_CHAT = re.compile(
    r"container|audio|realtime|search|computer-use|embed|image|^ft:", re.IGNORECASE
)


def model_values(options) -> list[str]:
    [model] = [option for option in options if option.id == "model"]
    return [choice.value for choice in model.options]


async def test_the_picker_lists_configured_and_models_json_first_and_no_foreign_catalogue(
    scripted_llm, workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / "agent").mkdir(parents=True)
    models_json = {
        "providers": {
            "lab": {
                "baseUrl": scripted_llm.base_url,
                "api": "openai-completions",
                "apiKey": "lab-key",
                "models": [{"id": "lab-1"}],
            }
        }
    }
    (home / "agent" / "models.json").write_text(json.dumps(models_json))
    environment = {
        **isolated_environment(home),
        "OPENAI_API_KEY": "sk-test",
        "ANTHROPIC_API_KEY": "sk-ant-test",
    }
    options = {"model": "openai/scripted", "apiBase": scripted_llm.base_url, "autoName": False}
    client = RecordingClient()
    async with spawn_agent_process(
        client, *acp_command(options), env=environment, cwd=workspace
    ) as (connection, _process):
        await connection.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        listed = model_values(session.config_options)

        assert listed[:2] == ["openai/scripted", "lab/lab-1"]
        assert "anthropic/claude-sonnet-4-5" in listed  # a provider with a key
        # OpenAI's cloud catalogue would go to the local apiBase: not offered.
        assert not [value for value in listed[2:] if value.startswith("openai/")]
        assert not [value for value in listed if NOT_CHAT.search(value.partition("/")[2])]

        answer = await connection.set_config_option(
            config_id="model", session_id=session.session_id, value="lab/lab-1"
        )
        [model] = [option for option in answer.config_options if option.id == "model"]
        assert model.current_value == "lab/lab-1"
        after_switch = model_values(answer.config_options)
        assert after_switch[:2] == ["openai/scripted", "lab/lab-1"]

        scripted_llm.enqueue(replies.text("From the lab."))
        await connection.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert client.text() == "From the lab."
        assert scripted_llm.requests[-1]["model"] == "lab-1"
