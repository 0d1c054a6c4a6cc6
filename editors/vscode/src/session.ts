// Which session the editor shows, and its latest `pi/state`. Everything that switches sessions
// (new, resume, fork, a restart) goes through `switchTo`, so the chat, the tree and the status bar
// follow along together.
import * as vscode from 'vscode';
import { HISTORY_LIMIT, historyItems } from './chat/history';
import type { ChatItem } from './chat/reducer';
import type { EventNotification, StateResult } from './protocol';
import type { TreeChangedEvent } from './tree/treeWindow';
import { describeError, type PiServer } from './server';

export interface SessionSwitch {
  sessionId: string;
  history: ChatItem[];
}

export class SessionController implements vscode.Disposable {
  private current: StateResult | undefined;
  private readonly switched = new vscode.EventEmitter<SessionSwitch>();
  private readonly stateChanged = new vscode.EventEmitter<StateResult>();
  private readonly treeChanged = new vscode.EventEmitter<TreeChangedEvent | undefined>();
  private readonly shownAfterStart = new vscode.EventEmitter<number>();
  /** The shown session changed (its history is loaded). */
  readonly onDidSwitch = this.switched.event;
  readonly onDidChangeState = this.stateChanged.event;
  /** The shown session's tree or leaf changed: with what changed, or undefined when another session is shown. */
  readonly onDidChangeTree = this.treeChanged.event;
  /** A server (re)start's session is shown: the start's generation. */
  readonly onDidShowAfterStart = this.shownAfterStart.event;
  private readonly subscriptions: vscode.Disposable[];
  /** The moves to another session or path under way (see whileSwitching); prompts wait for them. */
  private switching: Promise<unknown> = Promise.resolve();

  constructor(private readonly server: PiServer) {
    this.subscriptions = [
      // The chat reports a (re)started server only once its session is shown again: a prompt
      // sent before that reset would have its streamed answer wiped by it.
      server.onDidStart((generation) => void this.switchTo(undefined).finally(() => this.shownAfterStart.fire(generation))),
      server.onEvent((notification) => this.onEvent(notification)),
    ];
  }

  get sessionId(): string | undefined {
    return this.current?.sessionId;
  }

  get state(): StateResult | undefined {
    return this.current;
  }

  /** Shows `sessionId` (the server's current session when undefined): state, history, tree. */
  async switchTo(sessionId: string | undefined): Promise<void> {
    const state = await this.refreshState(sessionId);
    if (!state) return;
    this.switched.fire({ sessionId: state.sessionId, history: await this.loadHistory(state) });
    this.treeChanged.fire(undefined);
  }

  /**
   * Runs `action`, a move to another session or path (new, resume, fork, navigate: its request,
   * then the switch that shows the result). A prompt sent meanwhile waits for it (`settled`): it
   * belongs to the conversation the user is moving to, not to the one being left, and a reset
   * arriving after it would wipe its streamed answer.
   */
  whileSwitching<T>(action: () => Promise<T>): Promise<T> {
    const running = action();
    this.switching = Promise.allSettled([this.switching, running]);
    return running;
  }

  /** Resolves once no move started with `whileSwitching` is under way. */
  async settled(): Promise<void> {
    let current: Promise<unknown>;
    do {
      current = this.switching;
      await current;
    } while (current !== this.switching);
  }

  async refreshState(sessionId = this.sessionId): Promise<StateResult | undefined> {
    try {
      const state = await this.server.request('pi/state', sessionId ? { sessionId } : {});
      this.current = state;
      this.stateChanged.fire(state);
      return state;
    } catch (error) {
      this.server.output.appendLine(`Could not read the session state: ${describeError(error)}`);
      return undefined;
    }
  }

  /** After a navigation the same session shows another path: reload its history. */
  async reloadHistory(): Promise<void> {
    await this.switchTo(this.sessionId);
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    this.switched.dispose();
    this.stateChanged.dispose();
    this.treeChanged.dispose();
    this.shownAfterStart.dispose();
  }

  private async loadHistory(state: StateResult): Promise<ChatItem[]> {
    try {
      const transcript = await this.server.request('pi/messages', { sessionId: state.sessionId, limit: HISTORY_LIMIT });
      return historyItems(state.sessionId, transcript);
    } catch (error) {
      this.server.output.appendLine(`Could not load the conversation of ${state.sessionId}: ${describeError(error)}`);
      return [];
    }
  }

  private onEvent(notification: EventNotification): void {
    if (notification.sessionId !== this.sessionId) return;
    const type = notification.event.type;
    if (notification.event.type === 'tree_changed') this.treeChanged.fire(notification.event);
    if (type === 'agent_end' || type === 'compaction_end' || type === 'agent_start') void this.refreshState();
    // Each answer adds to the session's cost; a long turn of tool rounds shows it growing.
    else if (type === 'message_end' && notification.event.message.role === 'assistant') void this.refreshState();
    else if (type === 'branch_summary_end') void this.refreshState();
  }
}
