// How tree entries are named and drawn.
import { describe, expect, it } from 'vitest';
import type { TreeEntry } from '../../src/protocol';
import { contextEditText, entryIcon, entryKind } from '../../src/tree/treeModel';

function entry(id: string, parentId: string | null, role?: string, preview = id): TreeEntry {
  return { id, parentId, type: role ? 'message' : 'model_change', role, preview, timestamp: '2026-01-01T00:00:00Z' };
}

describe('entry names', () => {
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
