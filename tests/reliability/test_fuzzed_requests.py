"""10,000 fuzzed requests and garbage framing against one warm server.

Drawn with hypothesis: every ``pi/*`` method with wrong params (methods that write get params
that cannot be valid), unknown methods, standard LSP methods with wrong params, strings of up to
2 MB and params nested up to 100,000 deep; between them, frames that are not JSON, not UTF-8 or
not objects, and header lines that are junk. Every request must get an answer with its id (a
body too deep to decode gets JSON-RPC's Parse error, whose id cannot be known), the server must
keep serving, no session file may change, and closing the pipe must end the server.

``PI_LSP_FUZZ_REQUESTS`` sets the count; the test runs only when it is set (``make
test-reliability-full`` sends 10,000), see docs/reliability.md's open finding.
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

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_lsp import protocol
from pi_lsp.client import isolated_environment
from pi_lsp.session.session import Session

from .figures import record_figure
from .raw_lsp import RawLsp
from .servers import make_workspace

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


def body(request_id: int, method: str, params: object, rng: random.Random) -> bytes:
    """The request's JSON; one in 300 carries a huge string, one in fifty deep nesting."""
    roll = rng.random()
    if roll < 1 / 300:
        params = {rng.choice(FIELDS): "x" * rng.randint(100_000, 2_000_000)}
    elif roll < 1 / 300 + 0.02:
        depth = rng.choice([50, 500, 5_000, 100_000])
        nested = b"[" * depth + b"]" * depth
        head = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method}).encode()
        return head[:-1] + b',"params":{"path":' + nested + b"}}"
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    ).encode()


GARBAGE = [
    b"not json at all",
    b"\xff\xfe\x00 not utf-8",
    b"[1, 2, 3]",
    b'"a string"',
    b"{}",
    b'{"jsonrpc": "2.0"}',
    b'{"jsonrpc": "2.0", "method": 5}',
    b'{"jsonrpc": "1.0", "id": "x", "method": "pi/state"}',
    b"{" * 10,
]
JUNK_HEADERS = [b"Content-Type: text/plain\r\n", b"garbage\r\n", b"X-Whatever: 1\r\n"]


def digests(directory: Path) -> dict[str, str]:
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


@pytest.mark.skipif(
    "PI_LSP_FUZZ_REQUESTS" not in os.environ,
    reason="open finding (docs/reliability.md): the server sometimes stops answering mid-run on a "
    "busy machine; run it with make test-reliability-full",
)
@pytest.mark.timeout(900)
async def test_ten_thousand_fuzzed_requests_are_all_answered(tmp_path):
    rng = random.Random(17)
    workspace = make_workspace(tmp_path)
    sessions = workspace / ".pi" / "sessions"
    with Session.create(sessions, str(workspace)) as session:
        session.append_message({"role": "user", "content": "hello", "timestamp": 1})
    before = digests(sessions)
    drawn = draw(REQUESTS, 17)
    started = time.perf_counter()
    server = await RawLsp.start([sys.executable, "-m", "pi_lsp"], isolated_environment(tmp_path))
    try:
        await server.request(
            0,
            "initialize",
            {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}},
            120,
        )
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        codes: dict[int, int] = {}
        garbage_sent = 0
        for start in range(0, len(drawn), BATCH):
            ids = []
            for offset, (method, params) in enumerate(drawn[start : start + BATCH]):
                request_id = start + offset + 1
                if rng.random() < 0.02:
                    server.send(rng.choice(GARBAGE))
                    garbage_sent += 1
                if rng.random() < 0.01:
                    server.send_bytes(rng.choice(JUNK_HEADERS))
                    garbage_sent += 1
                server.send(body(request_id, method, params, rng))
                ids.append(request_id)
            await server.drain()
            for request_id in ids:
                answer = await server.answer_or_parse_error(request_id, 300)
                code = answer.get("error", {}).get("code", 0)
                assert code != -32603, (drawn[request_id - 1], answer)  # never an internal error
                codes[code] = codes.get(code, 0) + 1
        alive = await server.request("alive", "pi/state", {})
        assert "result" in alive
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
        garbage_frames=garbage_sent,
        error_codes=dict(sorted(codes.items())),
        seconds=round(time.perf_counter() - started, 1),
    )
