// A tool call as the chat shows it: a card built from the server's ToolCard (docs/protocol.md,
// "Tool cards"): what was read, changed, run or found, with the file as a link, the diff, the
// command's output in a terminal block, the results, and why a call failed or was refused. The
// arguments as JSON only in the "raw" fold. A call without a card (an older server) shows its
// name, its arguments as a list and its result.
import { editReplacements, writtenChange } from '../chat/editCalls';
import type { ToolItem } from '../chat/reducer';
import type { QuestionView } from '../permissions';
import type { ToolCard, ToolCardResult } from '../protocol';
import { renderAnsi } from './ansi';
import { element } from './dom';
import type { PathTarget } from './pathText';

/** What a card needs from the chat: file links, the diff view, and which folds the user opened. */
export interface CardContext {
  fileLink(text: string, target: PathTarget): HTMLElement;
  openDiff(item: ToolItem): void;
  /** Fold keys (`<item>:<fold>`) the user opened, kept across redraws of a running card. */
  openFolds: Set<string>;
  /** The permission question waiting for an answer, shown in the running card it belongs to. */
  question?: QuestionView;
  /** One of the question's buttons was clicked. */
  answer(id: number, answer: string): void;
}

/** Diff lines shown before the rest is folded. */
const DIFF_SHOWN = 8;
/** Output lines shown before a finished command's output is folded. */
const OUTPUT_SHOWN = 12;

const STATUS_TEXT: Record<ToolItem['status'], string> = {
  pending: 'preparing',
  running: 'running',
  done: 'done',
  error: 'failed',
  unfinished: 'no result on this path',
};

export function drawToolCard(item: ToolItem, context: CardContext): HTMLElement {
  const card = item.card;
  const box = element('div', `tool ${item.status}${card ? ` kind-${card.kind} card-${card.status}` : ''}`);
  box.dataset.testid = 'tool-call';
  box.dataset.status = item.status;
  box.dataset.tool = item.name;
  if (card) box.dataset.kind = card.kind;
  box.append(header(item, context));
  // Tools run one at a time: the running call is the one asked about.
  if (context.question && item.status === 'running') box.append(questionBox(context.question, context));
  box.append(...(card ? body(item, card, context) : fallbackBody(item)));
  box.append(fold(context, item, 'raw', 'raw', () => [rawBlock(card?.rawArguments ?? JSON.stringify(item.arguments ?? {}, null, 2))]));
  return box;
}

/** The question in full (what pi wants to do, the command or change, why) with its answers. */
function questionBox(question: QuestionView, context: CardContext): HTMLElement {
  const box = element('div', 'tool-question');
  box.dataset.testid = 'tool-question';
  box.setAttribute('role', 'alertdialog');
  box.append(element('div', 'tool-question-title', question.title));
  if (question.detail) box.append(element('pre', 'tool-question-detail', question.detail));
  const actions = element('div', 'tool-actions');
  for (const [index, answer] of question.answers.entries()) {
    const button = element('button', index === 0 ? 'tool-answer' : 'secondary tool-answer', answer);
    button.dataset.testid = 'tool-answer';
    button.dataset.answer = answer;
    button.addEventListener('click', () => context.answer(question.id, answer));
    actions.append(button);
  }
  if (!question.answers.length) actions.append(element('span', 'tool-note', 'Answer in the dialog.'));
  box.append(actions);
  return box;
}

function header(item: ToolItem, context: CardContext): HTMLElement {
  const line = element('div', 'tool-header');
  const card = item.card;
  if (!card) {
    line.append(element('span', 'tool-name', item.name || 'tool'));
  } else if (card.path && (card.kind === 'read' || card.kind === 'edit' || card.kind === 'write')) {
    line.append(element('span', 'tool-verb', verb(card, item.status)), fileLink(card, context));
  } else if (card.kind === 'bash' && card.command !== undefined) {
    line.append(element('span', 'tool-verb', '$'), element('code', 'tool-command', card.command));
  } else if (card.kind === 'mcp') {
    line.append(element('span', 'tool-verb', card.server ?? 'MCP'), element('span', 'tool-name', card.tool ?? item.name));
  } else {
    line.append(element('span', 'tool-title', card.title));
  }
  const facts = element('span', 'tool-facts', card ? factsOf(card).join(' · ') : '');
  facts.dataset.testid = 'tool-facts';
  line.append(facts, statusOf(item));
  return line;
}

function verb(card: ToolCard, status: ToolItem['status']): string {
  const running = status === 'running' || status === 'pending';
  if (card.kind === 'read') return running ? 'Reading' : 'Read';
  if (card.kind === 'write') return card.created ? 'Created' : running ? 'Writing' : 'Wrote';
  return running ? 'Editing' : 'Edited';
}

function fileLink(card: ToolCard, context: CardContext): HTMLElement {
  const name = card.path ?? '';
  const target: PathTarget = { path: name, ...(card.startLine ? { line: card.startLine } : {}), ...(card.endLine ? { endLine: card.endLine } : {}) };
  const link = context.fileLink(name, target);
  link.dataset.testid = 'tool-file';
  return link;
}

function factsOf(card: ToolCard): string[] {
  const facts: string[] = [];
  if (card.kind === 'read' && card.startLine !== undefined) {
    const of = card.totalLines !== undefined ? ` of ${card.totalLines}` : '';
    facts.push(`lines ${card.startLine}–${card.endLine ?? card.startLine}${of}`);
  }
  if (card.added !== undefined || card.removed !== undefined) facts.push(`+${card.added ?? 0} −${card.removed ?? 0}`);
  if (card.sizeBytes !== undefined && card.kind !== 'bash') facts.push(formatSize(card.sizeBytes));
  if (card.kind === 'search' && card.resultCount !== undefined) facts.push(`${card.resultCount}${card.moreResults ? '+' : ''} result${card.resultCount === 1 ? '' : 's'}`);
  if (card.exitCode !== undefined && card.exitCode !== null) facts.push(`exit ${card.exitCode}`);
  if (card.killed) facts.push('killed');
  if (card.timedOut) facts.push('timed out');
  if (card.durationMs !== undefined) facts.push(formatDuration(card.durationMs));
  return facts;
}

function statusOf(item: ToolItem): HTMLElement {
  const card = item.card;
  let text = STATUS_TEXT[item.status];
  if (card?.status === 'denied') text = `denied${card.statusReason ? `: ${card.statusReason}` : ''}`;
  else if (item.status === 'error' && card?.statusReason) text = `failed: ${card.statusReason}`;
  const status = element('span', `tool-status ${card?.status === 'denied' ? 'error' : item.status}`, text);
  status.dataset.testid = 'tool-status';
  return status;
}

function body(item: ToolItem, card: ToolCard, context: CardContext): HTMLElement[] {
  const parts: HTMLElement[] = [];
  if (card.kind === 'edit' || card.kind === 'write') parts.push(...changeParts(item, card, context));
  else if (card.kind === 'bash') parts.push(...outputParts(item, card, context));
  else if (card.kind === 'search') parts.push(...searchParts(item, card, context));
  else if (card.kind === 'mcp' || card.kind === 'other') parts.push(argumentList(card.arguments.map(({ name, value }) => [name, value])));
  // A failure's text says why; a command's output and a search's results are shown above.
  const failed = item.status === 'error';
  const text = card.text ?? (failed ? item.result : undefined);
  if (text && (failed || (card.kind !== 'bash' && card.kind !== 'search'))) {
    const label = failed ? 'Error' : card.kind === 'read' ? 'Content' : 'Result';
    const folded = card.kind === 'read' || lineCount(text) > OUTPUT_SHOWN;
    parts.push(folded ? fold(context, item, 'text', `${label} (${formatSize(byteLength(text))})`, () => [resultBlock(text)], true) : resultBlock(text));
  }
  return parts;
}

function changeParts(item: ToolItem, card: ToolCard, context: CardContext): HTMLElement[] {
  const parts: HTMLElement[] = [];
  const diff = card.diff ?? [];
  if (diff.length) {
    parts.push(diffBlock(diff.slice(0, DIFF_SHOWN)));
    if (diff.length > DIFF_SHOWN) parts.push(fold(context, item, 'diff', `${diff.length - DIFF_SHOWN} more diff lines`, () => [diffBlock(diff.slice(DIFF_SHOWN))]));
  }
  const actions = element('div', 'tool-actions');
  if (item.status === 'done' && canShowDiff(item)) {
    const button = element('button', 'secondary tool-open-diff', 'Open diff');
    button.dataset.testid = 'tool-open-diff';
    button.addEventListener('click', () => context.openDiff(item));
    actions.append(button);
  }
  if (card.undoInEditor) actions.append(element('span', 'tool-note', 'Applied in the editor: Undo there takes it back.'));
  if (actions.childElementCount) parts.push(actions);
  return parts;
}

/**
 * The diff view needs the text before: an edit's replacements give it, an overwrite's patch
 * undone on what it wrote gives it, and a new file had none.
 */
function canShowDiff(item: ToolItem): boolean {
  return item.card?.created === true || editReplacements(item.arguments).length > 0 || writtenChange(item.arguments, item.card) !== undefined;
}

function diffBlock(lines: string[]): HTMLElement {
  const block = element('pre', 'tool-diff');
  block.dataset.testid = 'tool-diff';
  for (const line of lines) {
    const kind = line.startsWith('+') ? 'added' : line.startsWith('-') ? 'removed' : line.startsWith('@@') ? 'hunk' : 'context';
    const row = element('span', `diff-line ${kind}`, line);
    row.dataset.testid = 'diff-line';
    block.append(row);
  }
  return block;
}

function outputParts(item: ToolItem, card: ToolCard, context: CardContext): HTMLElement[] {
  const output = card.output ?? '';
  if (!output) return [];
  const running = item.status === 'running' || item.status === 'pending';
  const lines = lineCount(output);
  const size = formatSize(card.outputBytes ?? byteLength(output));
  const terminal = () => {
    const block = element('pre', 'terminal');
    block.dataset.testid = 'tool-output';
    renderAnsi(block, output);
    if (running) requestAnimationFrame(() => (block.scrollTop = block.scrollHeight));
    return block;
  };
  const note = card.outputTruncated ? element('div', 'tool-note', `The last part of ${size}${card.fullOutputPath ? `; all of it in ${card.fullOutputPath}` : ''}.`) : undefined;
  if (running || lines <= OUTPUT_SHOWN) return [terminal(), ...(note ? [note] : [])];
  return [fold(context, item, 'output', `Output (${lines} lines, ${size})`, () => [terminal(), ...(note ? [note] : [])])];
}

function searchParts(item: ToolItem, card: ToolCard, context: CardContext): HTMLElement[] {
  const results = card.results ?? [];
  if (!results.length) return card.text ? [] : [element('div', 'tool-note', 'Nothing found.')];
  return [fold(context, item, 'results', `${results.length}${card.moreResults ? '+' : ''} result${results.length === 1 ? '' : 's'}`, () => [resultList(results, context)])];
}

function resultList(results: ToolCardResult[], context: CardContext): HTMLElement {
  const list = element('ul', 'tool-results');
  for (const result of results) {
    const row = element('li');
    const label = result.line !== undefined ? `${result.path}:${result.line}` : result.path;
    row.append(context.fileLink(label, { path: result.path, ...(result.line !== undefined ? { line: result.line } : {}) }));
    if (result.text) row.append(element('span', 'tool-result-text', ` ${result.text}`));
    list.append(row);
  }
  return list;
}

function fallbackBody(item: ToolItem): HTMLElement[] {
  const args = item.arguments && typeof item.arguments === 'object' ? Object.entries(item.arguments as Record<string, unknown>) : [];
  const parts: HTMLElement[] = [];
  if (args.length) parts.push(argumentList(args.map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)])));
  if (item.result !== undefined) parts.push(resultBlock(item.result));
  return parts;
}

function argumentList(pairs: [string, string][]): HTMLElement {
  const list = element('dl', 'tool-arguments');
  list.dataset.testid = 'tool-arguments';
  for (const [name, value] of pairs) list.append(element('dt', undefined, name), element('dd', undefined, value));
  return list;
}

function resultBlock(text: string): HTMLElement {
  const block = element('pre', 'tool-result', text);
  block.dataset.testid = 'tool-result';
  return block;
}

function rawBlock(text: string): HTMLElement {
  const block = element('pre', 'tool-raw', text);
  block.dataset.testid = 'tool-raw';
  return block;
}

/**
 * A fold whose content is built on first opening (a long diff, output or result list costs
 * nothing until looked at), or at once when `eager` (text the chat's search and copy should find).
 */
function fold(context: CardContext, item: ToolItem, name: string, label: string, build: () => HTMLElement[], eager = false): HTMLElement {
  const key = `${item.id}:${name}`;
  const details = element('details', `tool-fold fold-${name}`);
  details.dataset.testid = `fold-${name}`;
  details.append(element('summary', undefined, label));
  let built = false;
  const fill = () => {
    if (built) return;
    built = true;
    details.append(...build());
  };
  if (eager || context.openFolds.has(key)) fill();
  details.open = context.openFolds.has(key);
  details.addEventListener('toggle', () => {
    if (details.open) {
      fill();
      context.openFolds.add(key);
    } else {
      context.openFolds.delete(key);
    }
  });
  return details;
}

const utf8 = new TextEncoder();

function byteLength(text: string): number {
  return utf8.encode(text).length;
}

function lineCount(text: string): number {
  return text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** pi's formatSize: bytes below 1 KB, then KB and MB with one decimal. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
