"""litellm is for the long tail only: a process whose models are all in the provider table never
imports it (not at start, not in the preload, not for a turn), and a Bedrock model imports it on
its first use. Each runs in a fresh interpreter, where ``sys.modules`` tells the truth."""

from __future__ import annotations

import json
import subprocess
import sys

_SCRIPT = """
import asyncio, json, os, sys, threading
from pi_lsp.llm.client import ProviderClient
from pi_lsp.llm.config import resolve_model
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.scripted_llm import ScriptedLLM, replies

TABLE_MODELS = {
    "openai/gpt-5-mini": {"OPENAI_BASE_URL": "{v1}", "OPENAI_API_KEY": "k"},
    "gpt-4o": {"OPENAI_BASE_URL": "{v1}", "OPENAI_API_KEY": "k"},
    "openrouter/anthropic/claude-sonnet-4-5": {"OPENROUTER_API_BASE": "{v1}",
                                               "OPENROUTER_API_KEY": "k"},
    "groq/llama-3.3-70b-versatile": {"GROQ_API_BASE": "{v1}", "GROQ_API_KEY": "k"},
    "xai/grok-4": {"XAI_API_BASE": "{v1}", "XAI_API_KEY": "k"},
    "deepseek/deepseek-chat": {"DEEPSEEK_API_BASE": "{v1}", "DEEPSEEK_API_KEY": "k"},
    "mistral/codestral-latest": {"MISTRAL_API_BASE": "{v1}", "MISTRAL_API_KEY": "k"},
    "cerebras/gpt-oss-120b": {"CEREBRAS_API_BASE": "{v1}", "CEREBRAS_API_KEY": "k"},
    "ollama/llama3.1": {"OLLAMA_HOST": "{host}"},
    "anthropic/claude-sonnet-4-5": {"ANTHROPIC_BASE_URL": "{root}", "ANTHROPIC_API_KEY": "k"},
    "gemini/gemini-2.5-flash": {"GEMINI_API_BASE": "{gemini}", "GEMINI_API_KEY": "k"},
}
LONG_TAIL = {
    "bedrock/anthropic.claude-3-haiku-20240307-v1:0": {
        "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_REGION_NAME": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_BEDROCK_RUNTIME_ENDPOINT": "{root}",
    },
}

def configure(server, variables):
    places = {"v1": server.base_url, "root": server.root_url, "gemini": server.gemini_url,
              "host": server.root_url.removeprefix("http://").rstrip("/")}
    for name, value in variables.items():
        os.environ[name] = value.format(**places)

async def turn(model):
    request = CompletionRequest(model=model, system_prompt="s",
                                messages=[{"role": "user", "content": "hi", "timestamp": 1}],
                                thinking_level="medium", max_tokens=100, timeout=10)
    events = [event async for event in AssistantStream(request).events()]
    return events[-1].message

async def main():
    report = {"stop_reasons": {}, "bodies": {}}
    async with ScriptedLLM() as server:
        for reference, variables in TABLE_MODELS.items():
            configure(server, variables)
            model = resolve_model({"model": reference}, os.environ)
            client = ProviderClient(lambda: model)
            client.preload()
            for thread in threading.enumerate():
                if thread.name == "llm-preload":
                    thread.join()
            server.enqueue(replies.text("ok"))
            report["stop_reasons"][reference] = (await turn(model))["stopReason"]
            report["bodies"][reference] = server.requests[-1]
        report["table_only"] = sorted(n for n in sys.modules if n.split(".")[0] == "litellm")
        for reference, variables in LONG_TAIL.items():
            configure(server, variables)
            model = resolve_model({"model": reference}, os.environ)
            report["resolved_long_tail"] = "litellm" in sys.modules
            report["long_tail_error"] = (await turn(model)).get("errorMessage")
        report["after_long_tail"] = "litellm" in sys.modules
    print(json.dumps(report))

asyncio.run(main())
"""


def run_script() -> dict:
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_table_models_never_import_litellm_and_the_long_tail_does_on_first_use() -> None:
    report = run_script()
    assert set(report["stop_reasons"].values()) == {"stop"}, report["stop_reasons"]
    assert report["table_only"] == []
    assert report["resolved_long_tail"] is False  # resolving a model is not using it
    assert report["after_long_tail"] is True
    assert "Bedrock" in report["long_tail_error"]  # litellm's Bedrock handler reached the server

    bodies = report["bodies"]
    assert bodies["openai/gpt-5-mini"]["model"] == "gpt-5-mini"
    assert bodies["openai/gpt-5-mini"]["max_completion_tokens"] == 100
    assert "max_tokens" not in bodies["openai/gpt-5-mini"]
    assert bodies["gpt-4o"]["max_tokens"] == 100
    assert bodies["openrouter/anthropic/claude-sonnet-4-5"]["model"] == (
        "anthropic/claude-sonnet-4-5"
    )
    anthropic = bodies["anthropic/claude-sonnet-4-5"]
    assert anthropic["model"] == "claude-sonnet-4-5" and anthropic["max_tokens"] == 100
    assert "thinking" not in anthropic  # 100 tokens leave no room for Anthropic's 1024 budget
    assert bodies["ollama/llama3.1"]["model"] == "llama3.1"
    assert bodies["gemini/gemini-2.5-flash"]["generationConfig"]["maxOutputTokens"] == 100
