// The session tree view: `pi/tree` as a TreeView, refreshed on `tree_changed`, with the active
// path marked and expanded.
import * as vscode from 'vscode';
import { describeError, type PiServer } from '../server';
import type { SessionController } from '../session';
import { skillPreview } from '../chat/messageText';
import {
  buildTreeModel,
  containsActive,
  contextEditText,
  displayParents,
  entryIcon,
  entryKind,
  type TreeModel,
  type TreeNode,
} from './treeModel';

export const TREE_VIEW_ID = 'pi.tree';
const REFRESH_DELAY_MS = 100;

export class SessionTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private model: TreeModel | undefined;
  private parents = new Map<TreeNode, TreeNode | undefined>();
  private readonly changed = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private timer: NodeJS.Timeout | undefined;
  private readonly subscription: vscode.Disposable;
  private view: vscode.TreeView<TreeNode> | undefined;

  constructor(
    private readonly server: PiServer,
    private readonly session: SessionController,
  ) {
    this.subscription = session.onDidChangeTree(() => this.scheduleRefresh());
  }

  /** The view to keep the leaf visible in after each refresh. */
  attachView(view: vscode.TreeView<TreeNode>): void {
    this.view = view;
  }

  get current(): TreeModel | undefined {
    return this.model;
  }

  scheduleRefresh(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), REFRESH_DELAY_MS);
  }

  async refresh(): Promise<TreeModel | undefined> {
    const sessionId = this.session.sessionId;
    if (!sessionId) return undefined;
    try {
      this.model = buildTreeModel(await this.server.request('pi/tree', { sessionId }));
      this.parents = displayParents(this.model);
    } catch (error) {
      this.server.output.appendLine(`Could not load the session tree: ${describeError(error)}`);
    }
    this.changed.fire(undefined);
    this.revealLeaf();
    return this.model;
  }

  private revealLeaf(): void {
    const leaf = this.model?.leafId ? this.model.byId.get(this.model.leafId) : undefined;
    if (!leaf || !this.view?.visible) return;
    this.view.reveal(leaf, { select: false, focus: false, expand: true }).then(undefined, (error) =>
      this.server.output.appendLine(`Could not reveal the leaf: ${describeError(error)}`));
  }

  getChildren(node?: TreeNode): TreeNode[] {
    return node ? node.children : this.model?.roots ?? [];
  }

  getParent(node: TreeNode): TreeNode | undefined {
    return this.parents.get(node);
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    const { entry } = node;
    const state = node.children.length === 0
      ? vscode.TreeItemCollapsibleState.None
      : containsActive(node) ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed;
    const preview = skillPreview(entry.preview) || entryKind(entry);
    const item = new vscode.TreeItem(node.label ? `[${node.label}] ${preview}` : preview, state);
    // A node that turns into a branch point gets a new id, so VS Code does not keep it collapsed.
    item.id = `${this.model?.sessionId}:${entry.id}:${node.children.length > 0 ? 'branch' : 'entry'}`;
    const edited = contextEditText(entry);
    item.description = [entryKind(entry), edited, node.isLeaf ? 'leaf' : undefined].filter(Boolean).join(' · ');
    item.iconPath = new vscode.ThemeIcon(
      node.isLeaf ? 'debug-stackframe' : entry.contextEdit === 'removed' ? 'circle-slash' : entryIcon(entry),
      node.active && entry.contextEdit !== 'removed' ? new vscode.ThemeColor('charts.green') : undefined,
    );
    item.contextValue = node.active ? 'entry.active' : 'entry';
    item.tooltip = new vscode.MarkdownString(
      `**${entryKind(entry)}** \`${entry.id}\`${node.active ? ' — on the active path' : ''}${edited ? ` — ${edited} (a context edit)` : ''}\n\n${entry.timestamp ?? ''}\n\n${escapeMarkdown(entry.preview)}`,
    );
    item.accessibilityInformation = {
      label: `${entryKind(entry)}: ${entry.preview}${edited ? `, ${edited}` : ''}${node.active ? ', active path' : ''}${node.isLeaf ? ', leaf' : ''}`,
    };
    item.command = { command: 'pi.tree.open', title: 'Navigate Here…', arguments: [node] };
    return item;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.subscription.dispose();
    this.changed.dispose();
  }
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|]/g, '\\$&');
}
