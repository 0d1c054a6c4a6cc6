"""Serving ACP over stdio: stdout carries ACP messages and nothing else.

The ACP stream gets its own duplicate of file descriptor 1; descriptor 1 itself and
``sys.stdout`` then point at stderr, so a library that prints (or a child process that inherits
stdout) can never corrupt the stream. Logs go to the log file and stderr.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import Any, cast

from acp import Agent, run_agent

from pi_lsp.acp.agent import PiAcpAgent
from pi_lsp.logs import LOG_FORMAT, SecretFilter

STDIO_LIMIT = 50 * 1024 * 1024
"""The longest message line read (images come base64-encoded in one line)."""


def serve(options: dict[str, Any] | None) -> None:
    """Serve ACP on stdin/stdout until the client closes stdin."""
    acp_output = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    stderr_handler = logging.StreamHandler(sys.stderr)
    stderr_handler.setLevel(logging.WARNING)
    stderr_handler.setFormatter(logging.Formatter(LOG_FORMAT))
    stderr_handler.addFilter(SecretFilter())  # keys stay out of stderr as out of the log file
    logging.getLogger().addHandler(stderr_handler)
    asyncio.run(_serve(PiAcpAgent(options), acp_output))


async def _serve(agent: PiAcpAgent, acp_output) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIO_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, acp_output
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    try:
        # The SDK routes by method name: methods pi-lsp does not implement (session modes,
        # config options, close, fork) answer "method not found".
        await run_agent(
            cast(Agent, agent),
            writer,
            reader,
            use_unstable_protocol=True,
            observers=[agent.outbox.unannounced.observe],
        )
    finally:
        await agent.stop_mcp_servers()
        agent.shutdown()
