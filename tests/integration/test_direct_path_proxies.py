"""The direct path through a proxy: a local proxy in the test sees the traffic. An ``https``
endpoint is reached through a ``CONNECT`` tunnel (TLS to the endpoint inside it, the key never
visible to the proxy), an ``http`` one by its absolute URL; ``NO_PROXY`` bypasses the proxy, the
proxy's credentials go as ``Proxy-Authorization``, and a proxy that refuses the tunnel is a
retryable connection error. A ``socks5://`` proxy, which the direct path does not speak, sends the
model through litellm."""

from __future__ import annotations

import asyncio
import base64
import shutil
import ssl
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.llm import direct, http_stream
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.failed_messages import is_retryable_error
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.scripted_llm import ScriptedLLM, replies

_SSE = (
    b'data: {"choices":[{"index":0,"delta":{"content":"through the tunnel"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


class Proxy:
    """An HTTP proxy on 127.0.0.1: tunnels ``CONNECT`` and relays absolute-form requests; keeps
    every request head it was sent (``refuse`` answers every ``CONNECT`` with 403)."""

    def __init__(self, refuse: bool = False) -> None:
        self.heads: list[str] = []
        self.refuse = refuse

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc_info: object) -> None:
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            writer.close()
            return
        text = head.decode("latin-1")
        self.heads.append(text)
        method, target, _ = text.split(" ", 2)
        if method == "CONNECT":
            if self.refuse:
                writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                writer.close()
                return
            host, _, port = target.rpartition(":")
            upstream_reader, upstream_writer = await asyncio.open_connection(host, int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            authority = target.split("/")[2]
            host, _, port = authority.rpartition(":")
            upstream_reader, upstream_writer = await asyncio.open_connection(host, int(port))
            upstream_writer.write(head)
        await asyncio.gather(
            _pipe(reader, upstream_writer), _pipe(upstream_reader, writer), return_exceptions=True
        )


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl makes the test's certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=DNS:localhost"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


class TlsEndpoint:
    """An https chat-completions endpoint on localhost that streams one fixed answer."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(cert, key)
        self.request_heads: list[str] = []

    async def __aenter__(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.context)
        return int(self._server.sockets[0].getsockname()[1])

    async def __aexit__(self, *exc_info: object) -> None:
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        self.request_heads.append(head)
        length = next(
            int(line.split(":")[1])
            for line in head.split("\r\n")
            if line.lower().startswith("content-length:")
        )
        await reader.readexactly(length)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            + f"Content-Length: {len(_SSE)}\r\n\r\n".encode()
            + _SSE
        )
        await writer.drain()
        writer.close()


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def request_to(api_base: str) -> CompletionRequest:
    model = ModelConfig(
        model="openai/test-model", provider="openai", model_id="test-model", api_base=api_base
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "hi", "timestamp": 1}]
    return CompletionRequest(model=model, system_prompt="s", messages=messages, timeout=10)


async def answer(request: CompletionRequest) -> dict[str, Any]:
    assert direct.serves(request.model)
    events = [event async for event in AssistantStream(request).events()]
    return events[-1].message


async def test_the_proxy_sees_the_tunnel_and_its_credentials_but_not_the_key(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate
    monkeypatch.setattr(http_stream, "_tls", [ssl.create_default_context(cafile=str(cert))])
    endpoint = TlsEndpoint(cert, key)
    proxy = Proxy()
    async with endpoint as port, proxy as proxy_address:
        monkeypatch.setenv("https_proxy", f"http://user:p%40ss@{proxy_address}")
        message = await answer(request_to(f"https://localhost:{port}/v1"))
    assert message["stopReason"] == "stop", message
    assert message["content"] == [{"type": "text", "text": "through the tunnel"}]
    [head] = proxy.heads
    assert head.startswith(f"CONNECT localhost:{port} HTTP/1.1\r\n")
    credentials = base64.b64encode(b"user:p@ss").decode()
    assert f"Proxy-Authorization: Basic {credentials}" in head
    assert "sk-test" not in head
    [endpoint_head] = endpoint.request_heads
    assert endpoint_head.startswith("POST /v1/chat/completions HTTP/1.1")
    assert "Bearer sk-test" in endpoint_head


async def test_http_goes_to_the_proxy_by_absolute_url(monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = Proxy()
    async with ScriptedLLM() as server, proxy as proxy_address:
        server.enqueue(replies.text("relayed"))
        monkeypatch.setenv("HTTP_PROXY", f"http://{proxy_address}")
        message = await answer(request_to(server.base_url))
    assert message["content"] == [{"type": "text", "text": "relayed"}], message
    [head] = proxy.heads
    assert head.startswith(f"POST {server.base_url}/chat/completions HTTP/1.1\r\n")


async def test_no_proxy_bypasses_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = Proxy()
    async with ScriptedLLM() as server, proxy as proxy_address:
        server.enqueue(replies.text("straight"))
        monkeypatch.setenv("HTTP_PROXY", f"http://{proxy_address}")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        message = await answer(request_to(server.base_url))
    assert message["content"] == [{"type": "text", "text": "straight"}]
    assert proxy.heads == []


async def test_a_refused_tunnel_is_a_retryable_connection_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with Proxy(refuse=True) as proxy_address:
        monkeypatch.setenv("HTTPS_PROXY", f"http://{proxy_address}")
        message = await answer(request_to("https://localhost:9/v1"))
    assert message["stopReason"] == "error"
    assert is_retryable_error(message), message["errorMessage"]


def test_a_socks_proxy_sends_the_model_through_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    assert not direct.serves(request_to("https://gateway.example/v1").model)
    monkeypatch.setenv("NO_PROXY", "gateway.example")
    assert direct.serves(request_to("https://gateway.example/v1").model)
