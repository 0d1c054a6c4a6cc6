// The chat WebviewView: its HTML (a strict CSP with a nonce, only the bundled script and
// stylesheet) and the message plumbing to the ChatController.
import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import type { ChatController } from './chatController';
import type { FromWebview } from './messages';

export const CHAT_VIEW_ID = 'pi.chat';

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const webview = view.webview;
    webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'out'), vscode.Uri.joinPath(this.extensionUri, 'media')],
    };
    webview.html = this.html(webview);
    const attachment = this.controller.attach((message) => void webview.postMessage(message));
    const received = webview.onDidReceiveMessage((message: FromWebview) => void this.controller.handle(message));
    this.controller.setVisible(view.visible);
    const visibility = view.onDidChangeVisibility(() => this.controller.setVisible(view.visible));
    view.onDidDispose(() => {
      attachment.dispose();
      received.dispose();
      visibility.dispose();
      if (this.view === view) this.view = undefined;
    });
  }

  /** Shows the chat (and focuses its input) through the view's own focus command, `pi.chat.focus`. */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  private html(webview: vscode.Webview): string {
    const nonce = crypto.randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'out', 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'chat.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
    ].join('; ');
    return chatHtml({ csp, nonce, script: script.toString(), style: style.toString() });
  }
}

/** The chat's page; the same markup is loaded by the webview's own browser tests. */
export function chatHtml(parts: { csp: string; nonce: string; script: string; style: string }): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${parts.csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${parts.style}">
<title>Pi Chat</title>
</head>
<body>
<header class="toolbar">
  <div class="toolbar-row" role="toolbar" aria-label="Chat actions">
    <button id="model" data-testid="model" class="link" title="Choose the model">no model</button>
    <button id="mcp" data-testid="mcp" class="link" title="MCP servers" hidden>MCP</button>
    <span class="spacer"></span>
    <button id="compact" data-testid="compact" class="secondary" title="Summarize older messages to free context">Compact</button>
    <button id="new-session" data-testid="new-session" class="secondary" title="Start a new session">New</button>
  </div>
  <div id="meter" data-testid="context-meter" class="meter" role="meter" aria-label="Context usage" aria-valuemin="0" aria-valuemax="100">
    <div class="meter-bar"><div id="meter-fill" class="meter-fill"></div><div id="meter-mark" data-testid="compaction-mark" class="meter-mark" hidden></div></div>
    <span id="meter-text" data-testid="context-text">no model</span>
  </div>
</header>
<div id="server-status" data-testid="server-status" class="notice warning" role="status" hidden>pi-lsp is not running. Run "Pi: Restart Server" or check the "pi-lsp" output.</div>
<section id="setup" data-testid="setup" class="setup" aria-label="Set up a model" hidden>
  <h2>Set up a model</h2>
  <p id="setup-reason" data-testid="setup-reason"></p>
  <ol>
    <li><button id="setup-key" data-testid="setup-key">Choose a provider and enter its API key…</button>
      <span class="setup-or">or</span>
      <button id="setup-local" data-testid="setup-local" class="secondary">Use a local model server…</button>
      <span class="setup-or">or</span>
      <button id="setup-editor-model" data-testid="setup-editor-model" class="secondary">Use a model VS Code provides (Copilot…)</button></li>
    <li><button id="setup-model" data-testid="setup-model" class="secondary">Pick a model…</button></li>
  </ol>
  <p class="setup-note">Keys stay in VS Code's secret storage; pi's own keys (environment, <code>auth.json</code>, <code>models.json</code>) work too.</p>
</section>
<main id="transcript" data-testid="transcript" role="log" aria-live="polite" aria-label="Conversation"></main>
<footer class="composer">
  <div id="completions" data-testid="completions" class="completions" role="listbox" hidden></div>
  <textarea id="input" data-testid="input" rows="3" aria-label="Message pi" placeholder="Ask pi… (Enter to send, Shift+Enter for a new line, / for skills)"></textarea>
  <div class="actions">
    <span id="status" data-testid="status" class="status" aria-live="polite"></span>
    <button id="stop" data-testid="stop" class="secondary" hidden title="Stop the running turn (Escape)">Stop</button>
    <button id="follow-up" data-testid="follow-up" class="secondary" hidden title="Queue after this turn (Alt+Enter)">Follow up</button>
    <button id="send" data-testid="send" title="Send (Enter)">Send</button>
  </div>
  <ul id="queue" data-testid="queue" class="queue" aria-label="Queued prompts" hidden></ul>
</footer>
<script nonce="${parts.nonce}" src="${parts.script}"></script>
</body>
</html>`;
}
