"""The server under bad input and competition: fuzzed
params, two servers on one workspace, restarts."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygls.exceptions import JsonRpcException

from pi_lsp import protocol
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from tests.e2e.conftest import SCRIPTED_MODEL, another_server, request
from tests.e2e.tcp_support import RawConnection, connect_client, tcp_server

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
field_names = st.sampled_from(
    [
        "text",
        "sessionId",
        "targetId",
        "entryId",
        "label",
        "name",
        "model",
        "level",
        "path",
        "images",
        "streamingBehavior",
        "summarize",
        "filter",
    ]
)
params = json_values | st.dictionaries(field_names, json_values, max_size=4)
# Coded errors a request may legitimately end with (see
# docs/protocol.md); -32603 (internal) is not one.
EXPECTED_ERROR_CODES = {
    -32602,
    -32001,
    -32002,
    -32003,
    -32004,
    -32005,
    -32010,
    -32011,
    -32012,
    -32013,
    -32020,
}
# Methods that would start real work with valid params are fuzzed for their validation only.
FUZZED_METHODS = sorted(set(protocol.PARAMS_BY_METHOD) - {protocol.PROMPT, protocol.NEW_SESSION})


def draw_requests(count: int) -> list[tuple[str, object]]:
    drawn: list[tuple[str, object]] = []

    @settings(
        max_examples=count, database=None, suppress_health_check=list(HealthCheck), deadline=None
    )
    @given(st.sampled_from(FUZZED_METHODS), params)
    def collect(method, raw):
        drawn.append((method, raw))

    collect()
    return drawn


@pytest.fixture
async def tcp_client(tmp_path, workspace):
    """A client of ``pi-lsp --tcp`` that presented the token, with the scripted model."""
    async with ScriptedLLM() as scripted_llm, tcp_server(tmp_path) as server:
        options = {"model": SCRIPTED_MODEL, "apiBase": scripted_llm.base_url, "autoName": False}
        client = await connect_client(server, workspace, options, server.token)
        client.scripted_llm = scripted_llm
        yield client
        await client.shutdown_session()
        await client.stop()


@pytest.fixture(params=["stdio", "tcp"])
def fuzzed_client(request):
    """The same server over both transports: TCP adds a gate in front of the same protocol."""
    return request.getfixturevalue("client" if request.param == "stdio" else "tcp_client")


async def test_malformed_requests_get_errors_and_the_server_keeps_serving(fuzzed_client):
    client, scripted_llm = fuzzed_client, fuzzed_client.scripted_llm
    answered = 0
    for method, raw in draw_requests(150):
        try:
            await asyncio.wait_for(client.protocol.send_request_async(method, raw), 10)
        except JsonRpcException as error:
            assert error.code in EXPECTED_ERROR_CODES, (method, raw, error)
        answered += 1
    assert answered == 150
    for bad_prompt in (
        {"text": None},
        {"text": "x", "images": [{"data": 1}]},
        {"text": "x", "streamingBehavior": "now"},
        [],
    ):
        try:
            await request(client, "pi/prompt", bad_prompt)
            raise AssertionError(f"accepted {bad_prompt}")
        except JsonRpcException as error:
            assert error.code == -32602 and "pi/prompt" in error.message
    scripted_llm.enqueue(replies.text("Still here."))
    assert (await request(client, "pi/prompt", {"text": "are you alive?"}))["stopReason"] == "stop"


def draw_first_messages(count: int) -> list[bytes]:
    """What a stranger might open a TCP connection with: fuzzed requests, tokens and raw bytes."""
    drawn: list[bytes] = []
    messages = st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "id": st.integers(0, 99),
            "method": st.sampled_from(["initialize", *FUZZED_METHODS]),
            "params": st.fixed_dictionaries(
                {"initializationOptions": st.dictionaries(st.just("token"), json_values)}
            )
            | params,
        }
    )
    framed = (
        messages.map(json.dumps)
        .map(str.encode)
        .map(lambda body: b"Content-Length: %d\r\n\r\n" % len(body) + body)
    )

    @settings(
        max_examples=count, database=None, suppress_health_check=list(HealthCheck), deadline=None
    )
    @given(framed | st.binary(max_size=64))
    def collect(data):
        drawn.append(data)

    collect()
    return drawn


async def test_fuzzed_first_messages_over_tcp_are_refused_and_the_right_client_is_served(
    tmp_path, workspace
):
    async with tcp_server(tmp_path) as server:
        for data in draw_first_messages(60):
            stranger = await RawConnection.open(server)
            stranger.writer.write(data)
            stranger.writer.write_eof()  # a stranger that hangs up after its first bytes
            answer = await asyncio.wait_for(stranger.reader.read(), 15)
            assert b'"result"' not in answer, (data, answer)
            stranger.close()
        client = await connect_client(server, workspace, {}, server.token)
        assert (await request(client, "pi/state", {}))["sessionId"]
        await client.shutdown_session()
        await client.stop()


async def test_a_second_server_on_the_same_workspace_reads_but_cannot_write(
    client, scripted_llm, workspace
):
    scripted_llm.enqueue(replies.text("Owned by the first server."))
    first = await request(client, "pi/prompt", {"text": "hello"})
    async with another_server(
        workspace, {"model": "openai/scripted", "apiBase": scripted_llm.base_url}
    ) as second:
        opened = await request(second, "pi/openSession", {"sessionId": first["sessionId"]})
        assert opened["readOnly"] is True
        tree = await request(second, "pi/tree", {"sessionId": first["sessionId"]})
        assert tree["leafId"] == first["leafId"]
        with pytest.raises(JsonRpcException) as raised:
            await request(second, "pi/prompt", {"sessionId": first["sessionId"], "text": "mine?"})
        assert raised.value.code == -32005 and "another process is writing" in raised.value.message


async def test_a_restarted_server_resumes_the_most_recent_session(client, scripted_llm, workspace):
    scripted_llm.enqueue(replies.text("Remember the number 42."))
    first = await request(client, "pi/prompt", {"text": "remember"})
    await client.shutdown_session()
    async with another_server(
        workspace, {"model": "openai/scripted", "apiBase": scripted_llm.base_url}
    ) as again:
        scripted_llm.enqueue(replies.text("It was 42."))
        result = await request(again, "pi/prompt", {"text": "what number?"})
        assert result["sessionId"] == first["sessionId"]
        assert "Remember the number 42." in json.dumps(scripted_llm.requests[-1]["messages"])


async def test_a_model_picked_for_a_session_is_kept_when_it_is_opened_again(
    client, scripted_llm, workspace
):
    scripted_llm.enqueue(replies.text("Picked."))
    await request(client, "pi/setModel", {"model": "openai/scripted-2"})
    first = await request(client, "pi/prompt", {"text": "hello"})
    assert scripted_llm.requests[-1]["model"] == "scripted-2"
    fork = await request(client, "pi/fork", {"entryId": first["leafId"]})
    assert (await request(client, "pi/state", {}))["model"]["model"] == "openai/scripted-2"
    await client.shutdown_session()
    async with another_server(
        workspace, {"model": "openai/scripted", "apiBase": scripted_llm.base_url}
    ) as again:
        opened = await request(again, "pi/openSession", {"sessionId": first["sessionId"]})
        assert opened["sessionId"] == first["sessionId"]
        state = await request(again, "pi/state", {})
        assert state["model"]["model"] == "openai/scripted-2"
        scripted_llm.enqueue(replies.text("Still picked."))
        await request(again, "pi/prompt", {"text": "again"})
        assert scripted_llm.requests[-1]["model"] == "scripted-2"
        await request(again, "pi/newSession", {})
        assert (await request(again, "pi/state", {}))["model"]["model"] == "openai/scripted"
    assert fork["parentSessionId"] == first["sessionId"]


HUGE_ID = "x" * 100_000
LOOKED_UP_FIELDS = {
    "session_id",
    "entry_id",
    "target_id",
    "to_id",
    "from_id",
    "before",
    "parent_id",
    "around_id",
    "path",
    "model",
    "level",
    "provider",
    "streaming_behavior",
}
"""Fields whose value the server looks up or checks (text a user writes is stored as it is)."""


def requests_with_a_huge_field() -> list[tuple[str, str, dict]]:
    """``(method, field, params)``: each looked-up field of each ``pi/*`` request 100,000
    characters long, the request's other required strings short."""
    import typing

    import attrs

    drawn = []
    for method, params_type in sorted(protocol.PARAMS_BY_METHOD.items()):
        fields = attrs.fields(attrs.resolve_types(params_type))
        # A Literal's first value, else a short string (a required `str | None` takes "x" too).
        required = {
            protocol.camel_case(field.name): next(
                (arg for arg in typing.get_args(field.type) if isinstance(arg, str)), "x"
            )
            for field in fields
            if field.default is attrs.NOTHING
        }
        for field in fields:
            if field.name in LOOKED_UP_FIELDS:
                name = protocol.camel_case(field.name)
                drawn.append((method, name, {**required, name: HUGE_ID}))
    return drawn


async def test_errors_quote_client_input_shortened(client):
    """A request naming an unknown session, entry, file or model gets an error that quotes the
    name's start and length, not the whole name (the fuzzed-requests test sent 2 MB ids)."""
    answers = {}
    for method, field, params in requests_with_a_huge_field():
        try:
            await asyncio.wait_for(client.protocol.send_request_async(method, params), 10)
        except JsonRpcException as error:
            answers[(method, field)] = error.message
    try:
        await client.protocol.send_request_async(HUGE_ID, {})
    except JsonRpcException as error:
        answers[("unknown", "method")] = error.message
    assert len(answers) >= 30, answers.keys()  # sessions, entries, files, values: all unknown
    too_long = {key: len(message) for key, message in answers.items() if len(message) > 400}
    assert not too_long
    shortened = "x" * 80 + "… (100,000 characters)"
    assert f"entry {shortened} not found" in answers[(protocol.NAVIGATE, "targetId")]
    assert f"no session {shortened}" in answers[(protocol.TREE, "sessionId")]
    assert shortened in answers[("unknown", "method")]
