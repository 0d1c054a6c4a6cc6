// The Sessions view: the workspace's saved sessions (`pi/sessions`), newest first, each with its
// name (or first message), date, size and message count; open, rename, export and delete
// (with a confirmation) from its context menu.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { SessionInfo } from '../protocol';
import { describeError, type PiServer } from '../server';

export const SESSIONS_VIEW_ID = 'pi.sessions';

export interface SessionItem {
  info: SessionInfo;
  current: boolean;
}

/** What a new listing changes in the rows shown: nothing, some rows in place, or the whole list. */
export type RefreshPlan = { kind: 'none' } | { kind: 'rows'; changed: number[] } | { kind: 'all' };

/**
 * Compares the rows shown with a new listing. Redrawing the whole list drops VS Code's handles
 * to its rows until they are fetched again, and a context-menu command chosen in that moment gets
 * no row: so the list is redrawn only when rows came, went or moved, and otherwise only the rows
 * whose text or mark changed.
 */
export function planRefresh(shown: readonly SessionItem[], listed: readonly SessionItem[]): RefreshPlan {
  if (shown.length !== listed.length || shown.some((item, index) => item.info.id !== listed[index].info.id)) {
    return { kind: 'all' };
  }
  const changed = shown.flatMap((item, index) =>
    item.current === listed[index].current && JSON.stringify(item.info) === JSON.stringify(listed[index].info) ? [] : [index],
  );
  return changed.length ? { kind: 'rows', changed } : { kind: 'none' };
}

function size(path: string): string {
  try {
    const bytes = fs.statSync(path).size;
    return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  } catch {
    return '?';
  }
}

export class SessionsProvider implements vscode.TreeDataProvider<SessionItem>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<SessionItem | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /** The items last shown (tests read them). */
  items: SessionItem[] = [];
  /** A listing fetched by `refresh` that the next `getChildren` shows instead of asking again. */
  private fetched: SessionItem[] | undefined;
  private shown = false;

  constructor(private readonly server: PiServer) {}

  /** Lists the sessions again and redraws what changed. */
  async refresh(): Promise<void> {
    if (!this.shown) return this.changed.fire(undefined);
    const listed = await this.list();
    const plan = planRefresh(this.items, listed);
    if (plan.kind === 'all') {
      this.fetched = listed;
      this.changed.fire(undefined);
    } else if (plan.kind === 'rows') {
      for (const index of plan.changed) {
        // The same object, updated: VS Code finds the row by it.
        Object.assign(this.items[index], listed[index]);
        this.changed.fire(this.items[index]);
      }
    }
  }

  /** The rows of the view, or none: for a command run from the palette instead of a row. */
  async pick(title: string): Promise<SessionItem | undefined> {
    const items = this.shown ? this.items : await this.list();
    const chosen = await vscode.window.showQuickPick(
      items.map((item) => ({ label: label(item.info), description: new Date(item.info.modified).toLocaleString(), item })),
      { title, matchOnDescription: true },
    );
    return chosen?.item;
  }

  async getChildren(element?: SessionItem): Promise<SessionItem[]> {
    if (element) return [];
    this.items = this.fetched ?? (await this.list());
    this.fetched = undefined;
    this.shown = true;
    return this.items;
  }

  getTreeItem(element: SessionItem): vscode.TreeItem {
    const { info } = element;
    const item = new vscode.TreeItem(label(info));
    const modified = new Date(info.modified).toLocaleString();
    item.description = `${modified} · ${size(info.path)} · ${info.messageCount} messages`;
    item.tooltip = `${info.name ? `${info.firstMessage}\n` : ''}${info.id}\n${info.path}`;
    item.iconPath = new vscode.ThemeIcon(element.current ? 'circle-filled' : 'comment-discussion');
    item.contextValue = 'piSession';
    item.id = info.id;
    item.command = { command: 'pi.sessions.open', title: 'Open', arguments: [element] };
    return item;
  }

  dispose(): void {
    this.changed.dispose();
  }

  private async list(): Promise<SessionItem[]> {
    try {
      const { sessions, currentSessionId } = await this.server.request('pi/sessions', {});
      return sessions.map((info) => ({ info, current: info.id === currentSessionId }));
    } catch (error) {
      this.server.output.appendLine(`Listing the sessions failed: ${describeError(error)}`);
      return [];
    }
  }
}

function label(info: SessionInfo): string {
  return info.name ?? (info.firstMessage || '(empty)');
}
