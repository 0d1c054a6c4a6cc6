// The webview's pure parts: input completion, the context meter and sanitized markdown.
import { describe, expect, it } from 'vitest';
import type { Completion } from '../../src/chat/messages';
import { compactionMark, contextLevel, describeCompactionMark, describeUsage, levelWarning } from '../../src/contextLevel';
import { acceptCompletion, matchingCompletions } from '../../src/webview/completion';
import { renderMarkdown } from '../../src/webview/markdown';

const completions: Completion[] = [
  { insert: '/skill:review', description: 'Review a diff', kind: 'skill' },
  { insert: '/skill:refactor', description: 'Refactor', kind: 'skill' },
  { insert: '/fix-tests', description: 'Fix failing tests', kind: 'template' },
];

describe('input completion', () => {
  it('offers skills and templates while the first word is typed', () => {
    expect(matchingCompletions('/skill:re', 9, completions).map((item) => item.insert)).toEqual(['/skill:review', '/skill:refactor']);
    expect(matchingCompletions('/fix', 4, completions).map((item) => item.insert)).toEqual(['/fix-tests']);
    expect(matchingCompletions('/', 1, completions)).toHaveLength(3);
    expect(matchingCompletions('hello /skill', 12, completions)).toEqual([]);
    expect(matchingCompletions('/skill:review now', 17, completions)).toEqual([]);
  });

  it('replaces the first word and keeps the rest', () => {
    expect(acceptCompletion('/skill:re', completions[0])).toEqual({ text: '/skill:review ', caret: 14 });
    expect(acceptCompletion('/rev the diff', completions[0]).text).toBe('/skill:review the diff');
  });
});

describe('the context meter', () => {
  it.each([
    [null, 'unknown'],
    [10, 'ok'],
    [75, 'high'],
    [90, 'warning'],
    [95, 'critical'],
  ])('at %s %% is %s', (percent, level) => {
    expect(contextLevel(percent as number | null)).toBe(level);
  });

  it('warns from 75 % on', () => {
    expect(levelWarning('ok')).toBeUndefined();
    expect(levelWarning('high')).toContain('75 %');
    expect(levelWarning('warning')).toContain('compact soon');
    expect(levelWarning('critical')).toContain('95 %');
  });

  it('describes usage compactly', () => {
    expect(describeUsage({ tokens: 12345, contextWindow: 128000, percent: 9.6, compactAt: 111616 })).toBe('12k / 128k (10 %)');
    expect(describeUsage({ tokens: null, contextWindow: 200000, percent: null, compactAt: null })).toBe('? / 200k');
    expect(describeUsage(null)).toBe('no model');
  });

  it('marks where automatic compaction starts', () => {
    const usage = { tokens: 1000, contextWindow: 200000, percent: 0.5, compactAt: 160000 };
    expect(compactionMark(usage)).toBe(80);
    expect(describeCompactionMark(usage)).toBe('Automatic compaction starts at 80 % (160k).');
    expect(compactionMark({ ...usage, compactAt: null })).toBeUndefined();
    expect(describeCompactionMark(null)).toBeUndefined();
  });
});

describe('markdown rendering', () => {
  it('escapes raw HTML and drops script links', () => {
    const html = renderMarkdown('<img src=x onerror=alert(1)> [x](javascript:alert(1)) **bold**');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img');
    expect(html).not.toContain('href="javascript:');
    expect(html).toContain('<strong>bold</strong>');
  });
});
