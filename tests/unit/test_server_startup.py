"""Start-up: ``initialize`` never imports litellm, and ``--tcp`` serves the same protocol."""

import json
import socket
import subprocess
import sys
import time

SCRIPT = """
import sys
from lsprotocol import types
from pi_lsp.handlers.lifecycle import on_initialize
from pi_lsp.server import build_server
server = build_server()
params = types.InitializeParams(
    capabilities=types.ClientCapabilities(),
    root_uri="file://" + sys.argv[1],
    initialization_options={"model": "openai/gpt-4o"},
)
on_initialize(server, params)
assert server.services is not None
print("litellm" in sys.modules, "openai" in sys.modules)
"""


def test_initialize_does_not_import_litellm(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]


def frame(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def read_message(stream) -> dict:
    headers = b""
    while not headers.endswith(b"\r\n\r\n"):
        headers += stream.recv(1)
    length = int(headers.split(b"Content-Length:")[1].split(b"\r\n")[0])
    body = b""
    while len(body) < length:
        body += stream.recv(length - len(body))
    return json.loads(body)


def test_tcp_serves_the_protocol(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pi_lsp",
            "--tcp",
            f"127.0.0.1:{port}",
            "--log-file",
            str(tmp_path / "log"),
            "--token-file",
            str(tmp_path / "token"),
        ]
    )
    try:
        for _ in range(300):  # the token file appears once the server listens
            if (tmp_path / "token").exists():
                break
            time.sleep(0.1)
        token = (tmp_path / "token").read_text().strip()
        connection = socket.create_connection(("127.0.0.1", port))
        with connection:
            connection.sendall(
                frame(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "capabilities": {},
                            "rootUri": tmp_path.as_uri(),
                            "initializationOptions": {"token": token},
                        },
                    }
                )
            )
            assert "capabilities" in read_message(connection)["result"]
            connection.sendall(
                frame({"jsonrpc": "2.0", "id": 2, "method": "pi/tree", "params": {}})
            )
            message = read_message(connection)
            while "id" not in message:
                message = read_message(connection)
            assert message["result"]["entries"][0]["type"] == "thinking_level_change"
    finally:
        server.terminate()
        server.wait(10)
