// The chat's state on the extension host side: it reduces the shown session's events, resets on
// a session switch, sends what the webview needs, and turns the webview's requests into `pi/*`
// requests and commands.
import * as vscode from 'vscode';
import { USE_EDITOR_MODEL_COMMAND } from '../languageModels/command';
import { EDITOR_PROVIDER } from '../languageModels/models';
import { ErrorCodes, type PromptParams } from '../protocol';
import { describeError, errorCode, errorProvider, type PiServer } from '../server';
import type { SessionController } from '../session';
import { HISTORY_LIMIT, historyItems } from './history';
import type { Completion, FromWebview, McpSummary, ModelInfo, ServerStatus, ToWebview } from './messages';

/** While a server is still starting, the header asks again after this long. */
const MCP_RECHECK_MS = 1000;
import { applyNotification, type ChatState, emptyChat, hasRunningTool, isSeqGap, type LocalAction, reduce } from './reducer';
import { permissionQuestions, type QuestionPlace } from '../permissions';
import { ChangeDiffs } from './changeDiff';
import { WorkspaceFiles } from './workspaceFiles';

export class ChatController implements vscode.Disposable, QuestionPlace {
  private state: ChatState = emptyChat();
  private completions: Completion[] = [];
  private serverStatus: ServerStatus = { state: 'starting', generation: 0 };
  private post: ((message: ToWebview) => void) | undefined;
  private pendingInput: string | undefined;
  private earlierPages = 0;
  private mcp: McpSummary = { total: 0, connected: 0, connecting: 0, failed: 0 };
  private mcpRecheck: ReturnType<typeof setTimeout> | undefined;
  private readonly subscriptions: vscode.Disposable[];
  /** Whether the chat view is on screen (a hidden view cannot be answered in). */
  private visible = false;
  private readonly hidden = new vscode.EventEmitter<void>();
  readonly onDidHide = this.hidden.event;
  private readonly files = new WorkspaceFiles();
  private readonly diffs = new ChangeDiffs(this.files);

  constructor(
    private readonly server: PiServer,
    private readonly session: SessionController,
  ) {
    this.subscriptions = [
      server.onEvent((notification) => {
        if (notification.sessionId !== session.sessionId) return;
        if (isSeqGap(this.state, notification)) server.output.appendLine(`pi/event: a gap before seq ${notification.seq}`);
        this.state = applyNotification(this.state, notification);
        this.post?.({ type: 'event', notification });
        if (notification.event.type === 'agent_end') {
          this.files.forget();
          void this.refreshMcp();
        }
      }),
      session.onDidSwitch(({ sessionId, history }) => {
        this.apply({ type: 'local_reset', sessionId, items: history });
        // Another session shown: a question waiting in the card of the one left goes to the modal.
        if (!hasRunningTool(this.state)) this.hidden.fire();
        this.sendReset();
        void this.loadQueue(sessionId);
      }),
      session.onDidChangeState((state) => {
        this.apply({ type: 'local_context', usage: state.contextUsage });
        this.post?.({ type: 'model', model: this.modelInfo() });
      }),
      server.onResourcesChanged(() => {
        void this.loadCompletions();
        void this.refreshMcp();
      }),
      session.onDidShowAfterStart((generation) => {
        this.setServerStatus({ state: 'running', generation });
        void this.loadCompletions();
        void this.refreshMcp();
      }),
      server.onDidStop(() => this.setServerStatus({ ...this.serverStatus, state: 'stopped', problem: server.lastProblem })),
      permissionQuestions.onDidChange((question) => this.post?.({ type: 'question', question })),
      permissionQuestions.setPlace(this),
      this.hidden,
      this.diffs,
    ];
  }

  /** The webview is (re)created: it gets everything again. */
  attach(post: (message: ToWebview) => void): vscode.Disposable {
    this.post = post;
    return new vscode.Disposable(() => {
      if (this.post !== post) return;
      this.post = undefined;
      this.setVisible(false);
    });
  }

  /** The chat view was shown or hidden: a question waiting in a hidden card goes to the modal. */
  setVisible(visible: boolean): void {
    const was = this.visible;
    this.visible = visible;
    if (was && !visible) this.hidden.fire();
  }

  /** A permission question can be asked in the chat while it shows the running call's card. */
  canAsk(): boolean {
    return this.post !== undefined && this.visible && hasRunningTool(this.state);
  }

  get isRunning(): boolean {
    return this.state.running;
  }

  /** Scrolls the chat to the message of `entryId` (shown in the chat only when on its history page). */
  revealEntry(entryId: string): void {
    this.post?.({ type: 'revealEntry', entryId });
  }

  /** Puts text (a navigation's `editorText`) into the chat input, once there is a chat view. */
  setInput(text: string): void {
    if (!this.post) {
      this.pendingInput = text;
      return;
    }
    this.post({ type: 'editorText', text });
  }

  async handle(message: FromWebview): Promise<void> {
    switch (message.type) {
      case 'ready':
        return this.sendReset();
      case 'prompt':
        return this.prompt(message.text, message.behavior);
      case 'abort':
        return void vscode.commands.executeCommand('pi.chat.abort');
      case 'removeQueued':
        return this.changeQueue('pi/removeQueued', { id: message.id });
      case 'editQueued':
        return this.changeQueue('pi/editQueued', { id: message.id, text: message.text });
      case 'compact':
        return void vscode.commands.executeCommand('pi.chat.compact');
      case 'pickModel':
        return void vscode.commands.executeCommand('pi.model.select');
      case 'newSession':
        return void vscode.commands.executeCommand('pi.session.new');
      case 'setApiKey':
        // A model VS Code provides needs no key: the way out is another of VS Code's models.
        if (message.provider === EDITOR_PROVIDER) return void vscode.commands.executeCommand(USE_EDITOR_MODEL_COMMAND);
        return void vscode.commands.executeCommand('pi.apiKey.set', message.provider);
      case 'useLocalServer':
        return void vscode.commands.executeCommand('pi.localServer.use');
      case 'useEditorModel':
        return void vscode.commands.executeCommand('pi.languageModels.select');
      case 'pickMcp':
        return void vscode.commands.executeCommand('pi.mcp.servers');
      case 'loadEarlier':
        return this.loadEarlier(message.before);
      case 'openContext':
        return void vscode.commands.executeCommand('pi.context.show');
      case 'openFile':
        return this.files.open(message);
      case 'checkPaths':
        return this.post?.({ type: 'paths', existing: await this.files.check(message.paths) });
      case 'copyText':
        return vscode.env.clipboard.writeText(message.text);
      case 'answerQuestion':
        return permissionQuestions.answerInCard(message.id, message.answer);
      case 'openDiff':
        return this.diffs.open(message.path, message);
    }
  }

  dispose(): void {
    clearTimeout(this.mcpRecheck);
    for (const subscription of this.subscriptions) subscription.dispose();
  }

  /** Asks the server how its MCP servers are doing, for the header (again while one starts). */
  async refreshMcp(): Promise<void> {
    clearTimeout(this.mcpRecheck);
    try {
      const { servers } = await this.server.request('pi/mcp', {});
      const count = (state: string) => servers.filter((server) => server.state === state).length;
      this.mcp = { total: servers.length, connected: count('connected'), connecting: count('connecting'), failed: count('failed') };
      this.post?.({ type: 'mcp', summary: this.mcp });
      if (this.mcp.connecting > 0) this.mcpRecheck = setTimeout(() => void this.refreshMcp(), MCP_RECHECK_MS);
    } catch (error) {
      this.server.output.appendLine(`Could not read the MCP servers: ${describeError(error)}`);
    }
  }

  /**
   * Stop as pi's interactive Esc does: the queued prompts come back into the input first (before
   * what is typed there), so nothing typed is lost, then the turn is aborted (`pi/abort` alone
   * would keep them queued for the next prompt).
   */
  async abort(): Promise<void> {
    const params = this.session.sessionId ? { sessionId: this.session.sessionId } : {};
    try {
      const { steering, followUp } = await this.server.request('pi/clearQueue', params);
      const queued = [...steering, ...followUp];
      if (queued.length > 0) this.post?.({ type: 'restoreQueued', text: queued.join('\n\n') });
    } catch (error) {
      this.server.output.appendLine(`Could not take the queue back: ${describeError(error)}`);
    }
    await this.server.request('pi/abort', params);
  }

  /** The shown session's queue, after a switch (events only tell what changes from now on). */
  private async loadQueue(sessionId: string | null): Promise<void> {
    if (!sessionId) return;
    try {
      const { steering, followUp } = await this.server.request('pi/queue', { sessionId });
      if (sessionId === this.session.sessionId) this.apply({ type: 'local_queue', queue: { steering, followUp } });
    } catch (error) {
      this.server.output.appendLine(`Could not read the queue: ${describeError(error)}`);
    }
  }

  private async changeQueue(method: 'pi/removeQueued' | 'pi/editQueued', params: { id: string; text?: string }): Promise<void> {
    const sessionId = this.session.sessionId ?? undefined;
    try {
      if (method === 'pi/editQueued') await this.server.request(method, { id: params.id, text: params.text ?? '', sessionId });
      else await this.server.request(method, { id: params.id, sessionId });
    } catch (error) {
      // The agent took it meanwhile: the queue_update that said so already redrew the queue.
      if (errorCode(error) === ErrorCodes.invalidParams) this.server.output.appendLine(describeError(error));
      else void vscode.window.showWarningMessage(`Could not change the queued prompt: ${describeError(error)}`);
    }
  }

  private async prompt(text: string, behavior: 'steer' | 'followUp' | undefined): Promise<void> {
    if (!text.trim()) return;
    // Sent right after "New", a resume, a fork or a navigation: to where the user is going.
    await this.session.settled();
    const params: PromptParams = { text };
    if (this.session.sessionId) params.sessionId = this.session.sessionId;
    // While a turn runs the prompt waits in the queue (shown under the input, from queue_update).
    if (this.state.running) params.streamingBehavior = behavior ?? 'followUp';
    try {
      const result = await this.server.request('pi/prompt', params);
      if (result.stopReason === 'error' && result.errorMessage) this.server.output.appendLine(`turn error: ${result.errorMessage}`);
    } catch (error) {
      // Taken back from the queue (removed, or restored into the input by Stop): nothing failed.
      if (errorCode(error) !== ErrorCodes.promptTakenBack) this.showPromptError(error);
    }
  }

  /** The page of history before `before`, put on top of the chat. */
  private async loadEarlier(before: string): Promise<void> {
    const sessionId = this.session.sessionId;
    if (!sessionId) return;
    try {
      const page = await this.server.request('pi/messages', { sessionId, limit: HISTORY_LIMIT, before });
      // A navigation or another session since: the page belongs to a path no longer shown.
      const first = this.state.items[0];
      const offered = first?.kind === 'notice' && first.action?.kind === 'loadEarlier' ? first.action.before : undefined;
      if (sessionId !== this.session.sessionId || offered !== before) return;
      this.earlierPages += 1;
      this.apply({ type: 'local_prepend', items: historyItems(sessionId, page, `p${this.earlierPages}-`) });
    } catch (error) {
      this.server.output.appendLine(`Could not load earlier messages: ${describeError(error)}`);
    }
  }

  private showPromptError(error: unknown): void {
    const code = errorCode(error);
    const message = describeError(error);
    if (code === ErrorCodes.noApiKey) {
      // Shown once, in the chat, with the way to fix it.
      const provider = errorProvider(error);
      const label = provider === EDITOR_PROVIDER ? 'Choose a Model VS Code Provides…' : provider ? `Set the ${provider} API Key…` : 'Set API Key…';
      this.apply({ type: 'local_notice', level: 'error', text: message, topic: 'auth', action: { kind: 'setApiKey', label, provider } });
      return;
    }
    this.apply({ type: 'local_notice', level: 'error', text: message });
    if (code === ErrorCodes.noModel) {
      void vscode.window.showErrorMessage(message, 'Open Settings').then((choice) => {
        if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', 'pi.model');
      });
    } else if (code === ErrorCodes.readOnly || code === ErrorCodes.sessionLocked) {
      void vscode.window.showErrorMessage(message);
    }
  }

  private apply(action: LocalAction): void {
    this.state = reduce(this.state, action);
    this.post?.({ type: 'action', action });
  }

  private sendReset(): void {
    this.post?.({ type: 'reset', state: this.state, model: this.modelInfo(), completions: this.completions });
    this.post?.({ type: 'server', status: this.serverStatus });
    this.post?.({ type: 'mcp', summary: this.mcp });
    this.post?.({ type: 'question', question: permissionQuestions.current });
    if (this.post && this.pendingInput !== undefined) {
      this.post({ type: 'editorText', text: this.pendingInput });
      this.pendingInput = undefined;
    }
  }

  private setServerStatus(status: ServerStatus): void {
    this.serverStatus = status;
    this.post?.({ type: 'server', status });
  }

  private modelInfo(): ModelInfo {
    const state = this.session.state;
    const model = state?.model;
    return {
      model: model?.model ?? null,
      thinkingLevel: state?.thinkingLevel ?? null,
      provider: model?.provider ?? null,
      keyStatus: model?.keyStatus ?? null,
      known: state !== undefined,
    };
  }

  private async loadCompletions(): Promise<void> {
    try {
      const resources = await this.server.request('pi/resources', {});
      this.completions = [
        ...resources.skills.map((skill): Completion => ({ insert: `/skill:${skill.name}`, description: skill.description, kind: 'skill' })),
        ...resources.templates.map((template): Completion => ({ insert: `/${template.name}`, description: template.description, kind: 'template' })),
      ];
      this.post?.({ type: 'completions', items: this.completions });
    } catch (error) {
      this.server.output.appendLine(`Could not load skills and templates: ${describeError(error)}`);
    }
  }
}
