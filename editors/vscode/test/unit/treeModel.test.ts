// The tree model: flat runs, branches, the active path and entry names.
import { describe, expect, it } from 'vitest';
import type { TreeEntry, TreeResult } from '../../src/protocol';
import { buildTreeModel, containsActive, contextEditText, displayParents, entryIcon, entryKind } from '../../src/tree/treeModel';

function entry(id: string, parentId: string | null, role?: string, preview = id): TreeEntry {
  return { id, parentId, type: role ? 'message' : 'model_change', role, preview, timestamp: '2026-01-01T00:00:00Z' };
}

function tree(entries: TreeEntry[], leafId: string, activePath: string[], labels: Record<string, string> = {}): TreeResult {
  const children: Record<string, string[]> = {};
  for (const item of entries) if (item.parentId) (children[item.parentId] ??= []).push(item.id);
  return {
    sessionId: 's1',
    leafId,
    name: null,
    labels,
    activePath,
    roots: entries.filter((item) => item.parentId === null).map((item) => item.id),
    children,
    entries,
  };
}

describe('the tree model', () => {
  it('keeps a conversation without branches flat', () => {
    const model = buildTreeModel(tree([entry('a', null, 'user'), entry('b', 'a', 'assistant'), entry('c', 'b', 'user')], 'c', ['a', 'b', 'c']));
    expect(model.roots.map((node) => node.entry.id)).toEqual(['a', 'b', 'c']);
    expect(model.roots.every((node) => node.children.length === 0 && node.active)).toBe(true);
    expect(model.roots[2].isLeaf).toBe(true);
  });

  it('nests branches under their branch point, each holding its continuation', () => {
    const entries = [
      entry('a', null, 'user'),
      entry('b', 'a', 'assistant'),
      entry('c', 'b', 'user', 'old question'),
      entry('d', 'c', 'assistant'),
      entry('e', 'b', 'user', 'new question'),
    ];
    const model = buildTreeModel(tree(entries, 'e', ['a', 'b', 'e'], { c: 'first try' }));
    expect(model.roots.map((node) => node.entry.id)).toEqual(['a', 'b']);
    const [old, fresh] = model.roots[1].children;
    expect(old).toMatchObject({ branchStart: true, active: false, label: 'first try' });
    expect(old.children.map((node) => node.entry.id)).toEqual(['d']);
    expect(fresh).toMatchObject({ branchStart: true, active: true, isLeaf: true });
    expect(containsActive(model.roots[1])).toBe(true);
    expect(containsActive(old)).toBe(false);
    const parents = displayParents(model);
    expect(parents.get(old.children[0])).toBe(old);
    expect(parents.get(old)).toBe(model.roots[1]);
    expect(parents.get(model.roots[0])).toBeUndefined();
  });

  it('handles nested branch points and several roots', () => {
    const entries = [entry('r1', null), entry('r2', null), entry('x', 'r1', 'user'), entry('y', 'r1', 'user'), entry('y1', 'y', 'assistant'), entry('y2', 'y', 'assistant')];
    const model = buildTreeModel(tree(entries, 'y2', ['r1', 'y', 'y2']));
    expect(model.roots.map((node) => node.entry.id)).toEqual(['r1', 'r2']);
    const y = model.byId.get('y');
    expect(y?.children.map((node) => node.entry.id)).toEqual(['y1', 'y2']);
    expect(model.byId.size).toBe(6);
  });

  it('builds a long conversation without recursion limits', () => {
    const entries = Array.from({ length: 20000 }, (_, index) => entry(`e${index}`, index ? `e${index - 1}` : null, 'user'));
    const model = buildTreeModel(tree(entries, 'e19999', []));
    expect(model.roots).toHaveLength(20000);
  });

  it('names and icons entries by role and type', () => {
    expect(entryKind(entry('a', null, 'user'))).toBe('You');
    expect(entryKind({ ...entry('a', null), type: 'branch_summary' })).toBe('Branch summary');
    expect(entryKind({ ...entry('a', null), type: 'something_new' })).toBe('something_new');
    expect(entryIcon(entry('a', null, 'assistant'))).toBe('hubot');
    expect(entryIcon({ ...entry('a', null), type: 'compaction' })).toBe('fold');
  });

  it('names what a context edit did to an entry, and the entry kinds pi 1.6 adds', () => {
    const removed: TreeEntry = { ...entry('a', null, 'user'), contextEdit: 'removed' };
    const replaced: TreeEntry = { ...entry('b', 'a', 'assistant'), contextEdit: 'replaced' };
    expect(contextEditText(removed)).toBe('removed from context');
    expect(contextEditText(replaced)).toBe('replaced in context');
    expect(contextEditText(entry('c', 'b', 'user'))).toBeUndefined();
    const edit: TreeEntry = { id: 'e', parentId: 'b', type: 'context_edit', preview: 'removed from context: a', timestamp: '' };
    expect(entryKind(edit)).toBe('Context edit');
    expect(entryIcon(edit)).toBe('eye-closed');
    expect(entryKind({ ...edit, type: 'hologram' })).toBe('hologram');
    expect(entryKind(entry('s', null, 'system'))).toBe('System prompt');
  });
});
