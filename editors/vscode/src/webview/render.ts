// Draws the transcript from the chat state. Each item keeps its element; only items whose `rev`
// changed are redrawn, so a streaming answer does not re-render the whole conversation. Every item
// is built at once: building costs little next to laying the transcript out, which CSS containment
// keeps to the items that changed; deferring either (lazy bodies, `content-visibility`) measured
// worse when scrolling (docs/performance.md).
import type { AssistantItem, CardView, ChatItem, NoticeAction, NoticeItem, UserItem } from '../chat/reducer';
import { type ImageView, skillInvocation } from '../chat/messageText';
import type { QuestionView } from '../permissions';
import { type CardContext, drawToolCard } from './cards';
import { element } from './dom';
import { renderMarkdown } from './markdown';
import type { RichText } from './richText';

interface Drawn {
  element: HTMLElement;
  rev: number;
}

/** A message's images, each as large as the view allows. */
function drawImages(images: ImageView[] | undefined): HTMLElement[] {
  return (images ?? []).map((image) => {
    const shown = element('img', 'message-image');
    shown.dataset.testid = 'message-image';
    shown.alt = `An image (${image.mimeType})`;
    shown.src = `data:${image.mimeType};base64,${image.data}`;
    return shown;
  });
}

const counts = new Intl.NumberFormat('en-US');

/** "1,234 characters" for a folded thinking block. */
function lengthOf(text: string): string {
  return `${counts.format(text.length)} character${text.length === 1 ? '' : 's'}`;
}

function drawUser(item: UserItem): HTMLElement {
  const box = element('div', 'message user');
  box.dataset.testid = 'user-message';
  box.append(element('div', 'who', 'You'));
  const skill = skillInvocation(item.text);
  if (!skill) {
    box.append(element('div', 'text plain', item.text), ...drawImages(item.images));
    return box;
  }
  // The server sends the expanded skill; show what the user typed, the skill's text on demand.
  box.append(element('div', 'text plain', `/skill:${skill.name}${skill.args ? ` ${skill.args}` : ''}`));
  const details = element('details', 'skill-body');
  details.append(element('summary', undefined, `Skill ${skill.name}`));
  details.append(element('div', 'text plain', skill.body));
  box.append(details);
  return box;
}

function drawAssistant(item: AssistantItem, openThinking: Set<string>, rich: RichText): HTMLElement {
  const box = element('div', `message assistant${item.streaming ? ' streaming' : ''}`);
  box.dataset.testid = 'assistant-message';
  box.dataset.streaming = String(item.streaming);
  box.append(element('div', 'who', 'Pi'));
  if (item.thinking) {
    const details = element('details', 'thinking');
    details.dataset.testid = 'thinking';
    details.open = openThinking.has(item.id);
    details.addEventListener('toggle', () => (details.open ? openThinking.add(item.id) : openThinking.delete(item.id)));
    const summary = element('summary', undefined, item.streaming && !item.text ? 'Thinking…' : `Thinking (${lengthOf(item.thinking)})`);
    summary.dataset.testid = 'thinking-summary';
    details.append(summary);
    details.append(element('div', 'text plain', item.thinking));
    box.append(details);
  }
  box.append(rich.markdown(item.text, 'assistant-text'), ...drawImages(item.images));
  if (item.stopReason === 'error' && item.errorMessage) box.append(element('div', 'error-text', item.errorMessage));
  return box;
}

const REASONS: Record<string, string> = {
  manual: 'asked for',
  threshold: 'the context reached the compaction threshold',
  overflow: 'the provider refused the context or cut the answer short',
};

function tokens(value: number | undefined): string {
  return value === undefined ? '?' : value.toLocaleString('en-US');
}

/** A summary's card: why, tokens before → after, model and cost, the files as links, the summary folded. */
function drawCard(card: CardView, act: (action: NoticeAction) => void): HTMLElement {
  const box = element('div', 'card');
  box.dataset.testid = 'summary-card';
  const facts: string[] = [];
  if (card.reason) facts.push(`Why: ${REASONS[card.reason] ?? card.reason}`);
  if (card.tokensBefore !== undefined || card.tokensAfter !== undefined) facts.push(`${tokens(card.tokensBefore)} → ${tokens(card.tokensAfter)} tokens`);
  if (card.model) facts.push(`by ${card.model}`);
  if (card.cost !== undefined) facts.push(`$${card.cost.toFixed(4)}`);
  if (facts.length) {
    const line = element('div', 'card-facts', facts.join(' · '));
    line.dataset.testid = 'card-facts';
    box.append(line);
  }
  for (const [label, paths] of [['Read', card.readFiles], ['Modified', card.modifiedFiles]] as const) {
    if (!paths.length) continue;
    const list = element('div', 'card-files');
    list.append(element('span', 'card-files-label', `${label}: `));
    for (const path of paths) {
      const link = element('button', 'link card-file', path);
      link.dataset.testid = 'card-file';
      link.addEventListener('click', () => act({ kind: 'openFile', label: path, path }));
      list.append(link);
    }
    box.append(list);
  }
  const details = element('details', 'card-summary');
  details.append(element('summary', undefined, 'Summary'));
  const body = element('div', 'text markdown');
  body.dataset.testid = 'card-summary';
  body.innerHTML = renderMarkdown(card.summary);
  details.append(body);
  box.append(details);
  return box;
}

function drawNotice(item: NoticeItem, act: (action: NoticeAction) => void): HTMLElement {
  const box = element('div', `notice ${item.level}`);
  box.dataset.testid = 'notice';
  box.dataset.level = item.level;
  if (item.topic) box.dataset.topic = item.topic;
  box.setAttribute('role', item.level === 'error' ? 'alert' : 'status');
  box.innerHTML = renderMarkdown(item.text);
  if (item.card) box.append(drawCard(item.card, act));
  const action = item.action;
  if (action) {
    const button = element('button', 'notice-action', action.label);
    button.dataset.testid = 'notice-action';
    button.addEventListener('click', () => act(action));
    box.append(button);
  }
  return box;
}

/** The longest text a context menu hands the "Replace in Context…" box to start from. */
const CONTEXT_TEXT_LIMIT = 2000;

/**
 * Marks the element of a stored message with its entry, and with VS Code's webview context
 * (`data-vscode-context`), so the chat's context menu offers "Remove from Context", "Replace in
 * Context…" and "Restore" for it (package.json `webview/context`).
 */
function markEntry(element: HTMLElement, item: ChatItem): void {
  if (item.kind === 'notice' || !item.entryId) return;
  element.dataset.entryId = item.entryId;
  if (item.contextEdit) element.dataset.contextEdit = item.contextEdit;
  const text = item.kind === 'tool' ? item.result ?? '' : item.text;
  element.dataset.vscodeContext = JSON.stringify({
    webviewSection: 'piEntry',
    piEntryId: item.entryId,
    piEdited: item.contextEdit ?? '',
    piText: text.slice(0, CONTEXT_TEXT_LIMIT),
    preventDefaultContextMenuItems: true,
  });
}

/** Scrolls `container` to the element of `entryId` and highlights it for a moment. */
export function revealEntry(container: HTMLElement, entryId: string): boolean {
  const target = container.querySelector<HTMLElement>(`[data-entry-id="${CSS.escape(entryId)}"]`);
  if (!target) return false;
  target.scrollIntoView({ block: 'center' });
  target.classList.add('revealed');
  setTimeout(() => target.classList.remove('revealed'), 2000);
  return true;
}

export class TranscriptRenderer {
  private readonly drawn = new Map<string, Drawn>();
  private readonly openThinking = new Set<string>();
  private readonly cards: CardContext;

  constructor(
    private readonly container: HTMLElement,
    private readonly rich: RichText,
    cards: Omit<CardContext, 'openFolds'>,
    private readonly act: (action: NoticeAction) => void = () => undefined,
  ) {
    this.cards = { ...cards, openFolds: new Set() };
  }

  /** The permission question waiting (or none): the running tool cards are drawn again with it. */
  setQuestion(question: QuestionView | undefined): void {
    this.cards.question = question;
    for (const drawn of this.drawn.values()) {
      if (drawn.element.dataset.testid === 'tool-call' && drawn.element.dataset.status === 'running') drawn.rev = -1;
    }
  }

  render(items: ChatItem[]): void {
    const stickToBottom = this.isAtBottom();
    const wanted = new Set(items.map((item) => item.id));
    for (const [id, drawn] of this.drawn) {
      if (!wanted.has(id)) {
        drawn.element.remove();
        this.drawn.delete(id);
      }
    }
    let previous: Element | null = null;
    for (const item of items) {
      const element = this.elementFor(item);
      const expected: Element | null = previous ? previous.nextElementSibling : this.container.firstElementChild;
      if (expected !== element) this.container.insertBefore(element, expected);
      previous = element;
    }
    if (stickToBottom) this.container.scrollTop = this.container.scrollHeight;
  }

  clear(): void {
    this.container.replaceChildren();
    this.drawn.clear();
  }

  private elementFor(item: ChatItem): HTMLElement {
    const drawn = this.drawn.get(item.id);
    if (drawn && drawn.rev === item.rev) return drawn.element;
    const fresh = this.draw(item);
    fresh.dataset.item = item.id;
    markEntry(fresh, item);
    drawn?.element.replaceWith(fresh);
    this.drawn.set(item.id, { element: fresh, rev: item.rev });
    return fresh;
  }

  private draw(item: ChatItem): HTMLElement {
    switch (item.kind) {
      case 'user':
        return drawUser(item);
      case 'assistant':
        return drawAssistant(item, this.openThinking, this.rich);
      case 'tool':
        return drawToolCard(item, this.cards);
      case 'notice':
        return drawNotice(item, this.act);
    }
  }

  private isAtBottom(): boolean {
    const { scrollTop, scrollHeight, clientHeight } = this.container;
    return scrollHeight - scrollTop - clientHeight < 40;
  }
}
