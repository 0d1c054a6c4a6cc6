// How full the context window is, in the steps the chat meter and the status bar warn at.
import type { ContextUsage } from './protocol';

export type ContextLevel = 'unknown' | 'ok' | 'high' | 'warning' | 'critical';

/** 75 % is worth a look, 90 % calls for a compaction soon, 95 % is about to compact or overflow. */
export function contextLevel(percent: number | null | undefined): ContextLevel {
  if (percent === null || percent === undefined || Number.isNaN(percent)) return 'unknown';
  if (percent >= 95) return 'critical';
  if (percent >= 90) return 'warning';
  if (percent >= 75) return 'high';
  return 'ok';
}

function compact(tokens: number): string {
  if (tokens >= 1_000_000) return `${(tokens / 1_000_000).toFixed(1)}M`;
  if (tokens >= 1000) return `${(tokens / 1000).toFixed(tokens >= 10_000 ? 0 : 1)}k`;
  return String(tokens);
}

/** "12.3k / 128k (10 %)", or "? / 128k" right after a compaction, when the size is unknown. */
export function describeUsage(usage: ContextUsage | null | undefined): string {
  if (!usage) return 'no model';
  const window = compact(usage.contextWindow);
  if (usage.tokens === null || usage.percent === null) return `? / ${window}`;
  return `${compact(usage.tokens)} / ${window} (${Math.round(usage.percent)} %)`;
}

/** Where automatic compaction starts, as a percentage of the window; undefined when it is off. */
export function compactionMark(usage: ContextUsage | null | undefined): number | undefined {
  if (!usage || usage.compactAt === null || usage.compactAt === undefined || !usage.contextWindow) return undefined;
  return Math.max(0, Math.min(100, (usage.compactAt / usage.contextWindow) * 100));
}

/** "Automatic compaction starts at 80 % (102k)", for tooltips beside the meter. */
export function describeCompactionMark(usage: ContextUsage | null | undefined): string | undefined {
  const mark = compactionMark(usage);
  if (mark === undefined || !usage || usage.compactAt === null) return undefined;
  return `Automatic compaction starts at ${Math.round(mark)} % (${compact(usage.compactAt)}).`;
}

/** What the user should know at each level (shown beside the meter and in its tooltip). */
export function levelWarning(level: ContextLevel): string | undefined {
  const warnings: Partial<Record<ContextLevel, string>> = {
    high: 'The context is 75 % full.',
    warning: 'The context is 90 % full: compact soon.',
    critical: 'The context is 95 % full: pi compacts before the next answer.',
  };
  return warnings[level];
}
