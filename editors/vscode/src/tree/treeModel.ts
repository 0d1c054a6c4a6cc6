// Turns the flat `pi/tree` result into the nodes the tree view shows. A run of entries without
// branches stays flat (a conversation reads top to bottom, not one level deeper per message);
// where the tree branches, each branch becomes an expandable node holding its continuation.
import type { TreeEntry, TreeResult } from '../protocol';

export interface TreeNode {
  entry: TreeEntry;
  /** On the path from the root to the leaf. */
  active: boolean;
  isLeaf: boolean;
  label: string | undefined;
  /** The branches starting here (a branch point) or the rest of a branch (a branch's first entry). */
  children: TreeNode[];
  /** True for the first entry of a branch: its children continue that branch. */
  branchStart: boolean;
}

export interface TreeModel {
  sessionId: string;
  name: string | null;
  leafId: string | null;
  roots: TreeNode[];
  byId: Map<string, TreeNode>;
}

export function buildTreeModel(tree: TreeResult): TreeModel {
  const entries = new Map(tree.entries.map((entry) => [entry.id, entry]));
  const active = new Set(tree.activePath);
  const byId = new Map<string, TreeNode>();
  const childrenOf = (id: string): string[] => (tree.children[id] ?? []).filter((child) => entries.has(child));

  const node = (id: string, branchStart: boolean): TreeNode => {
    const entry = entries.get(id) as TreeEntry;
    const created: TreeNode = {
      entry,
      active: active.has(id),
      isLeaf: id === tree.leafId,
      label: tree.labels[id] ?? entry.label,
      children: [],
      branchStart,
    };
    byId.set(id, created);
    return created;
  };

  // Iterative, so a session with thousands of entries in one run cannot overflow the stack.
  const run = (startId: string): TreeNode[] => {
    const rows: TreeNode[] = [];
    let id: string | undefined = startId;
    while (id !== undefined) {
      const current = node(id, false);
      rows.push(current);
      const kids = childrenOf(id);
      if (kids.length === 1) {
        id = kids[0];
      } else {
        current.children = kids.map(branch);
        id = undefined;
      }
    }
    return rows;
  };

  const branch = (id: string): TreeNode => {
    const kids = childrenOf(id);
    const start = node(id, true);
    start.children = kids.length === 1 ? run(kids[0]) : kids.map(branch);
    return start;
  };

  const rootIds = tree.roots.filter((id) => entries.has(id));
  const roots = rootIds.length === 1 ? run(rootIds[0]) : rootIds.map(branch);
  return { sessionId: tree.sessionId, name: tree.name, leafId: tree.leafId, roots, byId };
}

/** Whether a node, or anything below it, is on the active path (such nodes start expanded). */
export function containsActive(node: TreeNode): boolean {
  return node.active || node.children.some(containsActive);
}

/** The parent of a node in the displayed tree (for TreeView.reveal). */
export function displayParents(model: TreeModel): Map<TreeNode, TreeNode | undefined> {
  const parents = new Map<TreeNode, TreeNode | undefined>();
  const visit = (nodes: TreeNode[], parent: TreeNode | undefined) => {
    for (const child of nodes) {
      parents.set(child, parent);
      visit(child.children, child);
    }
  };
  visit(model.roots, undefined);
  return parents;
}

const KIND_TITLES: Record<string, string> = {
  user: 'You',
  assistant: 'Pi',
  toolResult: 'Tool result',
  bashExecution: 'Shell',
  compaction: 'Compaction',
  branch_summary: 'Branch summary',
  model_change: 'Model',
  thinking_level_change: 'Thinking',
  label: 'Label',
  session_info: 'Name',
  custom_message: 'Message',
  system: 'System prompt',
  context_edit: 'Context edit',
  usage: 'Usage',
};

/** The short kind an entry is shown with ("You", "Pi", "Compaction", …). */
export function entryKind(entry: TreeEntry): string {
  const key = entry.type === 'message' ? entry.role ?? 'message' : entry.type;
  return KIND_TITLES[key] ?? key;
}

/** The codicon an entry is shown with. */
export function entryIcon(entry: TreeEntry): string {
  const key = entry.type === 'message' ? entry.role ?? '' : entry.type;
  const icons: Record<string, string> = {
    user: 'account',
    assistant: 'hubot',
    toolResult: 'tools',
    bashExecution: 'terminal',
    compaction: 'fold',
    branch_summary: 'git-merge',
    model_change: 'settings-gear',
    thinking_level_change: 'lightbulb',
    label: 'tag',
    session_info: 'edit',
    system: 'gear',
    context_edit: 'eye-closed',
    usage: 'graph',
  };
  return icons[key] ?? 'circle-small';
}

/** What a context edit (pi 1.6) on the active path did to the entry, in words; undefined if nothing. */
export function contextEditText(entry: TreeEntry): string | undefined {
  switch (entry.contextEdit) {
    case 'removed':
      return 'removed from context';
    case 'replaced':
      return 'replaced in context';
    default:
      return undefined;
  }
}
