// The Context view's model: the bar's groups, the parts largest first, the figures it states.
import { describe, expect, it } from 'vitest';
import { barSegments, formatTokens, groupOf, headline, isEditable, partsLargestFirst } from '../../src/context/contextModel';
import type { ContextPart, ContextResult } from '../../src/protocol';

const parts: ContextPart[] = [
  { kind: 'base', label: 'Base prompt', tokens: 1000 },
  { kind: 'contextFile', label: 'AGENTS.md', tokens: 500, path: '/p/AGENTS.md' },
  { kind: 'tools', label: 'Tool declarations (7)', tokens: 1500 },
  { kind: 'message', label: 'user', tokens: 2000, entryId: 'a', role: 'user', preview: 'hi' },
  { kind: 'message', label: 'toolResult', tokens: 0, entryId: 'b', role: 'toolResult', contextEdit: 'removed' },
  { kind: 'usageDifference', label: "Provider's count beyond the estimates", tokens: -200 },
];

const context: ContextResult = {
  sessionId: 's1',
  total: 4800,
  basis: 'usage',
  contextWindow: 10000,
  compactAt: 8000,
  freeToWindow: 5200,
  freeToCompaction: 3200,
  parts,
};

describe('the Context view model', () => {
  it('stacks the bar by kind, as shares of the window, leaving out what is not positive', () => {
    expect(barSegments(context)).toEqual([
      { group: 'system', tokens: 1000, percent: 10 },
      { group: 'files', tokens: 500, percent: 5 },
      { group: 'tools', tokens: 1500, percent: 15 },
      { group: 'messages', tokens: 2000, percent: 20 },
    ]);
    expect(groupOf(parts[5])).toBe('provider');
  });

  it('lists the parts largest first, the forgotten ones after', () => {
    expect(partsLargestFirst(context).map((part) => part.label)).toEqual([
      'user',
      'Tool declarations (7)',
      'Base prompt',
      'AGENTS.md',
      'toolResult',
      "Provider's count beyond the estimates",
    ]);
  });

  it('offers edits on messages only', () => {
    expect(parts.map(isEditable)).toEqual([false, false, false, true, true, false]);
  });

  it('states the total, the window and the room before compaction', () => {
    expect(headline(context)).toBe('4.8k of 10k tokens (48 %) · compacts at 8.0k: 3.2k free');
    expect(headline({ ...context, compactAt: null, freeToCompaction: null })).toBe('4.8k of 10k tokens (48 %) · automatic compaction off: 5.2k free');
    expect(formatTokens(-200)).toBe('−200');
  });
});
