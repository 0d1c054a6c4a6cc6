// The session tree view, lazy as VS Code's TreeDataProvider is meant to be: the first screen is
// `pi/treeWindow` (the active path, other branches and earlier entries collapsed to counts), a
// branch's rows come from `pi/treeChildren` when it is expanded or a "⋯ N earlier entries" row is
// clicked, and each `tree_changed` event is patched in (a missed one refetches the window). So a
// session of 100k entries shows as fast as a small one, and the view holds only what was shown.
import * as vscode from 'vscode';
import { describeError, type PiServer } from '../server';
import type { SessionController } from '../session';
import { skillPreview } from '../chat/messageText';
import { contextEditText, entryIcon, entryKind } from './treeModel';
import { type EntryNode, type MoreNode, moreText, TREE_PAGE, type TreeChangedEvent, type TreeNode, TreeWindowModel } from './treeWindow';

export const TREE_VIEW_ID = 'pi.tree';
const REFRESH_DELAY_MS = 100;

export class SessionTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private model: TreeWindowModel | undefined;
  private readonly changed = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private timer: NodeJS.Timeout | undefined;
  private readonly subscription: vscode.Disposable;
  private view: vscode.TreeView<TreeNode> | undefined;
  /** Events that arrived while a window was being fetched: applied to it when it comes. */
  private pending: TreeChangedEvent[] | undefined;
  /** Each window fetch gets a ticket: only the latest one's window is shown. */
  private fetches = 0;
  /** How many windows were fetched because the events could not be followed (for tests). */
  resyncs = 0;

  constructor(
    private readonly server: PiServer,
    private readonly session: SessionController,
  ) {
    this.subscription = session.onDidChangeTree((event) => (event ? this.onTreeChanged(event) : this.scheduleRefresh()));
  }

  /** The view to keep the leaf visible in after each refresh. */
  attachView(view: vscode.TreeView<TreeNode>): void {
    this.view = view;
  }

  get current(): TreeWindowModel | undefined {
    return this.model;
  }

  scheduleRefresh(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), REFRESH_DELAY_MS);
  }

  /** Fetches the window around `targetId` (default: the leaf) and shows it in place of the model. */
  async refresh(targetId?: string): Promise<TreeWindowModel | undefined> {
    const sessionId = this.session.sessionId;
    if (!sessionId) return undefined;
    const ticket = ++this.fetches;
    this.pending ??= [];
    try {
      const window = await this.server.request('pi/treeWindow', { sessionId, limit: TREE_PAGE, ...(targetId ? { targetId } : {}) });
      const model = new TreeWindowModel(window);
      await this.fillSmallLevels(model);
      if (ticket !== this.fetches) return this.model;
      const queued = this.pending ?? [];
      this.pending = undefined;
      this.model = model;
      for (const event of queued) if (model.applyChange(event) === 'resync') return this.resync();
    } catch (error) {
      if (ticket !== this.fetches) return this.model;
      this.pending = undefined;
      this.server.output.appendLine(`Could not load the session tree: ${describeError(error)}`);
    }
    this.changed.fire(undefined);
    if (targetId) this.reveal(this.model?.nodeOf(targetId), true);
    else this.reveal(this.model?.nodeOf(this.model.leafId), false);
    return this.model;
  }

  /**
   * The window holds only the path's row on the levels above the target; some of those levels are
   * fetched whole (TreeWindowModel.levelsToFill), so a small session shows as it always did, every
   * branch in sight, and a big one the branches next to the path.
   */
  private async fillSmallLevels(model: TreeWindowModel): Promise<void> {
    const levels = model.levelsToFill();
    const results = await Promise.all(levels.map((parentId) =>
      this.server.request('pi/treeChildren', { sessionId: model.sessionId, parentId, offset: 0, limit: TREE_PAGE })));
    for (const result of results) if (result.version === model.version) model.mergeLevel(result.level);
  }

  /** Shows an entry found by a search: the window around it, the entry selected. */
  async jumpTo(entryId: string): Promise<EntryNode | undefined> {
    const model = await this.refresh(entryId);
    return model?.nodeOf(entryId);
  }

  /** Fetches the rows a "⋯ N more" row stands for. */
  async loadMore(node: MoreNode): Promise<void> {
    const model = this.model;
    if (!model) return;
    try {
      const result = await this.server.request('pi/treeChildren', model.pageParams(node));
      if (model !== this.model) return;
      if (result.version !== model.version) {
        await this.resync();
        return;
      }
      model.mergeLevel(result.level);
      this.changed.fire(model.parentOf(node));
    } catch (error) {
      this.server.output.appendLine(`Could not load more of the session tree: ${describeError(error)}`);
    }
  }

  private onTreeChanged(event: TreeChangedEvent): void {
    if (this.pending) {
      this.pending.push(event);
      return;
    }
    const model = this.model;
    if (!model) return this.scheduleRefresh();
    const leafBefore = model.leafId;
    const outcome = model.applyChange(event);
    if (outcome === 'resync') {
      void this.resync();
    } else if (outcome === 'patched') {
      this.changed.fire(undefined);
      if (model.leafId !== leafBefore) this.reveal(model.nodeOf(model.leafId), false);
    }
  }

  private resync(): Promise<TreeWindowModel | undefined> {
    this.resyncs += 1;
    this.server.output.appendLine(`Session tree: fetching the window again (resync ${this.resyncs})`);
    return this.refresh();
  }

  private reveal(node: EntryNode | undefined, select: boolean): void {
    if (!node || !this.view?.visible) return;
    this.view.reveal(node, { select, focus: select, expand: true }).then(undefined, (error) =>
      this.server.output.appendLine(`Could not reveal ${node.entry.id}: ${describeError(error)}`));
  }

  async getChildren(node?: TreeNode): Promise<TreeNode[]> {
    const model = this.model;
    if (!model) return [];
    if (!node) return model.children(null) ?? [];
    if (node.kind === 'more' || !node.expandable) return [];
    const loaded = model.children(node.entry.id);
    if (loaded) return loaded;
    try {
      const result = await this.server.request('pi/treeChildren', { sessionId: model.sessionId, parentId: node.entry.id, offset: 0, limit: TREE_PAGE });
      if (model !== this.model) return [];
      if (result.version !== model.version) {
        void this.resync();
        return [];
      }
      model.mergeLevel(result.level);
    } catch (error) {
      this.server.output.appendLine(`Could not expand ${node.entry.id}: ${describeError(error)}`);
    }
    return model.children(node.entry.id) ?? [];
  }

  getParent(node: TreeNode): TreeNode | undefined {
    return this.model?.parentOf(node);
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    return node.kind === 'more' ? this.moreItem(node) : this.entryItem(node);
  }

  private moreItem(node: MoreNode): vscode.TreeItem {
    const item = new vscode.TreeItem(moreText(node), vscode.TreeItemCollapsibleState.None);
    item.id = `${this.model?.sessionId}:${node.parentId ?? ''}:more-${node.direction}`;
    item.iconPath = new vscode.ThemeIcon('ellipsis');
    item.tooltip = 'Click to load them';
    item.contextValue = 'more';
    item.command = { command: 'pi.tree.loadMore', title: 'Load More', arguments: [node] };
    return item;
  }

  private entryItem(node: EntryNode): vscode.TreeItem {
    const { entry } = node;
    const state = !node.expandable
      ? vscode.TreeItemCollapsibleState.None
      : node.active ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed;
    const preview = skillPreview(entry.preview) || entryKind(entry);
    const item = new vscode.TreeItem(node.label ? `[${node.label}] ${preview}` : preview, state);
    // A node that turns into a branch point gets a new id, so VS Code does not keep it collapsed.
    item.id = `${this.model?.sessionId}:${entry.id}:${node.expandable ? 'branch' : 'entry'}`;
    const edited = contextEditText(entry);
    item.description = [entryKind(entry), edited, node.isLeaf ? 'leaf' : undefined].filter(Boolean).join(' · ');
    item.iconPath = new vscode.ThemeIcon(
      node.isLeaf ? 'debug-stackframe' : entry.contextEdit === 'removed' ? 'circle-slash' : entryIcon(entry),
      node.active && entry.contextEdit !== 'removed' ? new vscode.ThemeColor('charts.green') : undefined,
    );
    item.contextValue = entryContextValue(node);
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

/**
 * `entry`, `entry.active`, and for a message of the active path that a context edit can change
 * `entry.active.message` (`.removed`/`.replaced` once one did): package.json's menus match them.
 */
export function entryContextValue(node: EntryNode): string {
  if (!node.active) return 'entry';
  const { entry } = node;
  const editable = entry.type === 'custom_message' || (entry.type === 'message' && ['user', 'assistant', 'toolResult'].includes(entry.role ?? ''));
  if (!editable) return 'entry.active';
  return entry.contextEdit ? `entry.active.message.${entry.contextEdit}` : 'entry.active.message';
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|]/g, '\\$&');
}
