// Rebuilds the chat transcript of a session's active path from the server's `pi/messages`, so a
// resumed, forked or navigated session shows its conversation (pi/tree only carries previews).
import type { AgentMessage, ContextEditEffect, MessagesResult, PiEvent, TranscriptEntry } from '../protocol';
import { type CardView, type ChatItem, type ChatState, EARLIER_TOPIC, emptyChat, type LocalAction, type NoticeAction, reduce } from './reducer';

/**
 * How many entries of the active path a chat loads at once: the tail when it opens a session,
 * then each earlier page (`pi/messages` with `before`) as the user scrolls up.
 */
export const HISTORY_LIMIT = 100;

/**
 * The chat items of a page of a session's active path, built by replaying its entries as events;
 * when earlier entries exist, a notice at the top offers to load them. `page` makes the item ids
 * of an earlier page differ from those already shown.
 */
export function historyItems(sessionId: string | null, transcript: MessagesResult, page = ''): ChatItem[] {
  let state: ChatState = emptyChat(sessionId);
  const hidden = transcript.offset;
  const first = transcript.entries[0]?.entryId;
  if (hidden > 0 && first) {
    const action: NoticeAction = { kind: 'loadEarlier', label: 'Load earlier messages', before: first };
    const text = `${hidden} earlier entr${hidden === 1 ? 'y' : 'ies'} (scroll up to load them).`;
    state = reduce(state, { type: 'local_notice', level: 'info', text, topic: EARLIER_TOPIC, action });
  }
  const edited = new Map<string, ContextEditEffect>();
  for (const entry of transcript.entries) {
    for (const event of entryEvents(entry)) state = reduce(state, event);
    if (entry.contextEdit) edited.set(entry.entryId, entry.contextEdit);
  }
  return state.items.map((item) => {
    const contextEdit = 'entryId' in item && item.entryId ? edited.get(item.entryId) : undefined;
    if (contextEdit) item = { ...item, contextEdit };
    const id = `${page}${item.id}`;
    return item.kind === 'tool' && (item.status === 'pending' || item.status === 'running') ? { ...item, id, status: 'unfinished' } : { ...item, id };
  });
}

type HistoryEvent = PiEvent | { type: 'local_notice'; level: 'info'; text: string; card?: CardView } | Extract<LocalAction, { type: 'local_tool_card' }>;

/** A note under an entry that a context edit (pi 1.6) removed from the model's context or replaced there. */
export const CONTEXT_EDIT_NOTES = {
  removed: 'Removed from the context: the model no longer sees the entry above. It stays in the session file (right-click, Restore, to bring it back).',
  replaced: 'Replaced in the context: the model sees the text above instead of the original.',
} as const;

function entryEvents(entry: TranscriptEntry): HistoryEvent[] {
  const events = conversationEvents(entry);
  if (entry.contextEdit && events.length > 0) {
    events.push({ type: 'local_notice', level: 'info', text: CONTEXT_EDIT_NOTES[entry.contextEdit] });
  }
  return events;
}

function conversationEvents(entry: TranscriptEntry): HistoryEvent[] {
  if (entry.type === 'message' && entry.message) {
    const message: AgentMessage = entry.message;
    if (message.role === 'assistant') {
      return [
        { type: 'message_start', role: 'assistant' },
        { type: 'message_end', entryId: entry.entryId, message },
      ];
    }
    const ended: HistoryEvent = { type: 'message_end', entryId: entry.entryId, message };
    if (message.role === 'toolResult' && entry.toolCard) {
      return [ended, { type: 'local_tool_card', toolCallId: String(message.toolCallId ?? ''), card: entry.toolCard }];
    }
    return [ended];
  }
  if (entry.type === 'compaction') {
    const card = entry.card ?? { summary: entry.summary ?? '', readFiles: [], modifiedFiles: [] };
    return [{ type: 'local_notice', level: 'info', text: 'Compacted: earlier messages are summarized.', card }];
  }
  if (entry.type === 'branch_summary') {
    const card = entry.card ?? { summary: entry.summary ?? '', readFiles: [], modifiedFiles: [] };
    return [{ type: 'local_notice', level: 'info', text: 'Branch summary: what happened on the branch left behind.', card }];
  }
  return [];
}
