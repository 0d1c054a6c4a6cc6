// The extension's commands (palette, keybindings, tree context menu). Their ids never clash with
// the `pi.<method>` commands the server registers through executeCommand (pi.prompt, pi.fork, …)
// nor with the views' own commands (pi.chat.focus, pi.tree.focus).
import * as vscode from 'vscode';
import type { ApiKeyStore } from './apiKeys';
import type { ChatController } from './chat/chatController';
import type { ChatViewProvider } from './chat/chatView';
import { contextTarget, forget, replace, restore, type ContextTarget } from './context/contextEdits';
import type { ContextView } from './context/contextView';
import { goBackWithFiles, type PreviewDocuments } from './files/restoreFiles';
import { showMcpServers } from './mcpServers';
import { removeApiKey, selectModel, setApiKey, useLocalServer } from './modelSetup';
import { ErrorCodes, THINKING_LEVELS } from './protocol';
import { describeError, errorCode, type PiServer } from './server';
import type { SessionController } from './session';
import { type SessionTreeProvider, TREE_VIEW_ID } from './tree/treeView';
import { entryKind } from './tree/treeModel';
import { searchTree } from './tree/treeSearch';
import { searchSessions } from './sessions/searchSessions';
import type { SessionItem, SessionsProvider } from './sessions/sessionsView';
import type { EntryNode, MoreNode } from './tree/treeWindow';

export interface CommandContext {
  server: PiServer;
  session: SessionController;
  chat: ChatController;
  chatView: ChatViewProvider;
  tree: SessionTreeProvider;
  previews: PreviewDocuments;
  keys: ApiKeyStore;
  sessions: SessionsProvider;
  contextView: ContextView;
}

/** Codes the user caused and can act on; everything else only goes to the output channel. */
const USER_FACING = new Set<number>([
  ErrorCodes.invalidParams,
  ErrorCodes.noSuchSession,
  ErrorCodes.noSuchEntry,
  ErrorCodes.notASession,
  ErrorCodes.sessionLocked,
  ErrorCodes.readOnly,
  ErrorCodes.writeFailed,
  ErrorCodes.nothingToCompact,
  ErrorCodes.busy,
  ErrorCodes.summaryFailed,
  ErrorCodes.noModel,
  ErrorCodes.filesNotRestored,
  ErrorCodes.checkpointMissing,
  ErrorCodes.noApiKey,
]);

async function guarded(what: string, server: PiServer, action: () => Promise<unknown>): Promise<void> {
  try {
    await action();
  } catch (error) {
    const code = errorCode(error);
    if (code === ErrorCodes.cancelled) return;
    if (code === ErrorCodes.nothingToCompact) {
      void vscode.window.showInformationMessage(`${what}: ${describeError(error)}`);
    } else if (code === undefined || USER_FACING.has(code)) {
      void vscode.window.showErrorMessage(`${what} failed: ${describeError(error)}`);
    } else {
      server.output.appendLine(`${what} failed: ${describeError(error)}`);
    }
  }
}

export function registerCommands(context: CommandContext): vscode.Disposable[] {
  const { server, session, chatView, tree } = context;
  const sessionParams = () => (session.sessionId ? { sessionId: session.sessionId } : {});
  const register = (id: string, what: string, action: (...args: never[]) => Promise<unknown>) =>
    vscode.commands.registerCommand(id, (...args: never[]) => guarded(what, server, () => action(...args)));

  const navigate = async (node: EntryNode | undefined) => {
    const target = node ?? (await pickEntry(tree, 'Navigate to…', context));
    if (target) await navigateTo(context, target);
  };
  const fork = async (node: EntryNode | undefined) => {
    const target = node ?? (await pickEntry(tree, 'Fork from…', context));
    if (!target) return;
    await session.whileSwitching(async () => {
      const result = await server.request('pi/fork', { ...sessionParams(), entryId: target.entry.id });
      await session.switchTo(result.sessionId);
    });
    void vscode.window.showInformationMessage(`Forked into a new session from ${entryKind(target.entry)} ${target.entry.id}.`);
  };

  return [
    register('pi.session.new', 'New session', async () => {
      await session.whileSwitching(async () => {
        const result = await server.request('pi/newSession', {});
        await session.switchTo(result.sessionId);
      });
      await chatView.reveal();
    }),
    register('pi.session.resume', 'Resume session', async () => {
      const picked = await pickSession(server);
      if (!picked) return;
      const result = await session.whileSwitching(async () => {
        const opened = await server.request('pi/openSession', { path: picked });
        await session.switchTo(opened.sessionId);
        return opened;
      });
      if (result.readOnly) void vscode.window.showWarningMessage('Another process is writing this session: it is open read-only.');
      await chatView.reveal();
    }),
    register('pi.session.rename', 'Rename session', async () => {
      const name = await vscode.window.showInputBox({ title: 'Rename the session', value: session.state?.name ?? '' });
      if (!name?.trim()) return;
      await server.request('pi/name', { ...sessionParams(), name: name.trim() });
      await session.refreshState();
    }),
    register('pi.chat.compact', 'Compact', async () => {
      const instructions = await vscode.window.showInputBox({
        title: 'Compact the session',
        prompt: 'What should the summary focus on? (optional; Enter to compact, Escape to cancel)',
        placeHolder: 'e.g. keep the decisions about the database schema',
      });
      if (instructions === undefined) return;
      const params = { ...sessionParams(), ...(instructions.trim() ? { instructions: instructions.trim() } : {}) };
      // Cancelling the notification cancels the request; the server leaves the session unchanged.
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Compacting the session…', cancellable: true },
        (_progress, token) => server.request('pi/compact', params, token),
      );
    }),
    register('pi.chat.abort', 'Stop', () => context.chat.abort()),
    register('pi.chat.open', 'Open chat', () => chatView.reveal()),
    register('pi.model.select', 'Select model', (provider?: string) => selectModel(context, provider)),
    register('pi.apiKey.set', 'Set API key', (provider?: string) => setApiKey(context, provider)),
    register('pi.apiKey.remove', 'Remove API key', () => removeApiKey(context)),
    register('pi.localServer.use', 'Use a local model server', () => useLocalServer(context)),
    register('pi.mcp.servers', 'MCP servers', () => showMcpServers(server, () => context.chat.refreshMcp())),
    register('pi.thinking.select', 'Set thinking level', async () => {
      const current = session.state?.thinkingLevel;
      const level = await vscode.window.showQuickPick(
        THINKING_LEVELS.map((name) => ({ label: name, description: name === current ? 'current' : undefined })),
        { title: 'Thinking level of the session' },
      );
      if (!level) return;
      await server.request('pi/setThinkingLevel', { ...sessionParams(), level: level.label });
      await session.refreshState();
    }),
    register('pi.tree.show', 'Show session tree', async () => {
      await vscode.commands.executeCommand(`${TREE_VIEW_ID}.focus`);
      await tree.refresh();
    }),
    register('pi.tree.refresh', 'Refresh the tree', () => tree.refresh()),
    register('pi.tree.loadMore', 'Load more of the tree', (node: MoreNode) => tree.loadMore(node)),
    register('pi.tree.search', 'Search the tree', async () => {
      const target = await pickEntry(tree, 'Search the session tree', context);
      if (!target) return;
      await vscode.commands.executeCommand(`${TREE_VIEW_ID}.focus`);
      await tree.jumpTo(target.entry.id);
    }),
    register('pi.tree.navigate', 'Navigate', () => navigate(undefined)),
    register('pi.tree.open', 'Navigate', (node: EntryNode) => navigate(node)),
    register('pi.tree.restore', 'Go back with the files', async (node: EntryNode) => {
      const label = `${entryKind(node.entry)} "${node.entry.preview.slice(0, 40)}"`;
      const result = await session.whileSwitching(async () => {
        const restored = await goBackWithFiles(context, node.entry.id, label);
        if (restored) await session.reloadHistory();
        return restored;
      });
      if (!result) return;
      if (result.editorText) {
        await chatView.reveal();
        context.chat.setInput(result.editorText);
      }
    }),
    register('pi.session.fork', 'Fork', () => fork(undefined)),
    register('pi.tree.fork', 'Fork', (node: EntryNode) => fork(node)),
    register('pi.tree.label', 'Label', async (node: EntryNode) => {
      const label = await vscode.window.showInputBox({
        title: `Label ${entryKind(node.entry)} ${node.entry.id}`,
        prompt: 'An empty label clears it',
        value: node.label ?? '',
      });
      if (label === undefined) return;
      await server.request('pi/label', { ...sessionParams(), entryId: node.entry.id, label: label.trim() || null });
    }),
    register('pi.tree.copyId', 'Copy id', async (node: EntryNode) => {
      await vscode.env.clipboard.writeText(node.entry.id);
      vscode.window.setStatusBarMessage(`Copied ${node.entry.id}`, 3000);
    }),
    register('pi.sessions.search', 'Search sessions', async () => {
      const hit = await searchSessions(server);
      if (!hit) return;
      await openSession(context, { path: hit.path }, hit.entryId ?? undefined);
    }),
    register('pi.sessions.refresh', 'Refresh the sessions', async () => context.sessions.refresh()),
    register('pi.sessions.open', 'Open session', async (row?: SessionItem) => {
      const item = row ?? (await context.sessions.pick('Open which session?'));
      if (item) await openSession(context, { path: item.info.path });
    }),
    register('pi.sessions.rename', 'Rename session', async (row?: SessionItem) => {
      const item = row ?? (await context.sessions.pick('Rename which session?'));
      if (!item) return;
      const name = await vscode.window.showInputBox({ title: 'Rename the session', value: item.info.name ?? '' });
      if (!name?.trim()) return;
      await server.request('pi/name', { sessionId: item.info.id, name: name.trim() });
      void context.sessions.refresh();
      if (item.info.id === session.sessionId) await session.refreshState();
    }),
    register('pi.sessions.export', 'Export session', async (row?: SessionItem) => {
      const item = row ?? (await context.sessions.pick('Export which session?'));
      if (!item) return;
      const format = await vscode.window.showQuickPick(
        [
          { label: 'HTML', detail: 'One page: the conversation and the tree, its branches switchable; works offline', format: 'html' as const },
          { label: 'Markdown', detail: 'The active path as text', format: 'markdown' as const },
          { label: 'JSONL', detail: 'The session file itself', format: 'jsonl' as const },
        ],
        { title: `Export "${item.info.name ?? item.info.firstMessage}"` },
      );
      if (!format) return;
      const result = await server.request('pi/exportSession', { sessionId: item.info.id, format: format.format });
      const open = await vscode.window.showInformationMessage(`Exported to ${result.path}`, 'Open');
      if (open) await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(result.path));
    }),
    register('pi.sessions.delete', 'Delete session', async (row?: SessionItem) => {
      const item = row ?? (await context.sessions.pick('Move which session to the trash?'));
      if (!item) return;
      const confirmed = await vscode.window.showWarningMessage(
        `Move the session "${item.info.name ?? item.info.firstMessage}" to the trash?`,
        { modal: true, detail: `${item.info.messageCount} messages · ${item.info.path}` },
        'Move to Trash',
      );
      if (confirmed !== 'Move to Trash') return;
      await server.request('pi/deleteSession', { sessionId: item.info.id });
      void context.sessions.refresh();
      if (item.info.id === session.sessionId) await session.whileSwitching(() => session.switchTo(undefined));
    }),
    register('pi.context.show', 'Show the context', () => context.contextView.show()),
    register('pi.context.forget', 'Remove from context', (arg: unknown) => withTarget(arg, (target) => forget(server, session, target))),
    register('pi.context.replace', 'Replace in context', (arg: unknown) => withTarget(arg, (target) => replace(server, session, target))),
    register('pi.context.restore', 'Restore in context', (arg: unknown) => withTarget(arg, (target) => restore(server, session, target))),
    register('pi.server.restart', 'Restart pi-lsp', () => server.restart()),
    register('pi.server.showOutput', 'Show output', async () => server.output.show()),
  ];
}

/** Opens a session (by path: hits of pi's own directory too) in the chat, and the tree at `entryId`. */
async function openSession(context: CommandContext, where: { path: string }, entryId?: string): Promise<void> {
  const { server, session, chatView, tree } = context;
  const opened = await session.whileSwitching(async () => {
    const result = await server.request('pi/openSession', where);
    await session.switchTo(result.sessionId);
    return result;
  });
  if (opened.readOnly) void vscode.window.showWarningMessage('Another process is writing this session: it is open read-only.');
  await chatView.reveal();
  await vscode.commands.executeCommand(`${TREE_VIEW_ID}.focus`);
  await tree.jumpTo(entryId ?? opened.leafId ?? '');
  void context.sessions.refresh();
}

/** Runs `action` on the entry a context menu or the Context view gave the command. */
async function withTarget(arg: unknown, action: (target: ContextTarget) => Promise<void>): Promise<void> {
  const target = contextTarget(arg);
  if (!target) throw new Error('no message chosen: use the chat, the session tree or the Context view');
  await action(target);
}

type SummaryChoice = { label: string; detail: string; summarize: boolean; ask: boolean };

async function navigateTo(context: CommandContext, node: EntryNode): Promise<void> {
  const { server, session, chat, chatView } = context;
  const choices: SummaryChoice[] = [
    { label: 'No summary', detail: 'Just move there; the branch you leave stays in the tree', summarize: false, ask: false },
    { label: 'Summarize', detail: 'Summarize the branch you leave and carry the summary along', summarize: true, ask: false },
    { label: 'Summarize with instructions…', detail: 'Say what the summary should focus on', summarize: true, ask: true },
  ];
  const choice = await vscode.window.showQuickPick(choices, {
    title: `Navigate to ${entryKind(node.entry)}: ${node.entry.preview.slice(0, 60)}`,
    placeHolder: 'Summarize the branch you are leaving?',
  });
  if (!choice) return;
  let instructions: string | undefined;
  if (choice.ask) {
    instructions = await vscode.window.showInputBox({ title: 'Branch summary', prompt: 'What should the summary focus on?' });
    if (instructions === undefined) return;
  }
  const params = {
    ...(session.sessionId ? { sessionId: session.sessionId } : {}),
    targetId: node.entry.id,
    summarize: choice.summarize,
    ...(instructions?.trim() ? { instructions: instructions.trim() } : {}),
  };
  const result = await session.whileSwitching(async () => {
    const navigated = choice.summarize
      ? await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: 'Summarizing the branch…', cancellable: true },
          (_progress, token) => server.request('pi/navigate', params, token),
        )
      : await server.request('pi/navigate', params);
    await session.reloadHistory();
    return navigated;
  });
  if (result.editorText) {
    await chatView.reveal();
    chat.setInput(result.editorText);
  }
}

/** An entry the user searches for (pi/treeSearch), starting from the rows the tree holds. */
async function pickEntry(tree: SessionTreeProvider, title: string, context: CommandContext): Promise<EntryNode | undefined> {
  const model = tree.current ?? (await tree.refresh());
  const loaded = model?.loadedEntries() ?? [];
  const row = await searchTree(context.server, context.session.sessionId, {
    title,
    initial: loaded.map((node) => node.entry),
    leafId: model?.leafId ?? null,
  });
  if (!row) return undefined;
  const shown = tree.current?.nodeOf(row.id);
  return shown ?? { kind: 'entry', entry: row, active: row.active, isLeaf: row.id === model?.leafId, label: row.label, expandable: row.expandable, branchStart: row.branchStart };
}

async function pickSession(server: PiServer): Promise<string | undefined> {
  const { sessions, currentSessionId } = await server.request('pi/sessions', {});
  if (sessions.length === 0) {
    void vscode.window.showInformationMessage('There is no saved session yet.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    sessions.map((info) => ({
      label: `${info.id === currentSessionId ? '$(circle-filled) ' : ''}${info.name ?? (info.firstMessage || '(empty)')}`,
      description: new Date(info.modified).toLocaleString(),
      detail: `${info.messageCount} messages · ${info.id}${info.name ? ` · ${info.firstMessage}` : ''}`,
      path: info.path,
    })),
    { title: 'Resume a session', matchOnDescription: true, matchOnDetail: true, placeHolder: 'Search sessions' },
  );
  return picked?.path;
}
