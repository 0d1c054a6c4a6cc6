// The Context view: a webview panel showing what the next request carries (`pi/context`): a bar
// stacked by kind and the parts largest first, each with its actions (open the file, show the
// message in the chat, forget, replace, restore). It follows the shown session: refreshed after
// every change of its state or tree, and on the "Refresh" button.
import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import type { ChatController } from '../chat/chatController';
import type { ChatViewProvider } from '../chat/chatView';
import type { ContextPart, ContextResult } from '../protocol';
import { describeError, type PiServer } from '../server';
import type { SessionController } from '../session';
import { basisText, barSegments, formatTokens, GROUP_LABELS, groupOf, headline, isEditable, partsLargestFirst } from './contextModel';

type FromContextView =
  | { type: 'refresh' }
  | { type: 'open'; path: string }
  | { type: 'show'; entryId: string }
  | { type: 'forget' | 'replace' | 'restore'; entryId: string; text?: string };

/** At most this many parts are listed (the rest is counted in the bar and the total). */
const LISTED_PARTS = 500;

export class ContextView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private readonly subscriptions: vscode.Disposable[];
  private refreshing: Promise<void> | undefined;
  private again = false;
  /** The result drawn last (for tests). */
  shown: ContextResult | undefined;

  constructor(
    private readonly server: PiServer,
    private readonly session: SessionController,
    private readonly chat: ChatController,
    private readonly chatView: ChatViewProvider,
  ) {
    this.subscriptions = [
      session.onDidChangeState(() => void this.refresh()),
      session.onDidChangeTree(() => void this.refresh()),
    ];
  }

  async show(): Promise<void> {
    if (this.panel) {
      this.panel.reveal();
    } else {
      const panel = vscode.window.createWebviewPanel('pi.context', 'Pi: Context', vscode.ViewColumn.Active, { enableScripts: true });
      panel.onDidDispose(() => {
        if (this.panel === panel) this.panel = undefined;
      });
      panel.webview.onDidReceiveMessage((message: FromContextView) => void this.handle(message));
      this.panel = panel;
    }
    await this.refresh();
  }

  /** Fetches `pi/context` again and redraws (one fetch at a time, the latest request wins). */
  refresh(): Promise<void> {
    if (!this.panel) return Promise.resolve();
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = this.load().finally(() => {
      this.refreshing = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.refreshing;
  }

  private async load(): Promise<void> {
    const panel = this.panel;
    const sessionId = this.session.sessionId;
    if (!panel || !sessionId) return;
    try {
      const context = await this.server.request('pi/context', { sessionId });
      this.shown = context;
      panel.webview.html = contextHtml(context, crypto.randomBytes(16).toString('base64'), panel.webview.cspSource);
    } catch (error) {
      this.server.output.appendLine(`Could not read the context: ${describeError(error)}`);
    }
  }

  private async handle(message: FromContextView): Promise<void> {
    switch (message.type) {
      case 'refresh':
        return this.refresh();
      case 'open':
        return void vscode.window.showTextDocument(vscode.Uri.file(message.path), { preview: true });
      case 'show':
        await this.chatView.reveal();
        this.chat.revealEntry(message.entryId);
        return;
      case 'forget':
        return void vscode.commands.executeCommand('pi.context.forget', { entryId: message.entryId });
      case 'replace':
        return void vscode.commands.executeCommand('pi.context.replace', { entryId: message.entryId, text: message.text });
      case 'restore':
        return void vscode.commands.executeCommand('pi.context.restore', { entryId: message.entryId });
    }
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    this.panel?.dispose();
  }
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function partRow(part: ContextPart): string {
  const actions: string[] = [];
  if (part.path) actions.push(button('open', 'Open', { path: part.path }));
  if (part.entryId) actions.push(button('show', 'Show in Chat', { entryId: part.entryId }));
  if (isEditable(part)) {
    if (part.contextEdit) actions.push(button('restore', 'Restore', { entryId: part.entryId ?? '' }));
    if (part.contextEdit !== 'removed') {
      actions.push(button('forget', 'Forget', { entryId: part.entryId ?? '' }));
      actions.push(button('replace', 'Replace…', { entryId: part.entryId ?? '', text: part.preview ?? '' }));
    }
  }
  const edited = part.contextEdit ? ` <span class="edited">${part.contextEdit === 'removed' ? 'removed from context' : 'replaced in context'}</span>` : '';
  const what = part.kind === 'message' ? part.role ?? 'message' : part.label;
  const preview = part.preview ? `<span class="preview">${escape(part.preview)}</span>` : part.kind !== 'message' && part.path ? `<span class="preview">${escape(part.path)}</span>` : '';
  return `<li class="part" data-testid="context-part" data-kind="${part.kind}" data-entry-id="${escape(part.entryId ?? '')}" data-context-edit="${part.contextEdit ?? ''}">
  <span class="swatch ${groupOf(part)}"></span>
  <span class="tokens" data-testid="context-part-tokens">${formatTokens(part.tokens)}</span>
  <span class="what">${escape(what)}${edited}</span>
  ${preview}
  <span class="actions">${actions.join('')}</span>
</li>`;
}

function button(action: string, label: string, data: Record<string, string>): string {
  // data-entry-id reads back as dataset.entryId (attribute names are lower case).
  const attributes = Object.entries(data)
    .map(([key, value]) => ` data-${key.replace(/[A-Z]/g, (upper) => `-${upper.toLowerCase()}`)}="${escape(value)}"`)
    .join('');
  return `<button class="link" data-action="${action}" data-testid="context-${action}"${attributes}>${label}</button>`;
}

/** The page of the Context view (no remote content; one inline script with a nonce). */
export function contextHtml(context: ContextResult, nonce: string, cspSource: string): string {
  const segments = barSegments(context);
  const bar = segments
    .map((segment) => `<div class="segment ${segment.group}" style="width:${segment.percent.toFixed(3)}%" title="${escape(`${GROUP_LABELS[segment.group]}: ${formatTokens(segment.tokens)}`)}"></div>`)
    .join('');
  const mark = context.compactAt !== null
    ? `<div class="mark" style="left:${((context.compactAt / Math.max(1, context.contextWindow)) * 100).toFixed(3)}%" title="Automatic compaction starts here"></div>`
    : '';
  const legend = segments
    .map((segment) => `<li><span class="swatch ${segment.group}"></span>${GROUP_LABELS[segment.group]} <b>${formatTokens(segment.tokens)}</b></li>`)
    .join('');
  const parts = partsLargestFirst(context);
  const listed = parts.slice(0, LISTED_PARTS).map(partRow).join('\n');
  const more = parts.length > LISTED_PARTS ? `<p class="note">${parts.length - LISTED_PARTS} smaller parts not listed.</p>` : '';
  const csp = `default-src 'none'; style-src ${cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}';`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<title>Pi: Context</title>
<style nonce="${nonce}">
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 8px 16px; }
h1 { font-size: 1.2em; margin: 0.4em 0; }
.bar { position: relative; display: flex; height: 14px; border: 1px solid var(--vscode-input-border, var(--vscode-panel-border)); background: var(--vscode-input-background); margin: 8px 0; }
.segment { height: 100%; }
.mark { position: absolute; top: -4px; bottom: -4px; width: 2px; background: var(--vscode-editorWarning-foreground); }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; vertical-align: middle; }
.system { background: #6c8ebf; } .files { background: #82b366; } .skills { background: #d6b656; } .tools { background: #9673a6; }
.extensions { background: #b85450; } .summaries { background: #d79b00; } .messages { background: var(--vscode-progressBar-background); } .provider { background: #999; }
ul { list-style: none; padding: 0; margin: 0; }
.legend li { display: inline-block; margin-right: 14px; }
.part { display: grid; grid-template-columns: 16px 56px minmax(80px, max-content) minmax(0, 1fr) auto; gap: 6px; align-items: baseline; padding: 3px 0; border-bottom: 1px solid var(--vscode-panel-border); }
.part[data-context-edit="removed"] { opacity: 0.6; }
.tokens { text-align: right; font-variant-numeric: tabular-nums; }
.preview { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: var(--vscode-descriptionForeground); }
.edited { color: var(--vscode-editorWarning-foreground); font-size: 0.9em; margin-left: 6px; }
.actions { white-space: nowrap; }
.note { color: var(--vscode-descriptionForeground); }
button.link { background: none; border: none; color: var(--vscode-textLink-foreground); cursor: pointer; padding: 0 4px; }
</style>
</head>
<body>
<h1>Context of the next request <button class="link" data-action="refresh" data-testid="context-refresh">Refresh</button></h1>
<p data-testid="context-total" data-total="${context.total}">${escape(headline(context))}</p>
<div class="bar" data-testid="context-bar" role="img" aria-label="${escape(headline(context))}">${bar}${mark}</div>
<ul class="legend">${legend}</ul>
<p class="note">${escape(basisText(context))} Forgetting or replacing a message changes what the model sees from the next request on; the message itself stays in the session file.</p>
<ul class="parts" data-testid="context-parts">
${listed}
</ul>
${more}
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
document.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]');
  if (!button) return;
  vscode.postMessage({ type: button.dataset.action, ...button.dataset });
});
</script>
</body>
</html>`;
}
