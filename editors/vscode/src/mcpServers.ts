// "Pi: MCP Servers…": every MCP server with its state, then what to do with the one picked
// (reconnect, enable or disable while the server runs, sign in to or out of an HTTP server, show
// its stderr tail, open its mcp.json).
import * as vscode from 'vscode';
import type { McpServerStatus } from './protocol';
import type { PiServer } from './server';

const STATE_ICONS: Record<McpServerStatus['state'], string> = {
  connected: '$(pass-filled)',
  connecting: '$(loading~spin)',
  failed: '$(error)',
  'needs-auth': '$(key)',
  disconnected: '$(debug-disconnect)',
  disabled: '$(circle-slash)',
};

interface ServerItem extends vscode.QuickPickItem {
  server: McpServerStatus;
}

interface ActionItem extends vscode.QuickPickItem {
  run: () => Promise<unknown>;
}

export function describeTools(server: McpServerStatus): string {
  const exposures = Object.entries(server.toolExposures)
    .map(([exposure, count]) => `${count} ${exposure}`)
    .join(', ');
  return `${server.toolCount} tools${exposures ? ` (${exposures})` : ''}`;
}

export async function showMcpServers(server: PiServer, changed: () => Promise<void>): Promise<void> {
  const { servers } = await server.request('pi/mcp', {});
  if (servers.length === 0) {
    const choice = await vscode.window.showInformationMessage(
      'No MCP servers are configured. pi-lsp reads ~/.pi/agent/mcp.json and, in trusted workspaces, .pi/mcp.json.',
      'Open the MCP docs',
    );
    if (choice) void vscode.env.openExternal(vscode.Uri.parse('https://github.com/pi-lsp/pi-lsp/blob/main/docs/mcp.md'));
    return;
  }
  const picked = await vscode.window.showQuickPick<ServerItem>(
    servers.map((status) => ({
      label: `${STATE_ICONS[status.state]} ${status.name}`,
      description: `${status.state === 'needs-auth' ? 'needs sign-in' : status.state} · ${describeTools(status)}`,
      detail: status.lastError && status.state !== 'connected' ? status.lastError : status.source,
      server: status,
    })),
    { title: 'MCP servers', placeHolder: 'Pick a server to reconnect, enable or disable it, or see its output' },
  );
  if (!picked) return;
  const action = await vscode.window.showQuickPick<ActionItem>(actionsFor(server, picked.server), {
    title: `MCP server ${picked.server.name}`,
  });
  if (!action) return;
  await action.run();
  await changed();
}

function actionsFor(server: PiServer, status: McpServerStatus): ActionItem[] {
  const name = status.name;
  const actions: ActionItem[] = [];
  if (status.state !== 'disabled') {
    actions.push({ label: '$(refresh) Reconnect', run: () => server.request('pi/mcpReconnect', { name }) });
    actions.push({
      label: '$(circle-slash) Disable',
      description: 'while pi-lsp runs; mcp.json is unchanged',
      run: () => server.request('pi/mcpSetEnabled', { name, enabled: false }),
    });
  } else {
    actions.push({ label: '$(play) Enable', run: () => server.request('pi/mcpSetEnabled', { name, enabled: true }) });
  }
  if (status.transport === 'http') actions.push(...signInActions(server, status));
  if (status.stderrTail || status.lastError) {
    actions.push({
      label: '$(output) Show its output',
      run: async () => {
        server.output.appendLine(`MCP server ${name} (${status.state}):`);
        if (status.lastError) server.output.appendLine(`  error: ${status.lastError}`);
        for (const line of status.stderrTail.split('\n').filter(Boolean)) server.output.appendLine(`  ${line}`);
        server.output.show(true);
      },
    });
  }
  if (status.scope !== 'acp') {
    actions.push({
      label: '$(go-to-file) Open its mcp.json',
      description: status.source,
      run: async () => vscode.window.showTextDocument(vscode.Uri.file(status.source)),
    });
  }
  return actions;
}

// Servers whose sign-in waits for the browser: their redirected URL can be pasted meanwhile.
const waitingSignIns = new Set<string>();

// OAuth: pi-lsp asks VS Code to open the authorization page (window/showDocument, external), and
// pi/mcpLogin answers once the browser came back and the server is connected. A browser on
// another machine cannot come back to this one's loopback port: its address bar is pasted then.
function signInActions(server: PiServer, status: McpServerStatus): ActionItem[] {
  const name = status.name;
  if (waitingSignIns.has(name)) return [pasteRedirectAction(server, name)];
  const signIn: ActionItem = {
    label: '$(key) Sign in',
    description: status.state === 'needs-auth' ? 'the server needs it' : 'again',
    run: async () =>
      vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `Signing in to MCP server ${name}: finish in your browser (elsewhere? Pi: MCP Servers… → Paste the redirected URL)…`,
        },
        async () => {
          waitingSignIns.add(name);
          try {
            const signedIn = await server.request('pi/mcpLogin', { name });
            void vscode.window.showInformationMessage(`Signed in to MCP server ${name}: ${describeTools(signedIn)}.`);
          } catch (error) {
            void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
          } finally {
            waitingSignIns.delete(name);
          }
        },
      ),
  };
  const signOut: ActionItem = {
    label: '$(sign-out) Sign out',
    description: 'forget its tokens (mcp-auth.json, shared with pi)',
    run: async () => {
      const { removed } = await server.request('pi/mcpLogout', { name });
      void vscode.window.showInformationMessage(
        removed ? `Signed out of MCP server ${name}.` : `MCP server ${name} had no sign-in.`,
      );
    },
  };
  return status.state === 'needs-auth' ? [signIn] : [signIn, signOut];
}

function pasteRedirectAction(server: PiServer, name: string): ActionItem {
  return {
    label: '$(clippy) Paste the redirected URL…',
    description: 'the browser could not come back to this machine',
    run: async () => {
      const redirectUrl = await vscode.window.showInputBox({
        title: `Sign in to MCP server ${name}`,
        prompt: 'The address the browser ended on after you approved (http://127.0.0.1:…/callback?code=…)',
        ignoreFocusOut: true,
      });
      if (!redirectUrl) return;
      try {
        await server.request('pi/mcpLogin', { name, redirectUrl });
      } catch (error) {
        void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
      }
    },
  };
}
