// The extension's entry point: wires the server, the session controller, the chat view, the
// session tree, the status bar and the commands, and restarts the server when its settings or
// the workspace trust change.
import * as vscode from 'vscode';
import { ApiKeyStore } from './apiKeys';
import { ChatController } from './chat/chatController';
import { CHAT_VIEW_ID, ChatViewProvider } from './chat/chatView';
import { registerCommands } from './commands';
import { ContextView } from './context/contextView';
import { PreviewDocuments } from './files/restoreFiles';
import { registerEditorModels } from './languageModels/command';
import { PiServer } from './server';
import { SessionController } from './session';
import { ContextStatusBar } from './statusBar';
import { SessionTreeProvider, TREE_VIEW_ID } from './tree/treeView';
import { SESSIONS_VIEW_ID, SessionsProvider } from './sessions/sessionsView';

let server: PiServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const keys = new ApiKeyStore(context.secrets);
  server = new PiServer(context.extensionPath, () => keys.all());
  const session = new SessionController(server);
  const chat = new ChatController(server, session);
  const chatView = new ChatViewProvider(context.extensionUri, chat);
  const tree = new SessionTreeProvider(server, session);
  const treeView = vscode.window.createTreeView(TREE_VIEW_ID, { treeDataProvider: tree, showCollapseAll: true });
  tree.attachView(treeView);
  const sessions = new SessionsProvider(server);
  const sessionsView = vscode.window.createTreeView(SESSIONS_VIEW_ID, { treeDataProvider: sessions });
  const statusBar = new ContextStatusBar();
  const contextView = new ContextView(server, session, chat, chatView);
  const previews = new PreviewDocuments();
  context.subscriptions.push(...registerEditorModels(server));

  context.subscriptions.push(
    server,
    session,
    chat,
    tree,
    treeView,
    sessions,
    sessionsView,
    statusBar,
    contextView,
    previews,
    session.onDidChangeState((state) => statusBar.update(state)),
    session.onDidChangeState((state) => (treeView.description = state.name ?? state.sessionId.slice(0, 8))),
    treeView.onDidChangeVisibility(({ visible }) => visible && void tree.refresh()),
    sessionsView.onDidChangeVisibility(({ visible }) => {
      if (visible) void sessions.refresh();
    }),
    session.onDidChangeState(() => {
      if (sessionsView.visible) void sessions.refresh();
    }),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chatView),
    ...registerCommands({ server, session, chat, chatView, tree, keys, previews, sessions, contextView }),
    // A key stored or removed (here or in another window) reaches the server at once.
    keys.onDidChange(() => void server?.sendCredentials()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('pi.server.path')) void server?.restart();
      // A server refused over an invalid setting starts once the settings change.
      else if (event.affectsConfiguration('pi') && server?.isStopped) void server.start();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void server?.restart()),
  );
  await server.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
