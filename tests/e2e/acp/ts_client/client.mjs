// A real ACP client: the official TypeScript SDK (@agentclientprotocol/sdk) drives `pi-lsp acp`
// through its ClientApp and buildSession().withSession() API, as an editor built on it would.
// Run by tests/e2e/acp/test_acp_typescript_client.py, which scripts the model; argv[2] is
// {"command": [...], "cwd": "...", "mcpServers"?: [...]}. With `mcpServers`, one session is
// built with them (withMcpServer; the SDK refuses servers the agent's mcpCapabilities do not
// advertise) and one turn runs. Prints one JSON report of what the client saw on stdout.
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const { command, cwd, mcpServers } = JSON.parse(process.argv[2]);
const agent = spawn(command[0], command.slice(1), { cwd, stdio: ["pipe", "pipe", "inherit"] });
const report = { fs: [], turns: {}, loaded: [], closed: [] };
let loading = null;

const app = client({ name: "pi-lsp-test" })
  .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
    report.fs.push(["read", params.path]);
    return { content: await readFile(params.path, "utf8") };
  })
  .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
    report.fs.push(["write", params.path]);
    await writeFile(params.path, params.content);
    return {};
  })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => ({
    outcome: { outcome: "selected", optionId: params.options[0].optionId },
  }))
  .onNotification(methods.client.session.update, ({ params }) => {
    if (params.sessionId === loading) report.loaded.push(params.update);
  });

// Every update of one turn, until its stop; `onUpdate` may act on them (a cancel).
async function turn(session, text, onUpdate = () => {}) {
  const updates = [];
  const answered = session.prompt(text);
  for (;;) {
    const message = await session.nextUpdate();
    if (message.kind === "stop") {
      await answered;
      return { updates, stopReason: message.stopReason };
    }
    updates.push(message.update);
    await onUpdate(message.update);
  }
}

const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
await app.connectWith(stream, async (ctx) => {
  const initialized = await ctx.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
  });
  report.agentName = initialized.agentInfo?.name;
  report.mcpCapabilities = initialized.agentCapabilities?.mcpCapabilities;
  if (mcpServers) {
    const builder = ctx.buildSession(cwd);
    for (const server of mcpServers) builder.withMcpServer(server);
    await builder.withSession(async (session) => {
      report.turns.mcp = await turn(session, "use the MCP tool");
    });
    return;
  }
  let sessionId;
  await ctx.buildSession(cwd).withSession(async (session) => {
    sessionId = session.sessionId;
    report.turns.edit = await turn(session, "fix add and write notes");
    let cancelled = false;
    report.turns.cancel = await turn(session, "count slowly", async (update) => {
      if (!cancelled && update.sessionUpdate === "agent_message_chunk") {
        cancelled = true;
        await ctx.notify(methods.agent.session.cancel, { sessionId });
      }
    });
  });
  loading = sessionId;
  await ctx.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
  loading = null;
  for (let time = 0; time < 2; time++) {
    // The second close answers -32002 (resource not found): the SDK makes that a success.
    report.closed.push(await ctx.request(methods.agent.session.close, { sessionId }));
  }
});
agent.stdin.end();
process.stdout.write(JSON.stringify(report) + "\n");
