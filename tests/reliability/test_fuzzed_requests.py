"""10,000 fuzzed requests and garbage framing against one warm server.

Drawn with hypothesis: every ``pi/*`` method with wrong params (methods that write get params
that cannot be valid), unknown methods, standard LSP methods with wrong params, strings of up to
2 MB and params nested up to 100,000 deep; between them, frames that are not JSON, not UTF-8 or
no JSON-RPC 2.0 messages, header lines that are junk, and frames whose Content-Length is too
short or too long. Every request must get an answer with its id (a body too deep to decode, or
in a frame of the wrong length, gets JSON-RPC's Parse error, whose id cannot be known; a request
swallowed by a frame too long before it is never read), JSON that is no message must get Invalid
Request (with its id when it has one that can be read), the server must keep serving, no session
file may change, and closing the pipe must end the server.

Answers come in any order: a Parse error or an Invalid Request is sent as soon as its frame is
read, before the answers to slower requests in front of it. So a batch's answers with a null id
are counted by code, never matched to a request (matching the next one to whichever request was
awaited stalled this test once).

``PI_LSP_FUZZ_REQUESTS`` sets the count (``make test`` sends 2,000, ``make
test-reliability-full`` 10,000).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_lsp import protocol
from pi_lsp.client import isolated_environment
from pi_lsp.session.session import Session

from .figures import record_figure
from .raw_lsp import RawLsp, frame
from .servers import make_workspace
from .stalls import stacks

REQUESTS = int(os.environ.get("PI_LSP_FUZZ_REQUESTS", "2000"))
BATCH = 50
WRITERS = {
    protocol.LABEL,
    protocol.NAME,
    protocol.SET_MODEL,
    protocol.SET_THINKING_LEVEL,
    protocol.COMPACT,
    protocol.NAVIGATE,
}
SKIPPED = {protocol.PROMPT, protocol.NEW_SESSION, protocol.FORK, protocol.LOGIN, protocol.LOGOUT}
METHODS = sorted(set(protocol.PARAMS_BY_METHOD) - SKIPPED)
STANDARD_METHODS = [
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "workspace/executeCommand",
    "workspace/symbol",
]
FIELDS = ["text", "sessionId", "targetId", "entryId", "label", "name", "model", "level", "path"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
wrong_typed = st.integers() | st.lists(st.integers(), max_size=2)
params_for_any = json_values | st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=4)
# A writer never gets params it would accept: not an object, or one whose fields are all numbers
# or lists (every writer needs a string or has none it would take a number for).
params_for_writer = st.lists(json_values, max_size=3) | st.dictionaries(
    st.sampled_from(FIELDS), wrong_typed, min_size=1, max_size=3
)


def draw(count: int, seed: int) -> list[tuple[str, object]]:
    drawn: list[tuple[str, object]] = []
    method_and_params = st.one_of(
        st.sampled_from(sorted(set(METHODS) - WRITERS)).flatmap(
            lambda method: params_for_any.map(lambda params: (method, params))
        ),
        st.sampled_from(sorted(WRITERS)).flatmap(
            lambda method: params_for_writer.map(lambda params: (method, params))
        ),
        st.tuples(st.text(min_size=1, max_size=30) | st.just("pi/unknown"), params_for_any),
        st.tuples(st.sampled_from(STANDARD_METHODS), params_for_any),
    )

    @settings(
        max_examples=count,
        database=None,
        suppress_health_check=list(HealthCheck),
        deadline=None,
        derandomize=True,
    )
    @given(method_and_params)
    def collect(drawn_pair):
        drawn.append(drawn_pair)

    collect()
    random.Random(seed).shuffle(drawn)
    while len(drawn) < count:  # hypothesis may stop early once it has seen enough
        drawn.extend(drawn[: count - len(drawn)])
    return drawn[:count]


def body(request_id: int, method: str, params: object, rng: random.Random) -> tuple[bytes, bool]:
    """The request's JSON, and whether it is nested deep (one in fifty is; one in 300 carries a
    huge string instead)."""
    roll = rng.random()
    if roll < 1 / 300:
        params = {rng.choice(FIELDS): "x" * rng.randint(100_000, 2_000_000)}
    elif roll < 1 / 300 + 0.02:
        depth = rng.choice([50, 500, 5_000, 100_000])
        nested = b"[" * depth + b"]" * depth
        head = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method}).encode()
        return head[:-1] + b',"params":{"path":' + nested + b"}}", True
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode(), False


PARSE_ERROR = -32700
INVALID_REQUEST = -32600
GARBAGE = [  # a frame's body, and the error it gets with a null id
    (b"not json at all", PARSE_ERROR),
    (b"\xff\xfe\x00 not utf-8", PARSE_ERROR),
    (b"{" * 10, PARSE_ERROR),
    # JSON, but no JSON-RPC 2.0 message
    (b"[1, 2, 3]", INVALID_REQUEST),
    (b"[]", INVALID_REQUEST),
    (b'"a string"', INVALID_REQUEST),
    (b"{}", INVALID_REQUEST),
    (b'{"jsonrpc": "2.0"}', INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "method": 5}', INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": [1], "method": "pi/state"}', INVALID_REQUEST),
]
READABLE_ID_GARBAGE = b'{"jsonrpc": "1.0", "id": "garbage-%d", "method": "pi/state"}'
"""No JSON-RPC 2.0 message either, but its id can be read: its Invalid Request carries it."""
JUNK_HEADERS = [b"Content-Type: text/plain\r\n", b"garbage\r\n", b"X-Whatever: 1\r\n"]
WRONG_LENGTH = 0.01
"""The share of requests sent in a frame whose Content-Length is wrong (half too short, half too
long); each such frame gets a Parse error and the request in it, or after it, no answer."""
BATCH_SECONDS = 120
"""How long a batch may take to be answered before the test calls the server stuck."""


@attrs.define
class Batch:
    """What the server owes for one batch of frames."""

    answers: list[int] = attrs.Factory(list)
    """Requests that must be answered with their id."""
    deep: list[int] = attrs.Factory(list)
    """Requests nested deep: answered with their id, or with a Parse error if too deep to decode."""
    lost: list[int] = attrs.Factory(list)
    """Requests in or after a frame of the wrong length: never read, so never answered."""
    parse_errors: int = 0
    """Parse errors owed for garbage and wrong lengths (the deep requests' come on top)."""
    invalid_requests: int = 0
    """Invalid Requests with a null id owed for garbage."""
    invalid_with_id: list[str] = attrs.Factory(list)
    """Garbage owed an Invalid Request with its own id."""
    garbage_frames: int = 0


def send_garbage(server: RawLsp, batch: Batch, request_id: int, rng: random.Random) -> None:
    """Send a frame that is no request, and count the answer it is owed."""
    batch.garbage_frames += 1
    if rng.random() < 1 / len(GARBAGE):
        garbage_id = f"garbage-{request_id}"
        server.send(READABLE_ID_GARBAGE % request_id)
        batch.invalid_with_id.append(garbage_id)
        return
    garbage, code = rng.choice(GARBAGE)
    server.send(garbage)
    if code == PARSE_ERROR:
        batch.parse_errors += 1
    else:
        batch.invalid_requests += 1


def send_request(server: RawLsp, batch: Batch, request_id: int, message: bytes, deep: bool, rng):
    """Send one request: mostly in a proper frame, sometimes in a frame of the wrong length."""
    roll = rng.random()
    if roll < WRONG_LENGTH / 2:
        # Too short: the cut body is not JSON (Parse error); the reader skips the rest of it.
        short = rng.randint(1, len(message) - 1)
        server.send_bytes(b"Content-Length: %d\r\n\r\n" % short + message)
        batch.lost.append(request_id)
    elif roll < WRONG_LENGTH:
        # Too long: a small frame swallows the start of this request's frame, which is lost.
        swallowing = json.dumps({"jsonrpc": "2.0", "id": -request_id, "method": "pi/state"})
        framed = frame(message)
        extra = rng.randint(1, len(framed) - 1)
        length = len(swallowing) + extra
        server.send_bytes(b"Content-Length: %d\r\n\r\n" % length + swallowing.encode() + framed)
        batch.lost.append(request_id)
    else:
        server.send(message)
        (batch.deep if deep else batch.answers).append(request_id)
        return
    batch.parse_errors += 1
    batch.garbage_frames += 1


def digests(directory: Path) -> dict[str, str]:
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


@pytest.mark.timeout(max(600, REQUESTS // 10))  # a batch not answered fails in BATCH_SECONDS
async def test_ten_thousand_fuzzed_requests_are_all_answered(tmp_path):
    rng = random.Random(17)
    workspace = make_workspace(tmp_path)
    sessions = workspace / ".pi" / "sessions"
    with Session.create(sessions, str(workspace)) as session:
        session.append_message({"role": "user", "content": "hello", "timestamp": 1})
    before = digests(sessions)
    started = time.perf_counter()
    drawn = draw(REQUESTS, 17)
    drawing_seconds = time.perf_counter() - started
    started = time.perf_counter()
    server = await RawLsp.start([sys.executable, "-m", "pi_lsp"], isolated_environment(tmp_path))
    codes: dict[int, int] = {}
    null_id_codes: dict[int, int] = {}
    """Answers to what was no request (Parse errors, Invalid Requests), by code."""
    garbage_frames = lost = 0
    try:
        await server.request(
            0,
            "initialize",
            {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}},
            120,
        )
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        for start in range(0, len(drawn), BATCH):
            batch = Batch()
            for offset, (method, params) in enumerate(drawn[start : start + BATCH]):
                request_id = start + offset + 1
                if rng.random() < 0.02:
                    send_garbage(server, batch, request_id, rng)
                if rng.random() < 0.01:
                    server.send_bytes(rng.choice(JUNK_HEADERS))
                    batch.garbage_frames += 1
                message, deep = body(request_id, method, params, rng)
                send_request(server, batch, request_id, message, deep, rng)
            await server.drain()
            await answered(server, batch, drawn, tmp_path)
            for request_id in batch.answers + batch.deep:
                answer = server.responses.pop(request_id, None)
                if answer is None:
                    continue  # too deep to decode: the Parse error counted in answered()
                code = answer.get("error", {}).get("code", 0)
                assert code != -32603, (drawn[request_id - 1], answer)  # never an internal error
                codes[code] = codes.get(code, 0) + 1
            for garbage_id in batch.invalid_with_id:
                assert server.responses.pop(garbage_id)["error"]["code"] == INVALID_REQUEST
                null_id_codes[INVALID_REQUEST] = null_id_codes.get(INVALID_REQUEST, 0) + 1
            for error in server.null_id_errors:
                code = error["error"]["code"]
                null_id_codes[code] = null_id_codes.get(code, 0) + 1
            server.null_id_errors.clear()
            garbage_frames += batch.garbage_frames
            lost += len(batch.lost)
        alive = await server.request("alive", "pi/state", {})
        assert "result" in alive
        # Nothing answered twice, nothing answered that was never read, no Parse error late.
        assert not server.responses and not server.null_id_errors, (
            server.responses.keys(),
            server.null_id_errors,
        )
        server.process.stdin.close()
        await asyncio.wait_for(server.process.wait(), 5)
    finally:
        if server.process.returncode is None:
            server.process.kill()
            await server.process.wait()
    assert digests(sessions) == before
    record_figure(
        "fuzzed requests",
        requests=len(drawn),
        answered=sum(codes.values()),
        garbage_frames=garbage_frames,
        parse_errors=null_id_codes.get(PARSE_ERROR, 0),
        invalid_requests=null_id_codes.get(INVALID_REQUEST, 0),
        lost_to_wrong_lengths=lost,
        answers_by_code=dict(sorted(codes.items())),
        drawing_seconds=round(drawing_seconds, 1),
        seconds=round(time.perf_counter() - started, 1),
    )


async def answered(
    server: RawLsp, batch: Batch, drawn: list[tuple[str, object]], tmp_path: Path
) -> None:
    """Wait until the batch is answered: every request by its id, each deep one by its id or by
    a Parse error, and the Parse errors the garbage is owed. Answers come in any order, and a
    Parse error names no request, so they are counted, not matched. A batch that is not
    answered in time fails with what is missing and the server's threads."""

    def parse_errors() -> int:
        return sum(error["error"]["code"] == PARSE_ERROR for error in server.null_id_errors)

    def invalid_requests() -> int:
        return sum(error["error"]["code"] == INVALID_REQUEST for error in server.null_id_errors)

    def settled() -> bool:
        unanswered_deep = sum(request_id not in server.responses for request_id in batch.deep)
        return (
            parse_errors() - batch.parse_errors >= unanswered_deep
            and invalid_requests() >= batch.invalid_requests
            and all(
                request_id in server.responses
                for request_id in batch.answers + batch.invalid_with_id
            )
        )

    try:
        await server.wait_until(settled, BATCH_SECONDS)
    except TimeoutError:
        missing: list[object] = [
            (request_id, drawn[request_id - 1][0])
            for request_id in batch.answers + batch.deep
            if request_id not in server.responses
        ]
        missing += [garbage for garbage in batch.invalid_with_id if garbage not in server.responses]
        pytest.fail(
            f"no answer in {BATCH_SECONDS} s to {missing} ({parse_errors()} Parse errors, "
            f"{batch.parse_errors} owed to garbage; {invalid_requests()} Invalid Requests of "
            f"{batch.invalid_requests}; deep requests: {batch.deep}); the stacks:\n"
            f"{stacks(tmp_path)}"
        )
    unanswered_deep = sum(request_id not in server.responses for request_id in batch.deep)
    assert parse_errors() == batch.parse_errors + unanswered_deep, (
        "more Parse errors than frames that were not JSON",
        server.null_id_errors,
    )
    assert invalid_requests() == batch.invalid_requests, (
        "more Invalid Requests than frames that were no message",
        server.null_id_errors,
    )
    assert len(server.null_id_errors) == parse_errors() + invalid_requests(), server.null_id_errors
