// The search-as-you-type loop the session search, the tree search and the model pickers share:
// only the answer to the latest text is shown, blank text is not asked about, a failure of the
// latest request is reported, and Enter closes the pick only on an item it accepts.
import { describe, expect, it } from 'vitest';
import { searchAsTyped, type TypedSearch } from '../../src/searchAsTyped';
import { createdQuickPicks, type FakeQuickPick } from './vscode-stub';
import * as vscode from 'vscode';

interface Item {
  label: string;
  separator?: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (check: () => boolean) => {
  for (let waited = 0; !check(); waited += 10) {
    if (waited > 3000) throw new Error('timed out');
    await sleep(10);
  }
};

/** Opens a search whose server answers at once, but "held" only when `release` is called, and fails for "boom". */
function open(options: Partial<TypedSearch<Item, Item[]>> = {}) {
  const asked: string[] = [];
  const answered: string[] = [];
  const failures: unknown[] = [];
  let release = () => undefined as void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const pick = vscode.window.createQuickPick<Item>();
  const done = searchAsTyped(pick, {
    delayMs: 5,
    ask: async (typed) => {
      asked.push(typed);
      if (typed === 'held') await held;
      if (typed === 'boom') throw new Error('the server failed');
      answered.push(typed);
      return [{ label: `${typed} 1` }, { label: `${typed} 2` }];
    },
    show: (items) => {
      pick.items = items;
    },
    failed: (error) => failures.push(error),
    ...options,
  });
  return { done, asked, answered, failures, release, pick: createdQuickPicks.at(-1) as FakeQuickPick<Item> };
}

const labels = (pick: FakeQuickPick<Item>) => pick.items.map((item) => item.label);

describe('a quick pick that searches as the user types', () => {
  it('shows only the answer to the latest text, even when an earlier one answers later', async () => {
    const { done, answered, release, pick } = open();
    pick.type('held');
    await until(() => pick.busy);
    pick.type('fast');
    await until(() => labels(pick).includes('fast 1') && !pick.busy);
    release(); // the answer to "held" arrives now, and is dropped
    await until(() => answered.includes('held'));
    await sleep(0); // what follows the answer in the same task has run
    expect(labels(pick)).toEqual(['fast 1', 'fast 2']);
    expect(pick.busy).toBe(false);
    pick.choose(1);
    expect((await done)?.label).toBe('fast 2');
  });

  it('does not ask about blank text when it has something to show instead', async () => {
    let blanks = 0;
    const { done, asked, pick } = open({ blank: () => void blanks++ });
    pick.type('   ');
    await until(() => blanks === 1);
    pick.type('word');
    await until(() => labels(pick).includes('word 1'));
    expect(asked).toEqual(['word']);
    pick.hide();
    expect(await done).toBeUndefined();
  });

  it('asks about the opening text at once when told, and blank text too without a blank view', async () => {
    const { done, asked, pick } = open({ askAtOnce: true });
    await until(() => labels(pick).includes(' 1'));
    expect(asked).toEqual(['']);
    pick.hide();
    await done;
  });

  it('reports a failure of the latest request and stops being busy', async () => {
    const { done, failures, pick } = open();
    pick.type('boom');
    await until(() => failures.length === 1);
    expect(String(failures[0])).toContain('the server failed');
    expect(pick.busy).toBe(false);
    pick.hide();
    await done;
  });

  it('stays open on Enter over an item it does not accept', async () => {
    const { done, pick } = open({ accepts: (item) => !item.separator });
    pick.items = [{ label: 'a heading', separator: true }, { label: 'a model' }];
    pick.choose(0);
    expect(pick.shown).toBe(true);
    pick.choose(1);
    expect((await done)?.label).toBe('a model');
  });
});
