// Search in the session tree: a quick pick that asks `pi/treeSearch` as the user types (entry
// text, labels, names; the newest matches first), so a session of any size is searched on the
// server rather than in the entries the view happens to hold. VS Code names the chosen item by its
// index, so the list only grows while the pick is open (growingItems.ts): the latest matches are
// always shown, and VS Code's own filter on the typed text hides the earlier ones.
import * as vscode from 'vscode';
import { growItems } from '../growingItems';
import type { TreeNodeRow } from '../protocol';
import { searchAsTyped } from '../searchAsTyped';
import { describeError, type PiServer } from '../server';
import { entryKind } from './treeModel';

const SEARCH_DELAY_MS = 150;
const SEARCH_LIMIT = 100;

interface RowPick extends vscode.QuickPickItem {
  row: TreeNodeRow;
}

function pickOf(row: TreeNodeRow, leafId: string | null): RowPick {
  return {
    label: `${row.active ? '$(circle-filled) ' : ''}${row.label ? `[${row.label}] ` : ''}${row.preview || entryKind(row)}`,
    description: `${entryKind(row)} · ${row.id}${row.id === leafId ? ' · leaf' : ''}`,
    row,
  };
}

/**
 * Lets the user pick an entry: `initial` rows (what the tree shows) until they type, then the
 * server's matches. Resolves with the picked row, or undefined when dismissed.
 */
export async function searchTree(
  server: PiServer,
  sessionId: string | undefined,
  options: { title: string; initial: TreeNodeRow[]; leafId: string | null },
): Promise<TreeNodeRow | undefined> {
  const pick = vscode.window.createQuickPick<RowPick>();
  pick.title = options.title;
  pick.placeholder = 'Search the session: message text, tool calls, labels, names';
  pick.matchOnDescription = true;
  const initial = options.initial.map((row) => pickOf(row, options.leafId));
  let shown = initial;
  pick.items = shown;

  /** Puts `items` in (alwaysShow: the server matched them already); the others only if VS Code's filter keeps them. */
  const put = (items: RowPick[]) => {
    shown = growItems(shown, items, (item) => item.row.id, (item) => ({ ...item, alwaysShow: false }));
    pick.items = shown;
  };

  const chosen = await searchAsTyped(pick, {
    delayMs: SEARCH_DELAY_MS,
    blank: () => {
      put(initial);
      pick.title = options.title;
    },
    ask: (query) => server.request('pi/treeSearch', { ...(sessionId ? { sessionId } : {}), query, limit: SEARCH_LIMIT }),
    show: (result) => {
      // The item the user is on stays active when it is among the matches.
      const active = pick.activeItems[0]?.row.id;
      put(result.rows.map((row) => ({ ...pickOf(row, options.leafId), alwaysShow: true })));
      const kept = shown.find((item) => item.row.id === active && item.alwaysShow);
      if (kept) pick.activeItems = [kept];
      pick.title = `${options.title} ${result.total} match${result.total === 1 ? '' : 'es'}${result.total > result.rows.length ? `, the newest ${result.rows.length}` : ''}`;
    },
    failed: (error) => server.output.appendLine(`Tree search failed: ${describeError(error)}`),
  });
  return chosen?.row;
}
