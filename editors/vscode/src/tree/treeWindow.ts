// The client side of the windowed session tree: what `pi/treeWindow` and `pi/treeChildren` sent,
// kept as levels (the rows under one row, a contiguous window of them), patched from each
// `tree_changed` event, so a session of any size costs what is on screen. Pure: no VS Code API,
// so the patching is unit-tested (test/unit/treeWindow.test.ts).
import type { ContextEditEffect, Events, TreeChildrenParams, TreeLevel, TreeNodeRow, TreeWindowResult } from '../protocol';

export type TreeChangedEvent = Events['tree_changed'];

/** Rows fetched at once: the first screen of a level, and each "load more" page. */
export const TREE_PAGE = 100;
/** A session whose window's levels hold at most this many rows in all is shown whole. */
export const SMALL_SESSION = 2 * TREE_PAGE;
/** In a bigger one, the other branches of this many branch points nearest the target are shown. */
const SIBLING_LEVELS = 3;
const SIBLINGS = 10;

/** An entry of the tree. `entry` is the server's row (a `pi/tree` entry plus counts and flags). */
export interface EntryNode {
  kind: 'entry';
  entry: TreeNodeRow;
  /** On the path from the root to the leaf. */
  active: boolean;
  isLeaf: boolean;
  label: string | undefined;
  /** Has rows under it (its branches, or the run continuing a branch): fetched when expanded. */
  expandable: boolean;
  branchStart: boolean;
}

/** Rows of a level not fetched yet, before or after the window: fetched when clicked. */
export interface MoreNode {
  kind: 'more';
  parentId: string | null;
  direction: 'before' | 'after';
  count: number;
  /** The level is a list of branches (not a run of entries). */
  branches: boolean;
}

export type TreeNode = EntryNode | MoreNode;

/** What a `tree_changed` event did to the model. */
export type PatchOutcome = 'patched' | 'stale' | 'resync';

const TOP = '';
const levelKey = (parentId: string | null | undefined) => parentId ?? TOP;

export class TreeWindowModel {
  readonly sessionId: string;
  version: number;
  leafId: string | null;
  name: string | null;
  private readonly levels = new Map<string, TreeLevel>();
  private readonly rows = new Map<string, TreeNodeRow>();
  private readonly levelOfRow = new Map<string, string>();
  private readonly entryNodes = new Map<string, EntryNode>();
  private readonly moreNodes = new Map<string, MoreNode>();

  /** The window's levels are small enough to fetch whole: the session shows as a whole tree. */
  readonly small: boolean;

  constructor(window: TreeWindowResult) {
    this.small = window.levels.reduce((sum, level) => sum + level.total, 0) <= SMALL_SESSION;
    this.sessionId = window.sessionId;
    this.version = window.version;
    this.leafId = window.leafId;
    this.name = window.name;
    for (const level of window.levels) this.mergeLevel(level);
  }

  /** How many rows the model holds (what the editor keeps in memory). */
  get size(): number {
    return this.rows.size;
  }

  /** The nodes under `parentId` (null: the top level); undefined when that level is not fetched. */
  children(parentId: string | null): TreeNode[] | undefined {
    const level = this.levels.get(levelKey(parentId));
    if (!level) return undefined;
    const branches = level.rows[0]?.branchStart ?? false;
    const nodes: TreeNode[] = [];
    if (level.offset > 0) nodes.push(this.more(level.parentId, 'before', level.offset, branches));
    for (const row of level.rows) nodes.push(this.node(row));
    const after = level.total - level.offset - level.rows.length;
    if (after > 0) nodes.push(this.more(level.parentId, 'after', after, branches));
    return nodes;
  }

  /** The node an entry is shown as, when it is loaded. */
  nodeOf(id: string | null | undefined): EntryNode | undefined {
    const row = id ? this.rows.get(id) : undefined;
    return row ? this.node(row) : undefined;
  }

  /** The node a node is shown under (undefined: the top level). */
  parentOf(node: TreeNode): EntryNode | undefined {
    const parentId = node.kind === 'more' ? node.parentId : this.levelOfRow.get(node.entry.id);
    return parentId ? this.nodeOf(parentId) : undefined;
  }

  /** Every loaded entry, in no particular order (quick picks before a search). */
  loadedEntries(): EntryNode[] {
    return [...this.rows.values()].map((row) => this.node(row));
  }

  /**
   * The levels (by parent id) to fetch whole after the window, nearest the target first: in a
   * small session every level only partly loaded, so it shows as it always did; in a big one the
   * other branches of the few branch points nearest the target, so the first screen stays small.
   */
  levelsToFill(): (string | null)[] {
    const partial = [...this.levels.values()].filter((level) => level.rows.length < level.total).reverse();
    const wanted = this.small ? partial : partial.filter((level) => level.total <= SIBLINGS).slice(0, SIBLING_LEVELS);
    return wanted.map((level) => level.parentId);
  }

  /** The request that fetches the rows a "more" node stands for. */
  pageParams(node: MoreNode): TreeChildrenParams {
    const level = this.levels.get(levelKey(node.parentId));
    const offset = level?.offset ?? 0;
    const end = offset + (level?.rows.length ?? 0);
    const start = node.direction === 'before' ? Math.max(0, offset - TREE_PAGE) : end;
    const limit = node.direction === 'before' ? Math.max(1, offset - start) : TREE_PAGE;
    return { sessionId: this.sessionId, parentId: node.parentId, offset: start, limit };
  }

  /**
   * Adds a fetched window of a level: joined to the rows already there when the two touch or
   * overlap, else in their place.
   */
  mergeLevel(level: TreeLevel): void {
    const key = levelKey(level.parentId);
    const known = this.levels.get(key);
    let merged: TreeLevel = { ...level, rows: [...level.rows] };
    if (known && known.total === level.total) {
      const start = Math.min(known.offset, level.offset);
      const end = Math.max(known.offset + known.rows.length, level.offset + level.rows.length);
      const touches = level.offset <= known.offset + known.rows.length && known.offset <= level.offset + level.rows.length;
      if (touches) {
        const slots: TreeNodeRow[] = new Array(end - start);
        known.rows.forEach((row, index) => (slots[known.offset - start + index] = row));
        level.rows.forEach((row, index) => (slots[level.offset - start + index] = row));
        merged = { ...level, offset: start, rows: slots };
      }
    }
    if (known) for (const row of known.rows) if (!merged.rows.includes(row)) this.forgetRow(row.id);
    this.levels.set(key, merged);
    for (const row of merged.rows) this.remember(row, key);
  }

  /**
   * Applies a `tree_changed` event: `stale` when the model already has it (fetched after it),
   * `resync` when the model cannot follow (a missed event, a new branch, a leaf that moved
   * without new entries, an entry whose parent is not loaded): fetch `pi/treeWindow` again.
   */
  applyChange(event: TreeChangedEvent): PatchOutcome {
    if (event.version <= this.version) return 'stale';
    if (event.version !== this.version + 1) return 'resync';
    this.version = event.version;
    this.name = event.name;
    for (const [id, label] of Object.entries(event.labels)) this.setLabel(id, label);
    for (const [id, effect] of Object.entries(event.contextEdits ?? {})) this.setContextEdit(id, effect);
    let outcome: PatchOutcome = 'patched';
    for (const row of event.entries) {
      if (this.rows.has(row.id)) continue;
      if (!this.append(row)) outcome = 'resync';
    }
    const leafMoved = event.leafId !== this.leafId;
    this.leafId = event.leafId;
    const leafArrived = event.entries.some((row) => row.id === event.leafId);
    if (leafMoved && !leafArrived) return 'resync';
    return outcome;
  }

  private append(row: TreeNodeRow): boolean {
    // A new branch restructures the level of its parent (a run ends there now): refetch.
    if (row.branchStart) return false;
    const parent = row.parentId ? this.rows.get(row.parentId) : undefined;
    if (row.parentId && !parent) return false;
    let key: string;
    if (parent) {
      parent.childCount += 1;
      if (parent.branchStart && parent.childCount === 1) {
        // The first entry after a branch's start opens the run under it.
        parent.expandable = true;
        key = parent.id;
        if (!this.levels.has(key)) this.levels.set(key, { parentId: parent.id, total: 0, offset: 0, rows: [] });
      } else {
        key = this.levelOfRow.get(parent.id) ?? TOP;
      }
    } else {
      key = TOP;
      if (!this.levels.has(key)) this.levels.set(key, { parentId: null, total: 0, offset: 0, rows: [] });
    }
    const level = this.levels.get(key);
    if (!level) return false;
    const reachesEnd = level.offset + level.rows.length === level.total;
    // A row continues a run only after that run's last row.
    if (parent && reachesEnd && level.rows.at(-1)?.id !== parent.id && key !== parent.id) return false;
    level.total += 1;
    if (reachesEnd) {
      level.rows.push(row);
      this.remember(row, key);
    }
    return true;
  }

  private setLabel(id: string, label: string | null): void {
    const row = this.rows.get(id);
    if (!row) return;
    if (label === null) delete row.label;
    else row.label = label;
    const node = this.entryNodes.get(id);
    if (node) node.label = label ?? undefined;
  }

  private setContextEdit(id: string, effect: ContextEditEffect | null): void {
    const row = this.rows.get(id);
    if (!row) return;
    if (effect === null) delete row.contextEdit;
    else row.contextEdit = effect;
    const node = this.entryNodes.get(id);
    if (node && node.entry !== row) {
      if (effect === null) delete node.entry.contextEdit;
      else node.entry.contextEdit = effect;
    }
  }

  private remember(row: TreeNodeRow, key: string): void {
    this.rows.set(row.id, row);
    this.levelOfRow.set(row.id, key);
  }

  private forgetRow(id: string): void {
    this.rows.delete(id);
    this.levelOfRow.delete(id);
    this.entryNodes.delete(id);
  }

  private node(row: TreeNodeRow): EntryNode {
    let node = this.entryNodes.get(row.id);
    if (!node) {
      node = { kind: 'entry', entry: row, active: row.active, isLeaf: false, label: row.label, expandable: row.expandable, branchStart: row.branchStart };
      this.entryNodes.set(row.id, node);
    }
    // Kept in step with the row (refetched, or changed in place by events); the object stays the
    // same, for reveal() and getParent().
    node.entry = row;
    node.active = row.active;
    node.isLeaf = row.id === this.leafId;
    node.expandable = row.expandable;
    node.label = row.label;
    return node;
  }

  private more(parentId: string | null, direction: 'before' | 'after', count: number, branches: boolean): MoreNode {
    const key = `${levelKey(parentId)}:${direction}`;
    let node = this.moreNodes.get(key);
    if (!node) {
      node = { kind: 'more', parentId, direction, count, branches };
      this.moreNodes.set(key, node);
    }
    node.count = count;
    node.branches = branches;
    return node;
  }
}

/** The text a "more" node shows. */
export function moreText(node: MoreNode): string {
  const count = node.count.toLocaleString('en-US');
  if (node.branches) return `⋯ ${count} other branch${node.count === 1 ? '' : 'es'}`;
  return `⋯ ${count} ${node.direction === 'before' ? 'earlier' : 'later'} entr${node.count === 1 ? 'y' : 'ies'}`;
}
