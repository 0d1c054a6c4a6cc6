// Pi: Search Sessions…: a quick pick that asks `pi/searchSessions` as the user types (every session
// of the workspace, pi's own included; newest matches first). Choosing a hit opens its session in
// the chat and shows the tree at that entry (`pi/treeWindow {targetId}`).
import * as vscode from 'vscode';
import type { SessionSearchHit } from '../protocol';
import { searchAsTyped } from '../searchAsTyped';
import { describeError, type PiServer } from '../server';

const SEARCH_DELAY_MS = 200;
const SEARCH_LIMIT = 100;

interface HitPick extends vscode.QuickPickItem {
  hit: SessionSearchHit;
}

function pickOf(hit: SessionSearchHit): HitPick {
  const when = hit.timestamp ? new Date(hit.timestamp).toLocaleString() : '';
  const session = hit.sessionName ?? hit.sessionId.slice(0, 8);
  return {
    label: hit.preview || `(${hit.type ?? 'entry'})`,
    description: `${session} · ${hit.role ?? hit.type ?? 'entry'}${hit.onActivePath ? '' : ' · other branch'}`,
    detail: `${when} · entry ${hit.entryId ?? '?'}`,
    alwaysShow: true,
    hit,
  };
}

/** Lets the user search every session; resolves with the chosen hit, or undefined. */
export async function searchSessions(server: PiServer): Promise<SessionSearchHit | undefined> {
  const pick = vscode.window.createQuickPick<HitPick>();
  const title = 'Search sessions';
  pick.title = title;
  pick.placeholder = 'Words, "a phrase", -word to leave out: every session of the workspace';
  // The server already matched the words; VS Code's own filter would hide hits whose preview
  // shows other words of the entry.
  pick.matchOnDescription = false;
  const chosen = await searchAsTyped(pick, {
    delayMs: SEARCH_DELAY_MS,
    blank: () => {
      pick.items = [];
      pick.title = title;
    },
    ask: (query) => server.request('pi/searchSessions', { query, limit: SEARCH_LIMIT }),
    show: (result) => {
      pick.items = result.hits.map(pickOf);
      const more = result.total > result.hits.length ? `, the newest ${result.hits.length}` : '';
      const indexing = result.indexing.complete
        ? ''
        : ` (indexing: ${result.indexing.indexedFiles} of ${result.indexing.knownFiles} sessions)`;
      const total = `${result.total}${result.totalCapped ? '+' : ''}`;
      pick.title = `${title}: ${total} match${result.total === 1 ? '' : 'es'}${more}${indexing}`;
    },
    failed: (error) => {
      server.output.appendLine(`Session search failed: ${describeError(error)}`);
      pick.title = `${title}: ${describeError(error)}`;
    },
  });
  return chosen?.hit;
}
