// The chat transcript as a pure function of `pi/event`s: the extension host and the webview run
// the same reducer, so the host can re-send the whole state when the view is shown again while
// the webview applies events one by one as they stream.
import type { AgentMessage, ContextEditEffect, ContextUsage, EventNotification, PiEvent, QueuedPromptInfo, SummaryCard, ToolCard } from '../protocol';
import { type ImageView, messageImages, messageText, thinkingText, toolCalls, toolResultText } from './messageText';

/** `unfinished`: the call's result is not on the shown path (a fork or a navigation cut the turn). */
export type ToolStatus = 'pending' | 'running' | 'done' | 'error' | 'unfinished';

interface ItemBase {
  id: string;
  /** Bumped on every change, so a renderer redraws only the items that changed. */
  rev: number;
  /** What a context edit did to the item's entry (history only: the chat reloads after an edit). */
  contextEdit?: ContextEditEffect;
}

export interface UserItem extends ItemBase {
  kind: 'user';
  text: string;
  images?: ImageView[];
  entryId?: string | null;
}

export interface AssistantItem extends ItemBase {
  kind: 'assistant';
  text: string;
  thinking: string;
  images?: ImageView[];
  streaming: boolean;
  stopReason?: string;
  errorMessage?: string;
  entryId?: string | null;
}

export interface ToolItem extends ItemBase {
  kind: 'tool';
  toolCallId: string;
  name: string;
  arguments: unknown;
  status: ToolStatus;
  result?: string;
  images?: ImageView[];
  /** The last line a running tool printed (its output streams in `result` meanwhile). */
  live?: string;
  /** The entry of its result, once stored. */
  entryId?: string | null;
  /** What the chat shows of the call (the server's card: file, diff, output, results). */
  card?: ToolCard;
}

export type NoticeLevel = 'info' | 'warning' | 'error';

/**
 * What a notice offers to do about it (a button): store another API key for `provider`, or
 * load the page of history before the entry `before`.
 */
export type NoticeAction =
  | { kind: 'setApiKey'; label: string; provider?: string }
  | { kind: 'loadEarlier'; label: string; before: string }
  | { kind: 'openFile'; label: string; path: string };

/** A compaction's or branch summary's card under its notice: why, what it kept, what it cost. */
export interface CardView extends SummaryCard {
  /** For a compaction: manual, threshold or overflow. */
  reason?: string;
}

/** The topic of the notice at the top of a chat whose earlier history is not loaded yet. */
export const EARLIER_TOPIC = 'earlier';

export interface NoticeItem extends ItemBase {
  kind: 'notice';
  level: NoticeLevel;
  text: string;
  /** Notices of one kind (a compaction, a retry series) replace each other. */
  topic?: string;
  action?: NoticeAction;
  card?: CardView;
}

export type ChatItem = UserItem | AssistantItem | ToolItem | NoticeItem;

/** The prompts waiting for the running turn (shown under the input, not in the transcript). */
export interface QueueView {
  steering: QueuedPromptInfo[];
  followUp: QueuedPromptInfo[];
}

/** Whether a tool call runs now (the one a permission question is about: tools run one at a time). */
export function hasRunningTool(state: ChatState): boolean {
  return state.items.some((item) => item.kind === 'tool' && item.status === 'running');
}

export interface ChatState {
  sessionId: string | null;
  items: ChatItem[];
  running: boolean;
  compacting: boolean;
  /** The model is summarizing the branch being left (a navigation with a summary). */
  summarizingBranch: boolean;
  lastSeq: number | null;
  context: ContextUsage | null;
  nextId: number;
  queue: QueueView;
}

/** What the reducer accepts besides server events: things the extension itself knows. */
export type LocalAction =
  /** The queue as `pi/queue` reads it (after a session switch). */
  | { type: 'local_queue'; queue: QueueView }
  | { type: 'local_notice'; level: NoticeLevel; text: string; topic?: string; action?: NoticeAction; card?: CardView }
  | { type: 'local_context'; usage: ContextUsage | null }
  | { type: 'local_reset'; sessionId: string | null; items: ChatItem[] }
  /** An earlier page of the history, put in place of the "earlier" notice at the top. */
  | { type: 'local_prepend'; items: ChatItem[] }
  /** A stored tool result's card (a replayed history's `toolCard`). */
  | { type: 'local_tool_card'; toolCallId: string; card: ToolCard };

export type ChatAction = PiEvent | LocalAction;

export function emptyChat(sessionId: string | null = null): ChatState {
  return {
    sessionId,
    items: [],
    running: false,
    compacting: false,
    summarizingBranch: false,
    lastSeq: null,
    context: null,
    nextId: 1,
    queue: { steering: [], followUp: [] },
  };
}

/** Applies one `pi/event` notification; events of another session leave the state as it is. */
export function applyNotification(state: ChatState, notification: EventNotification): ChatState {
  if (state.sessionId !== null && notification.sessionId !== state.sessionId) return state;
  const next = reduce({ ...state, sessionId: notification.sessionId }, notification.event);
  return { ...next, lastSeq: notification.seq };
}

/** True when a notification was lost or reordered between the last one and this one. */
export function isSeqGap(state: ChatState, notification: EventNotification): boolean {
  return state.lastSeq !== null && notification.sessionId === state.sessionId && notification.seq !== state.lastSeq + 1;
}

export function reduce(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case 'agent_start':
      return { ...state, running: true };
    case 'message_start':
      return action.role === 'assistant' ? startAssistant(state) : state;
    case 'text_delta':
      return updateStreaming(state, (item) => ({ ...item, text: item.text + action.delta }));
    case 'thinking_delta':
      return updateStreaming(state, (item) => ({ ...item, thinking: item.thinking + action.delta }));
    case 'toolcall_start':
      return upsertTool(state, action.toolCallId, (tool) => ({ ...tool, name: action.name }));
    case 'tool_execution_start':
      return upsertTool(state, action.toolCallId, (tool) => ({
        ...tool,
        name: action.name,
        arguments: action.arguments,
        status: 'running',
        ...cardOfCall(action.toolCard),
      }));
    case 'tool_execution_update': {
      const output = toolResultText(action.content);
      return upsertTool(state, action.toolCallId, (tool) => ({
        ...tool,
        name: action.name,
        status: 'running',
        result: output,
        live: lastLine(output),
        ...cardOfCall(action.toolCard),
      }));
    }
    case 'tool_execution_end':
      return upsertTool(state, action.toolCallId, (tool) => ({
        ...tool,
        name: action.name,
        status: action.isError ? 'error' : 'done',
        result: toolResultText(action.content),
        ...withImages(action.content),
        ...cardOfCall(action.toolCard),
        live: undefined,
      }));
    case 'message_end':
      return endMessage(state, action.message, action.entryId);
    case 'auth_error':
      return refusedKey(state, action);
    case 'retry':
      return notice(
        state,
        'warning',
        `Retrying (${action.attempt}/${action.maxAttempts}) in ${Math.round(action.delayMs / 100) / 10} s: ${action.errorMessage}`,
        'retry',
      );
    case 'compaction_start':
      return notice({ ...state, compacting: true }, 'info', `Compacting the session (${action.reason})…`, 'compaction');
    case 'compaction_end':
      return notice({ ...state, compacting: false }, ...compactionOutcome(action), 'compaction', undefined, cardOf(action.card, action.reason));
    case 'branch_summary_start':
      return notice({ ...state, summarizingBranch: true }, 'info', 'Summarizing the branch being left…', 'branch-summary');
    case 'branch_summary_end':
      return notice({ ...state, summarizingBranch: false }, ...branchSummaryOutcome(action), 'branch-summary', undefined, cardOf(action.card));
    case 'tree_changed':
      return state;
    case 'agent_end':
      return endTurn(state, action.stopReason);
    case 'error':
      return notice(state, 'error', action.message);
    case 'queue_update':
      return { ...state, queue: { steering: action.steering, followUp: action.followUp } };
    case 'local_queue':
      return { ...state, queue: action.queue };
    case 'local_notice':
      return notice(state, action.level, action.text, action.topic, action.action, action.card);
    case 'local_context':
      return { ...state, context: action.usage };
    case 'local_reset':
      return { ...emptyChat(action.sessionId), items: action.items, nextId: action.items.length + 1, context: state.context };
    case 'local_tool_card':
      return upsertTool(state, action.toolCallId, (tool) => ({ ...tool, card: action.card }));
    case 'local_prepend':
      return { ...state, items: joinPages(action.items, state.items.filter((item) => !(item.kind === 'notice' && item.topic === EARLIER_TOPIC))) };
    default:
      return state;
  }
}

/** An earlier page before the items shown: a tool call cut from its result by the page boundary is one item again. */
function joinPages(earlier: ChatItem[], later: ChatItem[]): ChatItem[] {
  const results = new Map(later.flatMap((item) => (item.kind === 'tool' ? [[item.toolCallId, item] as const] : [])));
  const joined = new Set<ChatItem>();
  const page = earlier.map((item) => {
    const result = item.kind === 'tool' && item.status === 'unfinished' ? results.get(item.toolCallId) : undefined;
    if (!result || item.kind !== 'tool') return item;
    joined.add(result);
    return { ...result, id: item.id, name: item.name || result.name, arguments: item.arguments ?? result.arguments };
  });
  return [...page, ...later.filter((item) => !joined.has(item))];
}

type NewItem = ChatItem extends infer T ? (T extends ChatItem ? Omit<T, 'id' | 'rev'> : never) : never;

function push(state: ChatState, item: NewItem): ChatState {
  const created = { ...item, id: `i${state.nextId}`, rev: 1 } as ChatItem;
  return { ...state, items: [...state.items, created], nextId: state.nextId + 1 };
}

function replaceAt(state: ChatState, index: number, item: ChatItem): ChatState {
  const items = state.items.slice();
  items[index] = { ...item, rev: state.items[index].rev + 1 };
  return { ...state, items };
}

function startAssistant(state: ChatState): ChatState {
  return push(state, { kind: 'assistant', text: '', thinking: '', streaming: true });
}

function streamingIndex(state: ChatState): number {
  for (let index = state.items.length - 1; index >= 0; index--) {
    const item = state.items[index];
    if (item.kind === 'assistant') return item.streaming ? index : -1;
  }
  return -1;
}

function updateStreaming(state: ChatState, change: (item: AssistantItem) => AssistantItem): ChatState {
  let index = streamingIndex(state);
  if (index < 0) {
    // A delta without its message_start (the view opened mid-answer): start the answer here.
    state = startAssistant(state);
    index = state.items.length - 1;
  }
  return replaceAt(state, index, change(state.items[index] as AssistantItem));
}

function upsertTool(state: ChatState, toolCallId: string, change: (tool: ToolItem) => ToolItem): ChatState {
  const index = state.items.findIndex((item) => item.kind === 'tool' && item.toolCallId === toolCallId);
  if (index >= 0) return replaceAt(state, index, change(state.items[index] as ToolItem));
  const fresh: Omit<ToolItem, 'id' | 'rev'> = { kind: 'tool', toolCallId, name: '', arguments: undefined, status: 'pending' };
  const created = push(state, fresh);
  const last = created.items.length - 1;
  const items = created.items.slice();
  items[last] = { ...change(items[last] as ToolItem), rev: 1 };
  return { ...created, items };
}

function endMessage(state: ChatState, message: AgentMessage, entryId: string | null): ChatState {
  switch (message.role) {
    case 'user':
      return addUserMessage(state, messageText(message.content), entryId, message.content);
    case 'assistant':
      return endAssistant(state, message, entryId);
    case 'toolResult':
      return upsertTool(state, String(message.toolCallId ?? ''), (tool) =>
        tool.status === 'done' || tool.status === 'error'
          ? tool
          : {
              ...tool,
              name: tool.name || String(message.toolName ?? ''),
              status: message.isError ? 'error' : 'done',
              result: toolResultText(message.content),
              ...withImages(message.content),
              entryId,
            },
      );
    default:
      return state;
  }
}

function addUserMessage(state: ChatState, text: string, entryId: string | null, content: unknown): ChatState {
  return push(state, { kind: 'user', text, entryId, ...withImages(content) });
}

/** `{card}` when the event carries one (a server without cards sends none). */
function cardOfCall(card: ToolCard | undefined): { card?: ToolCard } {
  return card ? { card } : {};
}

/** `{images}` when the content has images, else nothing (most messages have none). */
function withImages(content: unknown): { images?: ImageView[] } {
  const images = messageImages(content);
  return images.length ? { images } : {};
}

function endAssistant(state: ChatState, message: AgentMessage, entryId: string | null): ChatState {
  let index = streamingIndex(state);
  if (index < 0) {
    state = startAssistant(state);
    index = state.items.length - 1;
  }
  const current = state.items[index] as AssistantItem;
  const finished: AssistantItem = {
    ...current,
    text: messageText(message.content) || current.text,
    thinking: thinkingText(message.content) || current.thinking,
    ...withImages(message.content),
    streaming: false,
    stopReason: message.stopReason,
    errorMessage: message.errorMessage,
    entryId,
  };
  state = replaceAt(state, index, finished);
  for (const call of toolCalls(message.content)) {
    state = upsertTool(state, call.id, (tool) => ({ ...tool, name: tool.name || call.name, arguments: tool.arguments ?? call.arguments }));
  }
  return state;
}

function lastLine(text: string): string | undefined {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return lines.length ? lines[lines.length - 1] : undefined;
}

function endTurn(state: ChatState, stopReason: string): ChatState {
  const items = state.items.map((item) => {
    if (item.kind === 'assistant' && item.streaming) return { ...item, streaming: false, rev: item.rev + 1 };
    if (item.kind === 'tool' && (item.status === 'pending' || item.status === 'running') && stopReason === 'aborted') {
      return { ...item, status: 'error' as const, result: item.result ?? 'Aborted', rev: item.rev + 1 };
    }
    return item;
  });
  const ended = { ...state, items, running: false };
  if (stopReason === 'aborted') return notice(ended, 'warning', 'Stopped.');
  if (stopReason === 'length') return notice(ended, 'warning', 'The answer was cut off at the output limit.');
  // A failed turn is already shown once: by its answer's error, an auth notice or an error event.
  return ended;
}

/** The provider refused the key: one notice saying which key and offering another, in place of
 * the failed answer's raw error. */
function refusedKey(state: ChatState, event: Extract<PiEvent, { type: 'auth_error' }>): ChatState {
  let index = state.items.length - 1;
  while (index >= 0 && state.items[index].kind !== 'assistant') index--;
  const answer = state.items[index];
  if (answer?.kind === 'assistant' && answer.errorMessage) {
    state = replaceAt(state, index, { ...answer, errorMessage: undefined });
  }
  const action: NoticeAction = { kind: 'setApiKey', label: `Set the ${event.provider} API Key…`, provider: event.provider };
  return notice(state, 'error', `${event.message}.`, 'auth', action);
}

function compactionOutcome(event: Extract<PiEvent, { type: 'compaction_end' }>): [NoticeLevel, string] {
  if (event.aborted) return ['warning', 'Compaction cancelled; the session is unchanged.'];
  if (event.errorMessage) return ['error', `Compaction failed: ${event.errorMessage} Nothing changed.`];
  const before = event.tokensBefore ? ` (${event.tokensBefore.toLocaleString('en-US')} tokens before)` : '';
  const retry = event.willRetry ? '; retrying the answer' : '';
  return ['info', `Compacted the session${before}${retry}.`];
}

function branchSummaryOutcome(event: Extract<PiEvent, { type: 'branch_summary_end' }>): [NoticeLevel, string] {
  if (event.aborted) return ['warning', 'Branch summary cancelled; the leaf did not move.'];
  if (event.errorMessage) return ['error', `Branch summary failed: ${event.errorMessage} Nothing changed.`];
  return ['info', event.entryId ? 'Summarized the branch left behind.' : 'Nothing was left behind to summarize.'];
}

function notice(state: ChatState, level: NoticeLevel, text: string, topic?: string, action?: NoticeAction, card?: CardView): ChatState {
  if (topic !== undefined) {
    const last = state.items.length - 1;
    const previous = state.items[last];
    if (previous && previous.kind === 'notice' && previous.topic === topic) {
      return replaceAt(state, last, { ...previous, level, text, action, card });
    }
  }
  return push(state, { kind: 'notice', level, text, topic, ...(action ? { action } : {}), ...(card ? { card } : {}) });
}

function cardOf(card: SummaryCard | undefined, reason?: string): CardView | undefined {
  return card ? { ...card, ...(reason ? { reason } : {}) } : undefined;
}
