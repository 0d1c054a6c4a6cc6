// The chat's pure helpers: which words are file paths (and their lines), code highlighting per
// language, the images the reducer keeps from a message, an edit undone for the diff view, and
// the tool cards kept in the chat state, their figures and colours.
import { describe, expect, it } from 'vitest';
import { editReplacements, textBefore } from '../../src/chat/editCalls';
import { historyItems } from '../../src/chat/history';
import { emptyChat, reduce } from '../../src/chat/reducer';
import { paletteColor } from '../../src/webview/ansi';
import type { ToolCard, TranscriptEntry } from '../../src/protocol';
import { formatDuration, formatSize } from '../../src/webview/cards';
import { highlightCode, languageOf } from '../../src/webview/highlight';
import { renderMarkdown } from '../../src/webview/markdown';
import { findPathCandidates } from '../../src/webview/pathText';

const paths = (text: string) => findPathCandidates(text).map(({ start: _s, end: _e, ...target }) => target);

describe('path candidates', () => {
  it('finds relative, nested and absolute paths with their lines', () => {
    expect(paths('The bug is in src/app.py:42, see also README.md and /etc/hosts.')).toEqual([
      { path: 'src/app.py', line: 42 },
      { path: 'README.md' },
      { path: '/etc/hosts' },
    ]);
    expect(paths('lib/x.ts:3:7 and notes/a.md:10-20')).toEqual([
      { path: 'lib/x.ts', line: 3, column: 7 },
      { path: 'notes/a.md', line: 10, endLine: 20 },
    ]);
  });

  it('gives the span of the path and its line in the text', () => {
    const [match] = findPathCandidates('open app.py:2 now');
    expect('open app.py:2 now'.slice(match.start, match.end)).toBe('app.py:2');
  });

  it('leaves out URLs, versions, numbers and plain words', () => {
    expect(paths('See https://example.com/a/b.html, version 1.2.3, 3.14, 10ms, e.g. this')).toEqual([]);
  });
});

describe('code highlighting', () => {
  it('knows the common languages and their short names', () => {
    expect(languageOf('python')).toBe('python');
    expect(languageOf('ts {1,3}')).toBe('typescript');
    expect(languageOf('sh')).toBe('bash');
    expect(languageOf('no-such-language')).toBeUndefined();
    expect(languageOf('')).toBeUndefined();
  });

  it('marks up the tokens of a fenced block and escapes the code', () => {
    const html = renderMarkdown('```python\ndef add(a, b):\n    return "<b>"\n```');
    expect(html).toContain('<span class="hljs-keyword">def</span>');
    expect(html).toContain('&lt;b&gt;');
    expect(html).not.toContain('<b>');
    expect(html).toContain('class="language-python"');
  });

  it('leaves an unknown language to markdown-it, escaped and plain', () => {
    expect(highlightCode('<x>', 'klingon')).toBe('');
    expect(renderMarkdown('```klingon\n<x>\n```')).toContain('&lt;x&gt;');
  });
});

describe('images in messages', () => {
  const image = { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' };

  it('keeps the raster images of a user message and a tool result', () => {
    let state = reduce(emptyChat('s'), { type: 'message_end', entryId: 'e1', message: { role: 'user', content: [{ type: 'text', text: 'look' }, image] } });
    expect(state.items[0]).toMatchObject({ kind: 'user', text: 'look', images: [{ mimeType: 'image/png', data: 'iVBORw0KGgo=' }] });
    state = reduce(state, { type: 'tool_execution_end', toolCallId: 't1', name: 'read', isError: false, content: [image], details: null, entryId: 'e2' });
    expect(state.items[1]).toMatchObject({ kind: 'tool', result: '[image]', images: [{ mimeType: 'image/png' }] });
  });

  it('shows no image a data URL should not carry, and adds nothing to messages without images', () => {
    const svg = { type: 'image', data: 'PHN2Zz4=', mimeType: 'image/svg+xml' };
    const state = reduce(emptyChat('s'), { type: 'message_end', entryId: 'e1', message: { role: 'user', content: [{ type: 'text', text: 'x' }, svg] } });
    expect(state.items[0]).not.toHaveProperty('images');
  });
});

describe('an edit undone for the diff view', () => {
  it('reads the replacements of pi 1.6 and 0.84 edit calls', () => {
    expect(editReplacements({ path: 'a.py', edits: [{ oldText: 'a - b', newText: 'a + b' }] })).toEqual([{ oldText: 'a - b', newText: 'a + b' }]);
    expect(editReplacements({ path: 'a.py', oldText: 'x', newText: 'y' })).toEqual([{ oldText: 'x', newText: 'y' }]);
    expect(editReplacements({ path: 'a.py' })).toEqual([]);
    expect(editReplacements('not an object')).toEqual([]);
  });

  it('rebuilds the text before, last replacement first', () => {
    const after = 'def add(a, b):\n    return a + b\n\nTOTAL = 2\n';
    const edits = [
      { oldText: 'a - b', newText: 'a + b' },
      { oldText: 'TOTAL = 1', newText: 'TOTAL = 2' },
    ];
    expect(textBefore(after, edits)).toBe('def add(a, b):\n    return a - b\n\nTOTAL = 1\n');
  });

  it('gives up when the file no longer holds what the edit wrote', () => {
    expect(textBefore('changed since', [{ oldText: 'a', newText: 'zzz' }])).toBeUndefined();
    expect(textBefore('anything', [{ oldText: 'deleted', newText: '' }])).toBeUndefined();
  });
});

describe('card figures', () => {
  it('sizes as pi formats them, durations in ms, s and min', () => {
    expect([formatSize(512), formatSize(2048), formatSize(3 * 1024 * 1024)]).toEqual(['512 B', '2.0 KB', '3.0 MB']);
    expect([formatDuration(40), formatDuration(1500), formatDuration(125_000)]).toEqual(['40 ms', '1.5 s', '2 min 5 s']);
  });

  it("maps the terminal's 256 colours: the theme's 16, the cube and the greys", () => {
    expect(paletteColor(1)).toBe('var(--vscode-terminal-ansiRed)');
    expect(paletteColor(9)).toBe('var(--vscode-terminal-ansiBrightRed)');
    expect(paletteColor(16)).toBe('rgb(0, 0, 0)');
    expect(paletteColor(208)).toBe('rgb(255, 135, 0)');
    expect(paletteColor(232)).toBe('rgb(8, 8, 8)');
    expect(paletteColor(256)).toBeUndefined();
  });
});

describe('tool cards in the chat state', () => {
  const card: ToolCard = { kind: 'edit', title: 'Edited app.py', status: 'done', arguments: [{ name: 'path', value: 'app.py' }], rawArguments: '{\n  "path": "app.py"\n}', path: 'app.py', added: 1, removed: 1, diff: ['-a - b', '+a + b'] };

  it('keeps the latest card of a live call, and nothing for a server without cards', () => {
    let state = reduce(emptyChat('s'), { type: 'tool_execution_start', toolCallId: 'c1', name: 'edit', arguments: { path: 'app.py' }, toolCard: { ...card, status: 'running' } });
    expect(state.items[0]).toMatchObject({ kind: 'tool', card: { status: 'running' } });
    state = reduce(state, { type: 'tool_execution_end', toolCallId: 'c1', name: 'edit', isError: false, content: [], details: null, entryId: 'e1', toolCard: card });
    expect(state.items[0]).toMatchObject({ status: 'done', card: { status: 'done', added: 1 } });
    const plain = reduce(emptyChat('s'), { type: 'tool_execution_start', toolCallId: 'c2', name: 'ls', arguments: {} });
    expect(plain.items[0]).not.toHaveProperty('card');
  });

  it("gives a replayed tool result its entry's card", () => {
    const entries: TranscriptEntry[] = [
      { entryId: 'a1', type: 'message', timestamp: null, message: { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'edit', arguments: { path: 'app.py' } }], stopReason: 'toolUse' } },
      { entryId: 't1', type: 'message', timestamp: null, message: { role: 'toolResult', toolCallId: 'c1', toolName: 'edit', content: [{ type: 'text', text: 'ok' }], isError: false }, toolCard: card },
    ];
    const items = historyItems('s1', { sessionId: 's1', leafId: 't1', total: 2, offset: 0, entries });
    expect(items.filter((item) => item.kind === 'tool')).toEqual([expect.objectContaining({ name: 'edit', status: 'done', card })]);
  });
});
