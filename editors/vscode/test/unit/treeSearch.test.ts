// The tree search quick pick while the server answers what is typed: VS Code names the chosen
// item by its index, so the list only grows while the pick is open.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TreeNodeRow } from '../../src/protocol';
import { searchTree } from '../../src/tree/treeSearch';
import { createdQuickPicks, type FakeQuickPick } from './vscode-stub';

vi.mock('../../src/server', () => ({ describeError: (error: unknown) => String(error) }));

function row(id: string, preview: string): TreeNodeRow {
  return { id, parentId: null, type: 'message', role: 'user', preview, timestamp: null, childCount: 0, branchStart: false, active: false, expandable: false };
}

const answers: Record<string, TreeNodeRow[]> = {
  deploy: [row('e1', 'deploy the staging'), row('e2', 'deploy the api'), row('e3', 'deploy the docs')],
  'deploy the': [row('e3', 'deploy the docs'), row('e1', 'deploy the staging')],
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (check: () => boolean) => {
  for (let waited = 0; !check(); waited += 10) {
    if (waited > 3000) throw new Error('timed out');
    await sleep(10);
  }
};

type Pick = FakeQuickPick<{ row: TreeNodeRow; alwaysShow?: boolean }>;
const ids = (pick: Pick) => pick.items.map((item) => item.row.id);

/** Opens the search on a server that answers `pi/treeSearch` after `delays[query]` ms. */
function open(delays: Record<string, number> = {}) {
  const server = {
    output: { appendLine: () => undefined },
    request: async (_method: string, params: { query: string }) => {
      await sleep(delays[params.query] ?? 0);
      const rows = answers[params.query] ?? [];
      return { rows, total: rows.length, version: 1 };
    },
  };
  const initial = [row('leaf', 'the last question')];
  const done = searchTree(server as never, 's1', { title: 'Search', initial, leafId: 'leaf' });
  return { done, pick: createdQuickPicks.at(-1) as Pick };
}

describe('the tree search while the server answers what was typed', () => {
  afterEach(() => vi.useRealTimers());

  it('reveals the entry clicked while the answer to a longer text arrived', async () => {
    const { done, pick } = open();
    pick.type('deploy');
    await until(() => ids(pick).includes('e2'));
    const clicked = ids(pick).indexOf('e2');
    pick.type('deploy the');
    await until(() => !pick.busy && pick.title.includes('2 matches'));
    pick.choose(clicked);
    expect((await done)?.id).toBe('e2');
  });

  it('shows the latest matches and lets VS Code filter out those it no longer has', async () => {
    const { done, pick } = open();
    pick.type('deploy');
    await until(() => ids(pick).includes('e2'));
    pick.type('deploy the');
    await until(() => pick.title.includes('2 matches'));
    const shownAlways = pick.items.filter((item) => item.alwaysShow).map((item) => item.row.id);
    expect(shownAlways.sort()).toEqual(['e1', 'e3']);
    pick.hide();
    expect(await done).toBeUndefined();
  });

  it('keeps the answer to the latest text when the one to an earlier text comes after it', async () => {
    const { done, pick } = open({ deploy: 300 });
    pick.type('deploy');
    await sleep(200); // asked for "deploy"; its answer is slow
    pick.type('deploy the');
    await until(() => pick.title.includes('2 matches'));
    await sleep(400);
    expect(pick.title).toContain('2 matches');
    expect(pick.items.filter((item) => item.alwaysShow).map((item) => item.row.id).sort()).toEqual(['e1', 'e3']);
    pick.hide();
    await done;
  });
});
