"""A frame whose Content-Length is wrong costs that frame (and a message it swallows), never the
connection: the server answers it with a Parse error and serves every whole frame after it.

Before, the bytes a wrong length left over ran into the next header line, no header matched
again, and the server, still running, never answered another request.
"""

from __future__ import annotations

import json

from tests.reliability.raw_lsp import frame


def state_request(request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "pi/state"}).encode()


async def test_a_frame_shorter_than_its_body_gets_a_parse_error_and_the_next_one_an_answer(
    raw_server,
):
    body = state_request(1)
    raw_server.send_bytes(b"Content-Length: %d\r\n\r\n" % (len(body) - 3) + body)
    await raw_server.drain()
    answer = await raw_server.request(2, "pi/state", {})

    assert "result" in answer
    assert [error["error"]["code"] for error in raw_server.null_id_errors] == [-32700]
    assert 1 not in raw_server.responses


async def test_a_frame_longer_than_its_body_loses_the_message_it_swallows_and_no_more(raw_server):
    body = state_request(1)
    swallowed = frame(state_request(2))
    raw_server.send_bytes(b"Content-Length: %d\r\n\r\n" % (len(body) + 10) + body + swallowed)
    await raw_server.drain()
    answer = await raw_server.request(3, "pi/state", {})

    assert "result" in answer
    assert [error["error"]["code"] for error in raw_server.null_id_errors] == [-32700]
    # The request in the frame decoded before the body turned out not to be JSON: not answered.
    assert not raw_server.responses


async def test_a_request_nested_in_another_is_not_answered_on_its_own(raw_server):
    inner = {"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": 5}
    answer = await raw_server.request(8, "textDocument/hover", {"inner": inner})

    assert answer["error"]["code"] == -32602
    await raw_server.request(9, "pi/state", {})
    assert not raw_server.responses and not raw_server.null_id_errors
