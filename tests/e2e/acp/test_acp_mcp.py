"""MCP servers over ACP, end to end: the stdio servers a client passes in ``session/new`` (as Zed
and CodeCompanion pass the user's) give the model their tools in the real ``pi-lsp acp`` process,
``initialize`` says which transports are taken (HTTP ones: ``test_acp_typescript_client.py``),
and ``/mcp login`` signs in to an OAuth-protected server with the page given as a link."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import httpx
from acp import text_block
from acp.schema import EnvVariable, HttpMcpServer, McpServerStdio, SseMcpServer, ToolCallStart

from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from tests.e2e.acp.support import acp_agent, saved_tool_results
from tests.e2e.test_mcp_oauth import oauth_server

MISBEHAVING = Path(__file__).resolve().parents[2] / "mcp" / "misbehaving_server.py"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"


async def test_stdio_servers_of_session_new_give_the_model_their_tools(workspace):
    async with ScriptedLLM() as llm, acp_agent(llm, workspace) as (connection, client, answer):
        assert answer.agent_capabilities.mcp_capabilities.http is True
        assert answer.agent_capabilities.mcp_capabilities.sse is False
        servers = [
            McpServerStdio(name="My Time", command=str(TIME_SERVER), args=[], env=[]),
            McpServerStdio(
                name="tools",
                command=sys.executable,
                args=[str(MISBEHAVING)],
                env=[EnvVariable(name="LITERAL", value="${NOT_EXPANDED}")],
            ),
            SseMcpServer(type="sse", name="remote", url="https://example.invalid/sse", headers=[]),
        ]
        session = await connection.new_session(cwd=str(workspace), mcp_servers=servers)
        llm.enqueue(
            replies.tool_calls(
                [
                    ("c1", "mcp__My_Time__get_current_time", {"timezone": "UTC"}),
                    ("c2", "mcp__tools__echo", {"text": "from acp"}),
                    ("c3", "mcp__tools__env", {"name": "LITERAL"}),
                ]
            ),
            replies.text("Both answered."),
        )
        result = await connection.prompt(
            session_id=session.session_id, prompt=[text_block("use the tools")]
        )
    assert result.stop_reason == "end_turn"
    declared = {tool["function"]["name"] for tool in llm.requests[0]["tools"]}
    assert {"mcp__My_Time__get_current_time", "mcp__tools__echo"} <= declared
    assert not any(name.startswith("mcp__remote") for name in declared)
    time_result, echo, env = saved_tool_results(workspace)
    assert not time_result["isError"] and '"timezone": "UTC"' in time_result["content"][0]["text"]
    assert echo["content"] == [{"type": "text", "text": "echo: from acp"}]
    # The client's values are passed as they are: no ${VAR} expansion.
    assert env["content"] == [{"type": "text", "text": "${NOT_EXPANDED}"}]
    assert len(client.of_type(ToolCallStart)) == 3


async def test_slash_mcp_shows_the_servers_and_a_failure_is_said_in_the_chat(workspace):
    failing = McpServerStdio(
        name="failing",
        command=sys.executable,
        args=["-c", "import sys; sys.stderr.write('token expired\\n'); sys.exit(1)"],
        env=[],
    )
    tools = McpServerStdio(name="tools", command=sys.executable, args=[str(MISBEHAVING)], env=[])
    async with ScriptedLLM() as llm, acp_agent(llm, workspace) as (connection, client, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[failing, tools])
        while "failed to start" not in client.text():
            await asyncio.sleep(0.05)
        assert 'MCP server "failing" failed to start: ' in client.text()
        assert "token expired" in client.text()
        while True:
            client.reset()
            await connection.prompt(session_id=session.session_id, prompt=[text_block("/mcp")])
            if "- tools: connected" in client.text():
                break
            await asyncio.sleep(0.05)
        status = client.text()
        assert "- tools: connected, 10 tools (10 direct) — ACP session/new" in status
        assert "- failing: failed" in status and "stderr: token expired" in status
        client.reset()
        await connection.prompt(
            session_id=session.session_id, prompt=[text_block("/mcp disable tools")]
        )
        assert client.text() == "MCP server tools: disabled."
        client.reset()
        await connection.prompt(session_id=session.session_id, prompt=[text_block("/mcp")])
        assert "- tools: disabled" in client.text()
    assert not llm.requests  # commands never reach the model


async def slash_mcp_login(connection, client, session_id: str) -> tuple[asyncio.Future, str]:
    """``/mcp login secure`` under way, and the authorization page its link names."""
    login = asyncio.ensure_future(
        connection.prompt(session_id=session_id, prompt=[text_block("/mcp login secure")])
    )
    while "Open this page" not in client.text():
        await asyncio.sleep(0.05)
    [page] = re.findall(r"\((http://[^)]+)\)", client.text())
    return login, page


async def test_slash_mcp_login_gives_the_page_as_a_link_or_takes_the_pasted_redirect(workspace):
    with oauth_server() as url:
        secure = HttpMcpServer(type="http", name="secure", url=url, headers=[])
        async with ScriptedLLM() as llm, acp_agent(llm, workspace) as (connection, client, _):
            session = await connection.new_session(cwd=str(workspace), mcp_servers=[secure])
            while "needs sign-in" not in client.text():
                await asyncio.sleep(0.05)
            assert "/mcp login secure" in client.text()
            client.reset()
            login, page = await slash_mcp_login(connection, client, session.session_id)
            async with httpx.AsyncClient(follow_redirects=True) as browser:
                assert "Signed in" in (await browser.get(page)).text
            await login
            assert "Signed in to MCP server secure: connected, 2 tools." in client.text()
            client.reset()
            await connection.prompt(
                session_id=session.session_id, prompt=[text_block("/mcp logout secure")]
            )
            assert client.text() == "Signed out of MCP server secure."

            # The browser on another machine cannot come back: its address is pasted.
            login, page = await slash_mcp_login(connection, client, session.session_id)
            assert "`/mcp login secure <redirected URL>`" in client.text()
            async with httpx.AsyncClient() as browser:  # on another machine: no redirect
                redirected = (await browser.get(page)).headers["location"]
            client.reset()
            await connection.prompt(
                session_id=session.session_id,
                prompt=[text_block(f"/mcp login secure {redirected}")],
            )
            await login  # both commands end signed in
            assert client.text().count("Signed in to MCP server secure: connected, 2 tools.") == 2
