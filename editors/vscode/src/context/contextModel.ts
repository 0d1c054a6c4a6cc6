// What the Context view shows of `pi/context`, as pure functions (unit-tested): the parts grouped
// into the bar's kinds, the parts largest first, and the figures of the header.
import type { ContextPart, ContextPartKind, ContextResult } from '../protocol';

/** The bar's groups, in the order they are drawn. */
export const BAR_GROUPS = ['system', 'files', 'skills', 'tools', 'extensions', 'summaries', 'messages', 'provider'] as const;
export type BarGroup = (typeof BAR_GROUPS)[number];

export const GROUP_LABELS: Record<BarGroup, string> = {
  system: 'System prompt',
  files: 'Context files',
  skills: 'Skills index',
  tools: 'Tool declarations',
  extensions: 'Extensions',
  summaries: 'Summaries',
  messages: 'Messages',
  provider: "Provider's count beyond the estimates",
};

const GROUP_OF_KIND: Record<ContextPartKind, BarGroup> = {
  base: 'system',
  systemFile: 'system',
  appendSystem: 'system',
  environment: 'system',
  contextFile: 'files',
  nestedContextFile: 'files',
  skills: 'skills',
  tools: 'tools',
  extension: 'extensions',
  compactionSummary: 'summaries',
  branchSummary: 'summaries',
  message: 'messages',
  usageDifference: 'provider',
};

export function groupOf(part: ContextPart): BarGroup {
  return GROUP_OF_KIND[part.kind] ?? 'messages';
}

export interface BarSegment {
  group: BarGroup;
  tokens: number;
  /** Its share of the context window, in percent (segments of negative size are left out). */
  percent: number;
}

/** The stacked bar: each group's tokens as a share of the window. */
export function barSegments(context: ContextResult): BarSegment[] {
  const totals = new Map<BarGroup, number>();
  for (const part of context.parts) totals.set(groupOf(part), (totals.get(groupOf(part)) ?? 0) + part.tokens);
  const window = Math.max(1, context.contextWindow);
  return BAR_GROUPS.flatMap((group) => {
    const tokens = totals.get(group) ?? 0;
    return tokens > 0 ? [{ group, tokens, percent: (tokens / window) * 100 }] : [];
  });
}

/** The parts largest first; the forgotten ones (0 tokens) last, in their order. */
export function partsLargestFirst(context: ContextResult): ContextPart[] {
  return context.parts
    .map((part, index) => ({ part, index }))
    .sort((a, b) => b.part.tokens - a.part.tokens || a.index - b.index)
    .map(({ part }) => part);
}

/** The roles whose messages can be forgotten, replaced and restored. */
export function isEditable(part: ContextPart): boolean {
  if (!part.entryId) return false;
  if (part.kind === 'nestedContextFile') return true;
  return part.kind === 'message' && ['user', 'assistant', 'toolResult', 'custom'].includes(part.role ?? '');
}

export function formatTokens(tokens: number): string {
  const sign = tokens < 0 ? '−' : '';
  const value = Math.abs(tokens);
  if (value >= 10_000) return `${sign}${Math.round(value / 1000)}k`;
  if (value >= 1000) return `${sign}${(value / 1000).toFixed(1)}k`;
  return `${sign}${value}`;
}

/** "12.3k of 128k tokens (10 %) · compacts at 112k: 99.7k free". */
export function headline(context: ContextResult): string {
  const percent = Math.round((context.total / Math.max(1, context.contextWindow)) * 100);
  const head = `${formatTokens(context.total)} of ${formatTokens(context.contextWindow)} tokens (${percent} %)`;
  const free = context.compactAt !== null && context.freeToCompaction !== null
    ? `compacts at ${formatTokens(context.compactAt)}: ${formatTokens(context.freeToCompaction)} free`
    : `automatic compaction off: ${formatTokens(context.freeToWindow)} free`;
  return `${head} · ${free}`;
}

export function basisText(context: ContextResult): string {
  return context.basis === 'usage'
    ? "The provider's count of the last answer, plus estimates of what came after it."
    : 'Estimated (no answer reported its usage since the last change of the context).';
}
