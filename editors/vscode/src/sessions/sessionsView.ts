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

  constructor(private readonly server: PiServer) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(element?: SessionItem): Promise<SessionItem[]> {
    if (element) return [];
    try {
      const { sessions, currentSessionId } = await this.server.request('pi/sessions', {});
      this.items = sessions.map((info) => ({ info, current: info.id === currentSessionId }));
    } catch (error) {
      this.server.output.appendLine(`Listing the sessions failed: ${describeError(error)}`);
      this.items = [];
    }
    return this.items;
  }

  getTreeItem(element: SessionItem): vscode.TreeItem {
    const { info } = element;
    const item = new vscode.TreeItem(info.name ?? (info.firstMessage || '(empty)'));
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
}
