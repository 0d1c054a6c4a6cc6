// The chat webview's script: keeps the chat state (the same reducer as the extension host),
// draws it, and sends the user's prompts and actions to the host. The state and the unsent draft
// are saved with `setState`, so hiding and showing the view loses nothing.
import type { Completion, FromWebview, McpSummary, ModelInfo, ToWebview } from '../chat/messages';
import { editReplacements, writtenChange } from '../chat/editCalls';
import { applyNotification, type ChatState, EARLIER_TOPIC, emptyChat, reduce, type ToolItem } from '../chat/reducer';
import { compactionMark, contextLevel, describeCompactionMark, describeUsage, levelWarning } from '../contextLevel';
import { setupReason } from '../chat/setup';
import { EDITOR_PROVIDER } from '../languageModels/models';
import { acceptCompletion, matchingCompletions } from './completion';
import { PathLinker } from './links';
import type { PathTarget } from './pathText';
import { renderQueue } from './queue';
import { revealEntry, TranscriptRenderer } from './render';
import { RichText } from './richText';

interface SavedState {
  chat: ChatState;
  draft: string;
  model: ModelInfo;
  completions: Completion[];
}

declare function acquireVsCodeApi(): {
  postMessage(message: FromWebview): void;
  getState(): SavedState | undefined;
  setState(state: SavedState): void;
};

const vscode = acquireVsCodeApi();
const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const input = byId<HTMLTextAreaElement>('input');
const send = byId<HTMLButtonElement>('send');
const followUp = byId<HTMLButtonElement>('follow-up');
const stop = byId<HTMLButtonElement>('stop');
const status = byId<HTMLSpanElement>('status');
const completionList = byId<HTMLDivElement>('completions');
const transcript = byId('transcript');
const queueList = byId('queue');
const queueActions = {
  remove: (id: string) => vscode.postMessage({ type: 'removeQueued', id }),
  edit: (id: string, text: string) => vscode.postMessage({ type: 'editQueued', id, text }),
};
const linker = new PathLinker(
  (paths) => vscode.postMessage({ type: 'checkPaths', paths }),
  (target) => vscode.postMessage({ type: 'openFile', ...target }),
);
const rich = new RichText(linker, (text) => vscode.postMessage({ type: 'copyText', text }));
const cards = {
  fileLink: (text: string, target: PathTarget) => linker.anchor(text, target),
  answer: (id: number, answer: string) => vscode.postMessage({ type: 'answerQuestion', id, answer }),
  openDiff: (item: ToolItem) =>
    vscode.postMessage({
      type: 'openDiff',
      path: item.card?.path ?? '',
      replacements: editReplacements(item.arguments),
      created: item.card?.created === true,
      written: writtenChange(item.arguments, item.card),
    }),
};
const renderer = new TranscriptRenderer(transcript, rich, cards, (action) => {
  if (action.kind === 'setApiKey') vscode.postMessage({ type: 'setApiKey', provider: action.provider });
  else if (action.kind === 'openFile') vscode.postMessage({ type: 'openFile', path: action.path });
  else loadEarlier(true);
});
/** The cursor of the earlier page asked for, so scrolling asks once per page. */
let earlierAsked: string | undefined;
/** After an earlier page is put on top: the distance from the bottom to keep, so the view does not jump. */
let keepFromBottom: number | undefined;
/**
 * Where the transcript was last scrolled to, by the user or by drawing it: only a move up from
 * there to the top loads the page before. Clearing the transcript for another session, or drawing
 * it again, moves it too, and the browser reports that move a frame later, as if the user had
 * scrolled; so drawing sets this to where it left the transcript.
 */
let lastScrollTop = 0;

function earlierCursor(): string | undefined {
  const first = chat.items[0];
  return first?.kind === 'notice' && first.topic === EARLIER_TOPIC && first.action?.kind === 'loadEarlier' ? first.action.before : undefined;
}

/** Asks for the earlier page once per cursor when scrolling; a click on the button asks again. */
function loadEarlier(clicked = false): void {
  const before = earlierCursor();
  if (!before || (before === earlierAsked && !clicked)) return;
  earlierAsked = before;
  vscode.postMessage({ type: 'loadEarlier', before });
}

const saved = vscode.getState();
let chat: ChatState = saved?.chat ?? emptyChat();
let model: ModelInfo = saved?.model ?? { model: null, thinkingLevel: null, provider: null, keyStatus: null, known: false };
let serverState = 'starting';
let completions: Completion[] = saved?.completions ?? [];
let shown: Completion[] = [];
let selected = 0;
input.value = saved?.draft ?? '';

let frame = 0;
function scheduleRender(): void {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    render();
  });
}

function render(): void {
  renderer.render(chat.items);
  if (keepFromBottom !== undefined) {
    transcript.scrollTop = transcript.scrollHeight - keepFromBottom;
    keepFromBottom = undefined;
  }
  lastScrollTop = transcript.scrollTop;
  document.body.dataset.running = String(chat.running);
  document.body.dataset.compacting = String(chat.compacting);
  send.textContent = chat.running ? 'Steer' : 'Send';
  send.title = chat.running ? 'Deliver to the running turn after its current tool (Enter)' : 'Send (Enter)';
  followUp.hidden = !chat.running;
  stop.hidden = !chat.running;
  status.textContent = chat.compacting
    ? 'Compacting…'
    : chat.summarizingBranch
      ? 'Summarizing the branch…'
      : chat.running
        ? 'Working…'
        : '';
  // A state saved by an older version has no queue.
  renderQueue(queueList, chat.queue ?? emptyChat().queue, queueActions);
  renderModel();
  renderSetup();
  renderMeter();
  save();
}

/** With no model that can be called, a short setup takes the transcript's place at the top. */
function renderSetup(): void {
  const setup = byId('setup');
  const reason = setupReason(model);
  setup.hidden = reason === undefined || serverState !== 'running' || !model.known;
  if (reason !== undefined) byId('setup-reason').textContent = reason;
  const keyButton = byId<HTMLButtonElement>('setup-key');
  keyButton.textContent =
    model.keyStatus === 'missing' && model.provider === EDITOR_PROVIDER
      ? 'Choose a model VS Code provides…'
      : model.keyStatus === 'missing' && model.provider
        ? `Enter the ${model.provider} API key…`
        : 'Choose a provider and enter its API key…';
}

function renderModel(): void {
  const button = byId<HTMLButtonElement>('model');
  const key = model.keyStatus === 'missing' ? ' · no key' : '';
  button.textContent = model.model ? `${model.model}${model.thinkingLevel ? ` · ${model.thinkingLevel}` : ''}${key}` : 'no model';
}

/** The header's MCP button: hidden without servers, `MCP 2/3` (and ⚠ when one failed). */
function renderMcp(summary: McpSummary): void {
  const button = byId<HTMLButtonElement>('mcp');
  button.hidden = summary.total === 0;
  button.dataset.failed = String(summary.failed);
  const starting = summary.connecting > 0 ? ' …' : '';
  button.textContent = `${summary.failed > 0 ? '⚠ ' : ''}MCP ${summary.connected}/${summary.total}${starting}`;
  button.title = [
    `${summary.connected} of ${summary.total} MCP servers connected`,
    summary.connecting > 0 ? `${summary.connecting} starting` : '',
    summary.failed > 0 ? `${summary.failed} failed` : '',
    'Click for the MCP servers',
  ]
    .filter(Boolean)
    .join('\n');
}

function renderMeter(): void {
  const usage = chat.context;
  const level = contextLevel(usage?.percent);
  const meter = byId('meter');
  meter.dataset.level = level;
  meter.setAttribute('aria-valuenow', String(Math.round(usage?.percent ?? 0)));
  byId('meter-fill').style.width = `${Math.min(100, usage?.percent ?? 0)}%`;
  const mark = compactionMark(usage);
  const markElement = byId('meter-mark');
  markElement.hidden = mark === undefined;
  markElement.style.left = `${mark ?? 0}%`;
  const warning = levelWarning(level);
  byId('meter-text').textContent = `${warning && level !== 'high' ? '⚠ ' : ''}${describeUsage(usage)}`;
  meter.title = [warning ?? 'Context usage', describeCompactionMark(usage), 'Click to see what the context holds'].filter(Boolean).join('\n');
}

function save(): void {
  vscode.setState({ chat, draft: input.value, model, completions });
}

function submit(behavior?: 'steer' | 'followUp'): void {
  const text = input.value;
  if (!text.trim()) return;
  vscode.postMessage({ type: 'prompt', text, behavior: chat.running ? behavior ?? 'steer' : undefined });
  input.value = '';
  closeCompletions();
  save();
}

function updateCompletions(): void {
  shown = matchingCompletions(input.value, input.selectionStart ?? 0, completions);
  selected = 0;
  drawCompletions();
}

function drawCompletions(): void {
  completionList.hidden = shown.length === 0;
  completionList.replaceChildren(
    ...shown.map((completion, index) => {
      const option = document.createElement('div');
      option.className = `completion${index === selected ? ' selected' : ''}`;
      option.setAttribute('role', 'option');
      option.setAttribute('aria-selected', String(index === selected));
      option.dataset.testid = 'completion';
      const name = document.createElement('span');
      name.className = 'completion-name';
      name.textContent = completion.insert;
      const description = document.createElement('span');
      description.className = 'completion-description';
      description.textContent = completion.description;
      option.append(name, description);
      option.addEventListener('mousedown', (event) => {
        event.preventDefault();
        accept(completion);
      });
      return option;
    }),
  );
}

function closeCompletions(): void {
  shown = [];
  drawCompletions();
}

function accept(completion: Completion): void {
  const accepted = acceptCompletion(input.value, completion);
  input.value = accepted.text;
  input.setSelectionRange(accepted.caret, accepted.caret);
  closeCompletions();
  input.focus();
}

function onCompletionKey(event: KeyboardEvent): boolean {
  if (shown.length === 0) return false;
  if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
    selected = (selected + (event.key === 'ArrowDown' ? 1 : shown.length - 1)) % shown.length;
    drawCompletions();
    return true;
  }
  if (event.key === 'Tab' || (event.key === 'Enter' && !event.shiftKey)) {
    accept(shown[selected]);
    return true;
  }
  if (event.key === 'Escape') {
    closeCompletions();
    return true;
  }
  return false;
}

input.addEventListener('keydown', (event) => {
  if (onCompletionKey(event)) {
    event.preventDefault();
    return;
  }
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    submit(event.altKey ? 'followUp' : 'steer');
  } else if (event.key === 'Escape' && chat.running) {
    event.preventDefault();
    vscode.postMessage({ type: 'abort' });
  }
});
input.addEventListener('input', () => {
  updateCompletions();
  save();
});
input.addEventListener('blur', () => closeCompletions());
send.addEventListener('click', () => submit('steer'));
followUp.addEventListener('click', () => submit('followUp'));
stop.addEventListener('click', () => vscode.postMessage({ type: 'abort' }));
byId('compact').addEventListener('click', () => vscode.postMessage({ type: 'compact' }));
byId('meter').addEventListener('click', () => vscode.postMessage({ type: 'openContext' }));
byId('model').addEventListener('click', () => vscode.postMessage({ type: 'pickModel' }));
byId('mcp').addEventListener('click', () => vscode.postMessage({ type: 'pickMcp' }));
byId('new-session').addEventListener('click', () => vscode.postMessage({ type: 'newSession' }));
byId('setup-key').addEventListener('click', () =>
  vscode.postMessage({ type: 'setApiKey', provider: model.keyStatus === 'missing' ? model.provider ?? undefined : undefined }),
);
// Scrolling up to the top of the transcript loads the page before it. Only a move up counts, and
// not while the view is hidden (it then reports the top without the user scrolling).
transcript.addEventListener('scroll', () => {
  if (transcript.clientHeight === 0) return;
  const top = transcript.scrollTop;
  if (top < 40 && top < lastScrollTop) loadEarlier();
  lastScrollTop = top;
});
byId('setup-local').addEventListener('click', () => vscode.postMessage({ type: 'useLocalServer' }));
byId('setup-editor-model').addEventListener('click', () => vscode.postMessage({ type: 'useEditorModel' }));
byId('setup-model').addEventListener('click', () => vscode.postMessage({ type: 'pickModel' }));

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  switch (message.type) {
    case 'reset':
      chat = message.state;
      model = message.model;
      completions = message.completions;
      renderer.clear();
      lastScrollTop = transcript.scrollTop;
      break;
    case 'event':
      chat = applyNotification(chat, message.notification);
      break;
    case 'action':
      if (message.action.type === 'local_prepend') keepFromBottom = transcript.scrollHeight - transcript.scrollTop;
      chat = reduce(chat, message.action);
      break;
    case 'model':
      model = message.model;
      break;
    case 'completions':
      completions = message.items;
      break;
    case 'server':
      serverState = message.status.state;
      document.body.dataset.server = message.status.state;
      document.body.dataset.serverGeneration = String(message.status.generation);
      byId('server-status').hidden = message.status.state !== 'stopped';
      if (message.status.problem) byId('server-status').textContent = `pi-lsp is not running: ${message.status.problem}`;
      break;
    case 'mcp':
      renderMcp(message.summary);
      break;
    case 'revealEntry':
      revealEntry(transcript, message.entryId);
      return;
    case 'paths':
      linker.answer(message.existing);
      return;
    case 'question':
      renderer.setQuestion(message.question);
      break;
    case 'restoreQueued':
      input.value = [message.text, input.value].filter((text) => text.trim()).join('\n\n');
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
      break;
    case 'editorText':
      input.value = message.text;
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
      break;
  }
  scheduleRender();
});

render();
input.focus();
vscode.postMessage({ type: 'ready' });
