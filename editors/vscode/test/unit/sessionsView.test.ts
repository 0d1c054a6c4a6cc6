// The Sessions view redraws the whole list only when rows came, went or moved: a whole redraw
// drops VS Code's handles to the rows, and a context-menu command chosen then gets no row.
import { describe, expect, it, vi } from 'vitest';

vi.mock('vscode', () => ({ EventEmitter: class {}, TreeItem: class {}, ThemeIcon: class {}, window: {} }));
vi.mock('vscode-languageclient/node', () => ({ ResponseError: class {}, State: {} }));

const { planRefresh } = await import('../../src/sessions/sessionsView');

function row(id: string, extra: { name?: string; current?: boolean; messageCount?: number } = {}) {
  return {
    info: { id, path: `/s/${id}.jsonl`, name: extra.name ?? null, firstMessage: `first ${id}`, modified: '2026-12-01T00:00:00Z', messageCount: extra.messageCount ?? 2 },
    current: extra.current ?? false,
  } as never;
}

describe('planRefresh', () => {
  it('changes nothing when the listing is the same', () => {
    expect(planRefresh([row('a'), row('b')], [row('a'), row('b')])).toEqual({ kind: 'none' });
  });

  it('redraws only the rows whose mark or text changed', () => {
    const shown = [row('a', { current: true }), row('b'), row('c')];
    const listed = [row('a'), row('b', { current: true }), row('c', { name: 'Renamed' })];
    expect(planRefresh(shown, listed)).toEqual({ kind: 'rows', changed: [0, 1, 2] });
    expect(planRefresh([row('a'), row('b')], [row('a'), row('b', { messageCount: 4 })])).toEqual({ kind: 'rows', changed: [1] });
  });

  it('redraws the list when a row came, went or moved', () => {
    expect(planRefresh([row('a')], [row('n'), row('a')])).toEqual({ kind: 'all' });
    expect(planRefresh([row('a'), row('b')], [row('a')])).toEqual({ kind: 'all' });
    expect(planRefresh([row('a'), row('b')], [row('b'), row('a')])).toEqual({ kind: 'all' });
  });
});
