// The status-bar item's text and colours, against the vscode stub.
import { describe, expect, it } from 'vitest';
import { ContextStatusBar } from '../../src/statusBar';
import type { StateResult } from '../../src/protocol';
import { createdStatusBarItems } from './vscode-stub';

function state(percent: number | null, compactAt: number | null = 83616): StateResult {
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

  it('says where automatic compaction starts, and nothing when it is off', () => {
    const bar = new ContextStatusBar();
    const item = createdStatusBarItems.at(-1) as { tooltip: string };
    bar.update(state(12, 50000));
    expect(item.tooltip).toContain('Automatic compaction starts at 50 % (50k).');
    bar.update(state(12, null));
    expect(item.tooltip).not.toContain('Automatic compaction');
  });
});
