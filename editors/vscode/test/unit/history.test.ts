// Session history from JSONL files, and skill prompts read back as typed.
import { describe, expect, it } from 'vitest';
import { activePath, historyItems, parseSessionFile } from '../../src/chat/history';
import { skillInvocation, skillPreview } from '../../src/chat/messageText';

const lines = [
  { type: 'session', id: 's1', version: 3 },
  { type: 'message', id: 'u1', parentId: null, message: { role: 'user', content: 'first' } },
  { type: 'message', id: 'a1', parentId: 'u1', message: { role: 'assistant', content: [{ type: 'text', text: 'one' }, { type: 'toolCall', id: 'c1', name: 'ls', arguments: {} }], stopReason: 'toolUse' } },
  { type: 'message', id: 't1', parentId: 'a1', message: { role: 'toolResult', toolCallId: 'c1', toolName: 'ls', content: [{ type: 'text', text: 'app.py' }], isError: false } },
  { type: 'message', id: 'u2', parentId: 'a1', message: { role: 'user', content: 'other branch' } },
  { type: 'compaction', id: 'k1', parentId: 't1', summary: '## Goal\nx' },
];
const file = `${lines.map((line) => JSON.stringify(line)).join('\n')}\n{"type": "message", "id": "torn`;

describe('session history', () => {
  it('skips a torn last line', () => {
    expect(parseSessionFile(file)).toHaveLength(lines.length);
  });

  it('walks the active path from the leaf', () => {
    expect(activePath(parseSessionFile(file), 'k1').map((entry) => entry.id)).toEqual(['u1', 'a1', 't1', 'k1']);
    expect(activePath(parseSessionFile(file), null)).toEqual([]);
  });

  it('rebuilds the chat of the path: messages, tools with results, compactions', () => {
    const items = historyItems('s1', parseSessionFile(file), 'k1');
    expect(items.map((item) => item.kind)).toEqual(['user', 'assistant', 'tool', 'notice']);
    expect(items[1]).toMatchObject({ text: 'one', streaming: false });
    expect(items[2]).toMatchObject({ name: 'ls', status: 'done', result: 'app.py' });
    expect(items[3]).toMatchObject({ kind: 'notice', text: expect.stringContaining('## Goal') });
    const other = historyItems('s1', parseSessionFile(file), 'u2');
    expect(other.at(-1)).toMatchObject({ kind: 'user', text: 'other branch' });
    expect(other.find((item) => item.kind === 'tool')).toMatchObject({ status: 'unfinished' });
  });
});

describe('skill prompts', () => {
  const expanded = '<skill name="review" location="/p/SKILL.md">\nReferences are relative to /p.\n\nList bugs.\n</skill>\n\napp.py';

  it('are read back as the command the user typed', () => {
    expect(skillInvocation(expanded)).toEqual({ name: 'review', args: 'app.py', body: 'References are relative to /p.\n\nList bugs.' });
    expect(skillInvocation('<skill name="x" location="/p">\nBody\n</skill>')).toMatchObject({ name: 'x', args: '' });
    expect(skillInvocation('just text')).toBeUndefined();
  });

  it('are previewed by name', () => {
    expect(skillPreview('<skill name="review" location="/p/SKILL.md"> References are relative')).toBe('/skill:review');
    expect(skillPreview('Fix the test')).toBe('Fix the test');
  });
});
