// Session history from pi/messages, and skill prompts read back as typed.
import { describe, expect, it } from 'vitest';
import { CONTEXT_EDIT_NOTES, historyItems } from '../../src/chat/history';
import { type ChatState, emptyChat, reduce } from '../../src/chat/reducer';
import { skillInvocation, skillPreview } from '../../src/chat/messageText';
import type { MessagesResult, TranscriptEntry } from '../../src/protocol';

const entries: TranscriptEntry[] = [
  { entryId: 'u1', type: 'message', timestamp: null, message: { role: 'user', content: 'first' } },
  { entryId: 'a1', type: 'message', timestamp: null, message: { role: 'assistant', content: [{ type: 'text', text: 'one' }, { type: 'toolCall', id: 'c1', name: 'ls', arguments: {} }], stopReason: 'toolUse' } },
  { entryId: 't1', type: 'message', timestamp: null, message: { role: 'toolResult', toolCallId: 'c1', toolName: 'ls', content: [{ type: 'text', text: 'app.py' }], isError: false } },
  { entryId: 'k1', type: 'compaction', timestamp: null, summary: '## Goal\nx' },
];
const transcript = (shown: TranscriptEntry[], total = shown.length): MessagesResult => ({ sessionId: 's1', leafId: 'k1', total, offset: total - shown.length, entries: shown });

describe('session history', () => {
  it('rebuilds the chat of the path: messages, tools with results, compactions', () => {
    const items = historyItems('s1', transcript(entries));
    expect(items.map((item) => item.kind)).toEqual(['user', 'assistant', 'tool', 'notice']);
    expect(items[1]).toMatchObject({ text: 'one', streaming: false });
    expect(items[2]).toMatchObject({ name: 'ls', status: 'done', result: 'app.py' });
    expect(items[3]).toMatchObject({ kind: 'notice', text: expect.stringContaining('Compacted'), card: { summary: '## Goal\nx' } });
  });

  it('shows a compaction as a card: its files, tokens and cost from the entry', () => {
    const card = { summary: '## Goal\ny', readFiles: ['a.py'], modifiedFiles: ['b.py'], tokensBefore: 1200, cost: 0.002 };
    const items = historyItems('s1', transcript([{ entryId: 'k2', type: 'compaction', timestamp: null, summary: card.summary, card }]));
    expect(items).toEqual([expect.objectContaining({ kind: 'notice', card })]);
  });

  it('marks a call whose result is not on the path as unfinished', () => {
    const cut = historyItems('s1', transcript(entries.slice(0, 2)));
    expect(cut.find((item) => item.kind === 'tool')).toMatchObject({ status: 'unfinished' });
  });

  it('notes under an entry that a context edit removed it from the context or replaced it there', () => {
    const edited: TranscriptEntry[] = [
      { entryId: 'u1', type: 'message', timestamp: null, contextEdit: 'removed', message: { role: 'user', content: 'my key sk-1' } },
      { entryId: 'a1', type: 'message', timestamp: null, contextEdit: 'replaced', message: { role: 'assistant', content: [{ type: 'text', text: 'short' }], stopReason: 'stop' } },
      { entryId: 'u2', type: 'message', timestamp: null, message: { role: 'user', content: 'next' } },
    ];
    const items = historyItems('s1', transcript(edited));
    expect(items.map((item) => item.kind)).toEqual(['user', 'notice', 'assistant', 'notice', 'user']);
    expect(items[1]).toMatchObject({ text: CONTEXT_EDIT_NOTES.removed });
    expect(items[3]).toMatchObject({ text: CONTEXT_EDIT_NOTES.replaced });
  });

  it('offers to load the earlier entries left out, before the first one shown', () => {
    const items = historyItems('s1', transcript(entries.slice(2), 9));
    expect(items[0]).toMatchObject({ kind: 'notice', topic: 'earlier', text: expect.stringContaining('7 earlier entries') });
    expect(items[0]).toMatchObject({ action: { kind: 'loadEarlier', before: 't1' } });
    expect(historyItems('s1', transcript(entries)).some((item) => item.kind === 'notice' && item.topic === 'earlier')).toBe(false);
  });

  it('puts an earlier page in place of the notice, with ids of its own', () => {
    let state: ChatState = reduce(emptyChat('s1'), { type: 'local_reset', sessionId: 's1', items: historyItems('s1', transcript(entries.slice(2), 4)) });
    const page = historyItems('s1', { ...transcript(entries.slice(0, 2), 4), offset: 0 }, 'p1-');
    state = reduce(state, { type: 'local_prepend', items: page });
    // The call on the earlier page and its result on the later one are one item again.
    expect(state.items.map((item) => item.kind)).toEqual(['user', 'assistant', 'tool', 'notice']);
    expect(state.items[2]).toMatchObject({ name: 'ls', status: 'done', result: 'app.py', arguments: {} });
    expect(new Set(state.items.map((item) => item.id)).size).toBe(state.items.length);
    expect(state.items[0].id).toBe('p1-i1');
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
