// Rebuilds the chat transcript of a session's active path from its JSONL file, so a resumed,
// forked or navigated session shows its conversation (pi/tree only carries previews).
import type { AgentMessage, PiEvent } from '../protocol';
import { type ChatItem, type ChatState, emptyChat, reduce } from './reducer';

interface FileEntry {
  type?: string;
  id?: string;
  parentId?: string | null;
  message?: { role?: string; [key: string]: unknown };
  summary?: string;
  tokensBefore?: number;
}

export function parseSessionFile(text: string): FileEntry[] {
  const entries: FileEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line) as FileEntry);
    } catch {
      // A torn last line (a write in progress) is not part of the history yet.
    }
  }
  return entries;
}

/** The entries from the root to `leafId`, oldest first. */
export function activePath(entries: FileEntry[], leafId: string | null): FileEntry[] {
  const byId = new Map(entries.filter((entry) => entry.id).map((entry) => [entry.id as string, entry]));
  const path: FileEntry[] = [];
  const seen = new Set<string>();
  let current = leafId ? byId.get(leafId) : undefined;
  while (current && !seen.has(current.id as string)) {
    seen.add(current.id as string);
    path.push(current);
    current = current.parentId ? byId.get(current.parentId) : undefined;
  }
  return path.reverse();
}

/** The chat items of a session's active path, built by replaying its entries as events. */
export function historyItems(sessionId: string | null, entries: FileEntry[], leafId: string | null): ChatItem[] {
  let state: ChatState = emptyChat(sessionId);
  for (const entry of activePath(entries, leafId)) {
    for (const event of entryEvents(entry)) state = reduce(state, event);
  }
  return state.items.map((item) =>
    item.kind === 'tool' && (item.status === 'pending' || item.status === 'running') ? { ...item, status: 'unfinished' } : item,
  );
}

function entryEvents(entry: FileEntry): (PiEvent | { type: 'local_notice'; level: 'info'; text: string })[] {
  if (entry.type === 'message' && entry.message) {
    const message = entry.message as AgentMessage;
    if (message.role === 'assistant') {
      return [
        { type: 'message_start', role: 'assistant' },
        { type: 'message_end', entryId: entry.id ?? null, message },
      ];
    }
    return [{ type: 'message_end', entryId: entry.id ?? null, message }];
  }
  if (entry.type === 'compaction') {
    return [{ type: 'local_notice', level: 'info', text: `Compacted: earlier messages are summarized.\n\n${entry.summary ?? ''}` }];
  }
  if (entry.type === 'branch_summary') {
    return [{ type: 'local_notice', level: 'info', text: `Branch summary:\n\n${entry.summary ?? ''}` }];
  }
  return [];
}
