"""A recognisable fake API key, from the environment and from pi's settings (``models.json``),
never appears in session files, logs, stderr or anything the client receives, whatever goes
wrong: 401, 429, 500, a context overflow, a stalled provider the user gives up on, a dropped
stream, an unknown model. Providers that echo the key in their errors are simulated: every
scripted error quotes it.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from pi_lsp.client import PiRequestError
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM

from .figures import record_figure
from .servers import make_workspace, start_server

ENVIRONMENT_KEY = "sk-RELIABILITY-ENV-5e1d0c9b8a7f"
SETTINGS_KEY = "sk-RELIABILITY-SETTINGS-3c2b1a0f9e8d"


def failures(key: str) -> list[tuple[str, list[replies.Reply]]]:
    overflow = replies.context_overflow()
    overflow = replies.error(
        400,
        overflow.error_body["error"]["message"] + f" (key {key})",
        error_type="invalid_request_error",
        code="context_length_exceeded",
    )
    return [
        ("401", [replies.error(401, f"Incorrect API key provided: {key}")]),
        ("429", [replies.error(429, f"Rate limit reached for key {key}")]),
        ("500", [replies.error(500, f"upstream rejected {key}")]),
        ("overflow", [overflow, replies.error(400, f"summary refused for {key}")]),
        ("mid-stream error", [replies.mid_stream_error(message=f"stream broke for {key}")]),
        ("dropped stream", [replies.dropped_stream()]),
        (
            "bad model",
            [replies.error(404, f"The model `nope` does not exist or {key} lacks access")],
        ),
        ("timeout", [replies.hang(60, text=f"stalling {key[:6]}")]),
    ]


async def run_failures(client, model: ScriptedLLM, key: str) -> list[str]:
    texts = []
    for kind, scripted in failures(key):
        model.enqueue(*scripted)
        prompt = asyncio.ensure_future(client.request("pi/prompt", {"text": f"try {kind}"}))
        if kind == "timeout":  # the provider stalls; the user gives up
            await asyncio.sleep(1.5)
            await client.request("pi/abort", {})
        try:
            texts.append(json.dumps(await prompt))
        except PiRequestError as error:
            texts.append(str(error))
    try:
        await client.request("pi/setModel", {"model": "no-such-provider/nope"})
        model.enqueue(replies.error(404, f"no provider for {key}"))
        texts.append(json.dumps(await client.request("pi/prompt", {"text": "unknown model"})))
    except PiRequestError as error:
        texts.append(str(error))
    return texts


@pytest.mark.timeout(300)
@pytest.mark.parametrize("source", ["environment", "settings"])
async def test_a_fake_key_never_leaks_across_every_kind_of_error(tmp_path, source):
    workspace = make_workspace(tmp_path)
    home = tmp_path / "home"
    key = ENVIRONMENT_KEY if source == "environment" else SETTINGS_KEY
    async with ScriptedLLM() as model:
        options = {
            "retry": {"enabled": False},
            "sessionDir": str(workspace / "sessions"),
            "autoName": False,
        }
        environment = {}
        if source == "environment":
            options.update(model="openai/scripted", apiBase=model.base_url)
            environment["OPENAI_API_KEY"] = key
        else:
            models_file = home / "agent" / "models.json"
            models_file.parent.mkdir(parents=True)
            provider = {
                "baseUrl": model.base_url,
                "api": "openai-completions",
                "apiKey": key,
                "models": [{"id": "scripted", "name": "Scripted", "contextWindow": 32000}],
            }
            models_file.write_text(json.dumps({"providers": {"gateway": provider}}))
            options["model"] = "gateway/scripted"
        client = await start_server(home, workspace, options, environment=environment)
        try:
            texts = await run_failures(client, model, key)
            texts.append(json.dumps(client.events.notifications))
        finally:
            await client.close()
            stderr = await client.process.stderr.read() if client.process.stderr else b""
        assert all(
            headers.get("Authorization") == f"Bearer {key}" for headers in model.request_headers
        )
    files = [*workspace.rglob("*.jsonl"), *(home / "state").rglob("*.log")]
    assert any(path.suffix == ".log" for path in files) and any(
        path.suffix == ".jsonl" for path in files
    )
    texts += [path.read_text(errors="replace") for path in files]
    texts.append(stderr.decode(errors="replace"))
    leaks = [text[:300] for text in texts if key in text]
    assert not leaks, f"the fake key leaked: {leaks}"
    record_figure(
        f"secrets ({source})",
        kinds_of_error=len(failures(key)) + 1,
        places_searched=len(texts),
        leaks=0,
    )
