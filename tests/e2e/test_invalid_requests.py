"""JSON that is no JSON-RPC 2.0 message gets JSON-RPC's Invalid Request, over stdio and TCP.

Before, the server logged such a body and dropped it, and the client waited for an answer for
ever. The answer carries the message's id when it can be read, null when not; an array (a
batch, which LSP does not have) gets one Invalid Request; a response is never answered.
"""

from __future__ import annotations

from tests.e2e.tcp_support import RawConnection, initialize_message, tcp_server
from tests.reliability.raw_lsp import frame

INVALID_REQUEST = -32600
NOT_MESSAGES = [  # a body, the id its answer carries, and what the answer's message names
    (b"{}", None, '"jsonrpc" must be "2.0"'),
    (b"[]", None, "batch"),
    (b"[1, 2, 3]", None, "batch"),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "pi/state"}]', None, "batch"),
    (b'"a string"', None, "a message is a JSON object"),
    (b"7", None, "a message is a JSON object"),
    (b"null", None, "a message is a JSON object"),
    (b'{"jsonrpc": "2.0"}', None, '"method"'),
    (b'{"jsonrpc": "2.0", "method": 5}', None, '"method" must be a string'),
    (b'{"jsonrpc": "2.0", "id": 4, "method": 5}', 4, '"method" must be a string'),
    (b'{"jsonrpc": "2.0", "id": 4, "method": null, "params": {}}', 4, '"method"'),
    (b'{"jsonrpc": "1.0", "id": "x", "method": "pi/state"}', "x", '"jsonrpc" must be "2.0"'),
    (b'{"id": 6, "method": "pi/state"}', 6, '"jsonrpc" must be "2.0"'),
    (b'{"jsonrpc": "2.0", "id": [1], "method": "pi/state"}', None, '"id" must be'),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "pi/state"}', None, '"id" must be'),
    (b'{"jsonrpc": "2.0", "id": null, "method": "pi/state"}', None, '"id" must be'),
]
RESPONSES = [  # answers from the client, even malformed ones, are never answered
    b'{"id": 99, "result": 1}',
    b'{"jsonrpc": "1.0", "id": 98, "error": {"code": 1, "message": "no"}}',
]


def check_answer(answer: dict, request_id, named: str) -> None:
    assert answer["id"] == request_id, answer
    assert answer["error"]["code"] == INVALID_REQUEST, answer
    assert named in answer["error"]["message"], answer


async def test_a_body_that_is_no_message_gets_invalid_request_over_stdio(raw_server):
    for number, (body, request_id, named) in enumerate(NOT_MESSAGES, start=100):
        raw_server.send(body)
        # Answered in the order read: once the next request is answered, so is the body before.
        assert "result" in await raw_server.request(number, "pi/state", {})
        if request_id is None:
            answers = list(raw_server.null_id_errors)
            raw_server.null_id_errors.clear()
        else:
            answers = [raw_server.responses.pop(request_id)]
        assert len(answers) == 1, (body, answers)
        assert "id" in answers[0], answers  # null when unreadable, but there
        check_answer(answers[0], request_id, named)
        assert not raw_server.responses, body


async def test_responses_and_objects_nested_in_params_are_not_answered_on_their_own(raw_server):
    for body in RESPONSES:
        raw_server.send(body)
    nested = {"jsonrpc": "2.0", "id": 10, "method": "pi/state", "params": {"x": {"jsonrpc": "2.0"}}}
    raw_server.send(nested)
    # The nested broken message is just JSON inside the params: the request is answered as itself.
    answer = await raw_server.answer(10)
    assert answer["id"] == 10
    assert "result" in await raw_server.request(100, "pi/state", {})
    assert not raw_server.responses and not raw_server.null_id_errors


async def test_a_body_that_is_no_message_gets_invalid_request_over_tcp(tmp_path, workspace):
    async with tcp_server(tmp_path) as server:
        connection = await RawConnection.open(server)
        try:
            connection.send(initialize_message(workspace, {"token": server.token}))
            assert "result" in await connection.receive(60)
            connection.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            for body, request_id, named in NOT_MESSAGES:
                connection.writer.write(frame(body))
                check_answer(await next_answer(connection), request_id, named)
            for body in RESPONSES:
                connection.writer.write(frame(body))
            connection.send({"jsonrpc": "2.0", "id": 100, "method": "pi/state", "params": {}})
            answer = await next_answer(connection)
            assert answer["id"] == 100 and "result" in answer  # nothing for the responses
        finally:
            connection.close()


async def test_a_first_tcp_message_that_is_no_message_gets_invalid_request(tmp_path):
    async with tcp_server(tmp_path) as server:
        connection = await RawConnection.open(server)
        try:
            connection.writer.write(frame(b"[1, 2, 3]"))
            answer = await connection.receive()
            assert answer["id"] is None and answer["error"]["code"] == INVALID_REQUEST
            assert await connection.is_closed_by_server()
        finally:
            connection.close()


async def next_answer(connection: RawConnection) -> dict:
    """The next answer, past the notifications and requests the server sends on its own."""
    while True:
        message = await connection.receive()
        if "method" in message:
            if "id" in message:  # a request from the server: answered so it never waits
                connection.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            continue
        return message
