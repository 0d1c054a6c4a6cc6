// The status-bar item's text and colours, against the vscode stub.
import { describe, expect, it } from 'vitest';
import { ContextStatusBar } from '../../src/statusBar';
import { describeCost, formatDollars } from '../../src/cost';
import type { SessionCost, StateResult } from '../../src/protocol';
import { createdStatusBarItems } from './vscode-stub';

const NO_COST: SessionCost = { total: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cachedPercent: null };

function state(
  percent: number | null,
  cost: SessionCost = NO_COST,
  compactAt: number | null = 83616,
): StateResult {
  return {
    sessionId: 's1',
    path: '/s.jsonl',
    name: null,
    leafId: null,
    model: { model: 'openai/gpt-4o', provider: 'openai', modelId: 'gpt-4o', keyStatus: 'key', keySource: 'environment', source: 'settings' },
    thinkingLevel: 'medium',
    contextUsage: { tokens: percent === null ? null : percent * 1000, contextWindow: 100000, percent, compactAt },
    messageCount: 4,
    isStreaming: false,
    isCompacting: false,
    readOnly: false,
    cost,
    steeringMode: 'one-at-a-time',
    followUpMode: 'one-at-a-time',
    pendingMessageCount: 0,
  };
}

describe('the status bar item', () => {
  it('shows the usage and colours high usage', () => {
    const bar = new ContextStatusBar();
    const item = createdStatusBarItems.at(-1) as { text: string; backgroundColor?: { id: string } };
    bar.update(state(12));
    expect(item.text).toContain('12k / 100k (12 %)');
    expect(item.backgroundColor).toBeUndefined();
    bar.update(state(91));
    expect(item.backgroundColor?.id).toBe('statusBarItem.warningBackground');
    bar.update(state(96));
    expect(item.backgroundColor?.id).toBe('statusBarItem.errorBackground');
    bar.update(state(null));
    expect(item.text).toContain('? / 100k');
  });

  it('shows the session cost with the cached share, and the token split in the tooltip', () => {
    const bar = new ContextStatusBar();
    const item = createdStatusBarItems.at(-1) as { text: string; tooltip: string };
    bar.update(state(12));
    expect(item.text).toBe('$(comment-discussion) 12k / 100k (12 %)');
    const cost = { total: 0.4213, input: 20_000, output: 3_000, cacheRead: 71_000, cacheWrite: 9_000, cachedPercent: 71 };
    bar.update(state(12, cost));
    expect(item.text).toMatch(/12 %\) · \$0\.42 \(71 % cached\)$/);
    expect(item.tooltip).toContain('Cost $0.42: 100k tokens in, 71 % read from the prompt cache (71k read, 9.0k written), 3.0k out');
  });
});

describe('the cost text', () => {
  it('keeps small amounts readable and leaves out what there is nothing to say about', () => {
    expect(formatDollars(0)).toBe('$0');
    expect(formatDollars(0.0004)).toBe('<$0.001');
    expect(formatDollars(0.0042)).toBe('$0.004');
    expect(formatDollars(1.5)).toBe('$1.50');
    expect(describeCost({ ...NO_COST, total: 0.02, input: 900 })).toBe('$0.020');
    expect(describeCost({ ...NO_COST, input: 100, cacheRead: 300, cachedPercent: 75 })).toBe('(75 % cached)');
  });
});

describe('the compaction mark', () => {
  it('says where automatic compaction starts, and nothing when it is off', () => {
    const bar = new ContextStatusBar();
    const item = createdStatusBarItems.at(-1) as { tooltip: string };
    bar.update(state(12, NO_COST, 50000));
    expect(item.tooltip).toContain('Automatic compaction starts at 50 % (50k).');
    bar.update(state(12, NO_COST, null));
    expect(item.tooltip).not.toContain('Automatic compaction');
  });
});
