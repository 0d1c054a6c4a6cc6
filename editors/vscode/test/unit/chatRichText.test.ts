// The chat's pure text helpers: which words are file paths (and their lines), code highlighting
// per language, and the images the reducer keeps from a message.
import { describe, expect, it } from 'vitest';
import { emptyChat, reduce } from '../../src/chat/reducer';
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
