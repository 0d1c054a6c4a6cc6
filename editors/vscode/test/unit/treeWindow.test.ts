// The windowed tree model: levels from pi/treeWindow and pi/treeChildren, "more" rows for what
// is not fetched, and tree_changed events patched in or answered with a resync.
import { describe, expect, it } from 'vitest';
import type { TreeLevel, TreeNodeRow, TreeWindowResult } from '../../src/protocol';
import { type EntryNode, type MoreNode, moreText, type TreeChangedEvent, TreeWindowModel } from '../../src/tree/treeWindow';

function row(id: string, parentId: string | null, extra: Partial<TreeNodeRow> = {}): TreeNodeRow {
  return {
    id,
    parentId,
    type: 'message',
    role: 'user',
    preview: `text of ${id}`,
    timestamp: '2026-01-01T00:00:00Z',
    childCount: 0,
    branchStart: false,
    active: true,
    expandable: false,
    ...extra,
  };
}

function level(parentId: string | null, total: number, offset: number, rows: TreeNodeRow[]): TreeLevel {
  return { parentId, total, offset, rows };
}

function window(levels: TreeLevel[], leafId: string, version = 5): TreeWindowResult {
  return { sessionId: 's1', version, leafId, name: null, targetId: leafId, levels };
}

function changed(
  version: number,
  entries: TreeNodeRow[],
  leafId: string,
  labels: Record<string, string | null> = {},
  contextEdits: TreeChangedEvent['contextEdits'] = {},
): TreeChangedEvent {
  return { version, entries, leafId, labels, name: null, contextEdits };
}

const ids = (nodes: ReturnType<TreeWindowModel['children']>) =>
  (nodes ?? []).map((node) => (node.kind === 'entry' ? node.entry.id : moreText(node)));

/** A run of 1000 entries e0…e999 of which the last three are loaded, e999 the leaf. */
function longRun(): TreeWindowModel {
  const rows = [row('e997', 'e996', { childCount: 1 }), row('e998', 'e997', { childCount: 1 }), row('e999', 'e998')];
  return new TreeWindowModel(window([level(null, 1000, 997, rows)], 'e999'));
}

describe('the windowed tree model', () => {
  it('shows the window with the earlier entries collapsed to a count', () => {
    const model = longRun();
    expect(ids(model.children(null))).toEqual(['⋯ 997 earlier entries', 'e997', 'e998', 'e999']);
    expect(model.nodeOf('e999')?.isLeaf).toBe(true);
    expect(model.size).toBe(3);
  });

  it('asks for the page before the window and joins it', () => {
    const model = longRun();
    const more = model.children(null)?.[0] as MoreNode;
    expect(model.pageParams(more)).toEqual({ sessionId: 's1', parentId: null, offset: 897, limit: 100 });
    const page = Array.from({ length: 100 }, (_, index) => row(`e${897 + index}`, `e${896 + index}`, { childCount: 1 }));
    model.mergeLevel(level(null, 1000, 897, page));
    const shown = ids(model.children(null));
    expect(shown[0]).toBe('⋯ 897 earlier entries');
    expect(shown.slice(1, 3)).toEqual(['e897', 'e898']);
    expect(shown.at(-1)).toBe('e999');
    expect(shown).toHaveLength(104);
  });

  it('shows the path to a target deep in a branch, the other branches as a count, and expands them', () => {
    const model = new TreeWindowModel(
      window(
        [
          level(null, 12, 11, [row('b', 'a', { childCount: 2, expandable: true })]),
          level('b', 2, 1, [row('x', 'b', { branchStart: true, expandable: true, childCount: 1 })]),
          level('x', 1, 0, [row('y', 'x')]),
        ],
        'y',
      ),
    );
    expect(ids(model.children(null))).toEqual(['⋯ 11 earlier entries', 'b']);
    expect(ids(model.children('b'))).toEqual(['⋯ 1 other branch', 'x']);
    expect(model.small).toBe(true);
    expect(model.levelsToFill()).toEqual(['b', null]);
    const y = model.nodeOf('y') as EntryNode;
    expect(model.parentOf(y)?.entry.id).toBe('x');
    expect(model.parentOf(model.nodeOf('x') as EntryNode)?.entry.id).toBe('b');
    expect(model.parentOf(model.nodeOf('b') as EntryNode)).toBeUndefined();
    // The other branch, fetched whole; its start is collapsed (not active) and has a run under it.
    model.mergeLevel(level('b', 2, 0, [row('w', 'b', { branchStart: true, active: false, expandable: true, childCount: 1 }), row('x', 'b', { branchStart: true, expandable: true, childCount: 1 })]));
    expect(ids(model.children('b'))).toEqual(['w', 'x']);
    const w = model.nodeOf('w') as EntryNode;
    expect(w).toMatchObject({ active: false, expandable: true });
    expect(model.children('w')).toBeUndefined(); // fetched when expanded
    model.mergeLevel(level('w', 1, 0, [row('w1', 'w', { active: false })]));
    expect(ids(model.children('w'))).toEqual(['w1']);
  });

  it('appends the entries of a turn to the run that ends at the leaf', () => {
    const model = longRun();
    const outcome = model.applyChange(changed(6, [row('f1', 'e999'), row('f2', 'f1')], 'f2'));
    expect(outcome).toBe('patched');
    expect(ids(model.children(null)).slice(-3)).toEqual(['e999', 'f1', 'f2']);
    expect(model.nodeOf('f2')?.isLeaf).toBe(true);
    expect(model.nodeOf('e999')?.isLeaf).toBe(false);
    expect(model.version).toBe(6);
  });

  it('opens the run under a branch start that had no continuation', () => {
    const model = new TreeWindowModel(
      window([level(null, 1, 0, [row('b', null, { childCount: 2, expandable: true })]), level('b', 2, 0, [row('old', 'b', { branchStart: true, active: false }), row('new', 'b', { branchStart: true })])], 'new'),
    );
    expect(model.applyChange(changed(6, [row('answer', 'new')], 'answer'))).toBe('patched');
    expect(model.nodeOf('new')?.expandable).toBe(true);
    expect(ids(model.children('new'))).toEqual(['answer']);
  });

  it('applies labels and the name, and ignores an event it already has', () => {
    const model = longRun();
    expect(model.applyChange(changed(6, [row('l1', 'e999', { type: 'label' })], 'l1', { e998: 'milestone' }))).toBe('patched');
    expect(model.nodeOf('e998')?.label).toBe('milestone');
    expect(model.applyChange(changed(7, [], 'l1', { e998: null }))).toBe('patched');
    expect(model.nodeOf('e998')?.label).toBeUndefined();
    expect(model.applyChange(changed(7, [], 'l1'))).toBe('stale');
  });

  it('marks an entry a context edit changed and clears the mark after a restore', () => {
    const model = longRun();
    const edit = row('x1', 'e999', { type: 'context_edit' });
    expect(model.applyChange(changed(6, [edit], 'x1', {}, { e998: 'removed' }))).toBe('patched');
    expect(model.nodeOf('e998')?.entry.contextEdit).toBe('removed');
    const restore = row('x2', 'x1', { type: 'context_edit' });
    expect(model.applyChange(changed(7, [restore], 'x2', {}, { e998: null }))).toBe('patched');
    expect(model.nodeOf('e998')?.entry.contextEdit).toBeUndefined();
  });

  it('asks for a resync after a missed event, a new branch or a leaf that moved', () => {
    expect(longRun().applyChange(changed(7, [row('f1', 'e999')], 'f1'))).toBe('resync');
    expect(longRun().applyChange(changed(6, [row('g1', 'e500', { branchStart: true })], 'g1'))).toBe('resync');
    expect(longRun().applyChange(changed(6, [], 'e998'))).toBe('resync');
    expect(longRun().applyChange(changed(6, [row('h1', 'unknown')], 'h1'))).toBe('resync');
  });

  it('fetches only the other branches next to the path of a big session', () => {
    const model = new TreeWindowModel(
      window(
        [
          level(null, 5000, 4999, [row('b', 'a', { childCount: 2, expandable: true })]),
          level('b', 2, 1, [row('x', 'b', { branchStart: true, expandable: true, childCount: 1 })]),
          level('x', 90_000, 89_900, [row('y', 'x')]),
        ],
        'y',
      ),
    );
    expect(model.small).toBe(false);
    expect(model.levelsToFill()).toEqual(['b']);
  });

  it('replaces a window it cannot join, and forgets the rows it drops', () => {
    const model = longRun();
    model.mergeLevel(level(null, 1000, 10, [row('e10', 'e9', { childCount: 1 })]));
    expect(ids(model.children(null))).toEqual(['⋯ 10 earlier entries', 'e10', '⋯ 989 later entries']);
    expect(model.nodeOf('e999')).toBeUndefined();
    expect(model.size).toBe(1);
  });
});
