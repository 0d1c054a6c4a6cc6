// The chat reducer: streaming, tool calls, notices, the queue and session filtering.
import { describe, expect, it } from 'vitest';
import { applyNotification, type ChatState, emptyChat, isSeqGap, reduce } from '../../src/chat/reducer';
import type { PiEvent } from '../../src/protocol';

function run(events: PiEvent[], state: ChatState = emptyChat('s1')): ChatState {
  return events.reduce(reduce, state);
}

const userMessage = (text: string) => ({
  type: 'message_end' as const,
  entryId: 'u1',
  message: { role: 'user', content: [{ type: 'text', text }] },
});

describe('the chat reducer', () => {
  it('streams an answer and replaces it with the saved message', () => {
    const state = run([
      { type: 'agent_start' },
      userMessage('hello'),
      { type: 'message_start', role: 'assistant' },
      { type: 'thinking_delta', delta: 'Let me ' },
      { type: 'thinking_delta', delta: 'think.' },
      { type: 'text_delta', delta: 'Hi ' },
      { type: 'text_delta', delta: 'there' },
    ]);
    expect(state.running).toBe(true);
    expect(state.items.map((item) => item.kind)).toEqual(['user', 'assistant']);
    expect(state.items[1]).toMatchObject({ text: 'Hi there', thinking: 'Let me think.', streaming: true });
    const ended = run(
      [
        { type: 'message_end', entryId: 'a1', message: { role: 'assistant', content: [{ type: 'text', text: 'Hi there!' }], stopReason: 'stop' } },
        { type: 'agent_end', stopReason: 'stop', leafId: 'a1' },
      ],
      state,
    );
    expect(ended.running).toBe(false);
    expect(ended.items[1]).toMatchObject({ text: 'Hi there!', streaming: false, entryId: 'a1', stopReason: 'stop' });
  });

  it('bumps the revision of changed items only', () => {
    const state = run([userMessage('a'), { type: 'message_start', role: 'assistant' }]);
    const next = reduce(state, { type: 'text_delta', delta: 'x' });
    expect(next.items[0]).toBe(state.items[0]);
    expect(next.items[1].rev).toBe(state.items[1].rev + 1);
  });

  it('follows a tool call from the model through its execution to its result', () => {
    const state = run([
      { type: 'message_start', role: 'assistant' },
      { type: 'toolcall_start', toolCallId: 'c1', name: 'read' },
      {
        type: 'message_end',
        entryId: 'a1',
        message: { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'app.py' } }], stopReason: 'toolUse' },
      },
      { type: 'tool_execution_start', toolCallId: 'c1', name: 'read', arguments: { path: 'app.py' } },
    ]);
    const tool = state.items.find((item) => item.kind === 'tool');
    expect(tool).toMatchObject({ name: 'read', status: 'running', arguments: { path: 'app.py' } });
    const done = reduce(state, {
      type: 'tool_execution_end',
      toolCallId: 'c1',
      name: 'read',
      isError: false,
      content: [{ type: 'text', text: 'def add' }],
      details: null,
      entryId: 't1',
    });
    expect(done.items.filter((item) => item.kind === 'tool')).toEqual([expect.objectContaining({ status: 'done', result: 'def add' })]);
  });

  it('shows a running command\'s output as it streams, and its result when it ends', () => {
    const output = (text: string) => ({
      type: 'tool_execution_update' as const,
      toolCallId: 'c1',
      name: 'bash',
      content: [{ type: 'text', text }],
      details: null,
    });
    const running = run([
      { type: 'tool_execution_start', toolCallId: 'c1', name: 'bash', arguments: { command: 'make' } },
      output('building a\n'),
      output('building a\nbuilding b\n'),
    ]);
    const tool = running.items.find((item) => item.kind === 'tool');
    expect(tool).toMatchObject({ status: 'running', result: 'building a\nbuilding b\n', live: 'building b' });
    const done = reduce(running, {
      type: 'tool_execution_end',
      toolCallId: 'c1',
      name: 'bash',
      isError: false,
      content: [{ type: 'text', text: 'building a\nbuilding b\ndone' }],
      details: null,
      entryId: 't1',
    });
    const finished = done.items.find((item) => item.kind === 'tool');
    expect(finished).toMatchObject({ status: 'done', result: 'building a\nbuilding b\ndone' });
    expect(finished).not.toHaveProperty('live', expect.anything());
  });

  it('marks failed tools and reports an aborted turn', () => {
    const state = run([
      { type: 'agent_start' },
      { type: 'tool_execution_start', toolCallId: 'c1', name: 'bash', arguments: { command: 'sleep 9' } },
      { type: 'message_start', role: 'assistant' },
      { type: 'text_delta', delta: 'partial' },
      { type: 'agent_end', stopReason: 'aborted', leafId: 'x' },
    ]);
    expect(state.items.find((item) => item.kind === 'tool')).toMatchObject({ status: 'error' });
    expect(state.items.find((item) => item.kind === 'assistant')).toMatchObject({ streaming: false, text: 'partial' });
    expect(state.items.at(-1)).toMatchObject({ kind: 'notice', level: 'warning', text: 'Stopped.' });
  });

  it('shows a failed turn once: with the error of its last answer', () => {
    const state = run([
      { type: 'message_start', role: 'assistant' },
      { type: 'message_end', entryId: 'a1', message: { role: 'assistant', content: [], stopReason: 'error', errorMessage: 'HTTP 500' } },
      { type: 'agent_end', stopReason: 'error', leafId: 'a1' },
    ]);
    expect(state.items).toEqual([expect.objectContaining({ kind: 'assistant', errorMessage: 'HTTP 500', streaming: false })]);
  });

  it('shows a refused key once: as a notice naming the key, offering another', () => {
    const state = run([
      { type: 'message_start', role: 'assistant' },
      { type: 'message_end', entryId: 'a1', message: { role: 'assistant', content: [], stopReason: 'error', errorMessage: '401 AuthenticationError: bad key' } },
      { type: 'auth_error', provider: 'openai', status: 401, keySource: 'auth.json', message: 'openai refused the API key from auth.json (/a/auth.json) (401 AuthenticationError: bad key)' },
      { type: 'agent_end', stopReason: 'error', leafId: 'a1' },
    ]);
    expect(state.items).toHaveLength(2);
    expect(state.items[0]).toMatchObject({ kind: 'assistant', errorMessage: undefined });
    expect(state.items[1]).toMatchObject({
      kind: 'notice',
      level: 'error',
      topic: 'auth',
      text: 'openai refused the API key from auth.json (/a/auth.json) (401 AuthenticationError: bad key).',
      action: { kind: 'setApiKey', provider: 'openai', label: 'Set the openai API Key…' },
    });
    expect(JSON.stringify(state.items).match(/401 AuthenticationError/g)).toHaveLength(1);
  });

  it('keeps one notice per compaction and per retry series', () => {
    const state = run([
      { type: 'compaction_start', reason: 'manual' },
      { type: 'compaction_end', reason: 'manual', aborted: false, willRetry: false, entryId: 'c1', tokensBefore: 12345 },
      { type: 'retry', attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: 'overloaded' },
      { type: 'retry', attempt: 2, maxAttempts: 3, delayMs: 4000, errorMessage: 'overloaded' },
    ]);
    expect(state.compacting).toBe(false);
    expect(state.items.map((item) => (item.kind === 'notice' ? item.text : ''))).toEqual([
      'Compacted the session (12,345 tokens before).',
      'Retrying (2/3) in 4 s: overloaded',
    ]);
  });

  it('puts a compaction card, with its reason, under the compaction notice', () => {
    const card = { summary: '## Goal\nz', readFiles: ['a.py'], modifiedFiles: [], tokensBefore: 900, tokensAfter: 120, model: 'openai/scripted', cost: 0.001 };
    const state = run([
      { type: 'compaction_start', reason: 'overflow' },
      { type: 'compaction_end', reason: 'overflow', aborted: false, willRetry: true, entryId: 'c1', tokensBefore: 900, card },
    ]);
    expect(state.items).toEqual([expect.objectContaining({ kind: 'notice', topic: 'compaction', card: { ...card, reason: 'overflow' } })]);
  });

  it('reports failed and cancelled compactions', () => {
    const failed = run([
      { type: 'compaction_start', reason: 'threshold' },
      { type: 'compaction_end', reason: 'threshold', aborted: false, willRetry: false, errorMessage: 'provider down' },
    ]);
    expect(failed.items).toEqual([expect.objectContaining({ level: 'error', text: 'Compaction failed: provider down Nothing changed.' })]);
    const cancelled = run([{ type: 'compaction_end', reason: 'manual', aborted: true, willRetry: false }]);
    expect(cancelled.items[0]).toMatchObject({ level: 'warning' });
  });

  it('shows a branch summary while the model writes it, and how it ended', () => {
    const started = run([{ type: 'branch_summary_start', targetId: 'e1' }]);
    expect(started.summarizingBranch).toBe(true);
    expect(started.items).toEqual([expect.objectContaining({ level: 'info', text: 'Summarizing the branch being left…' })]);
    const done = run([{ type: 'branch_summary_end', targetId: 'e1', aborted: false, entryId: 's1' }], started);
    expect(done.summarizingBranch).toBe(false);
    expect(done.items).toEqual([expect.objectContaining({ level: 'info', text: 'Summarized the branch left behind.' })]);
    const failed = run([{ type: 'branch_summary_end', targetId: 'e1', aborted: false, errorMessage: 'provider down' }], started);
    expect(failed.items).toEqual([expect.objectContaining({ level: 'error', text: 'Branch summary failed: provider down Nothing changed.' })]);
    const cancelled = run([{ type: 'branch_summary_end', targetId: 'e1', aborted: true }], started);
    expect(cancelled.items[0]).toMatchObject({ level: 'warning' });
  });

  it('keeps the queue out of the transcript: queue_update replaces it whole', () => {
    let state = reduce(emptyChat('s1'), { type: 'agent_start' });
    const queued = { steering: [{ id: 'q1', text: 'use tabs' }], followUp: [{ id: 'q2', text: 'then test' }] };
    state = reduce(state, { type: 'queue_update', ...queued });
    expect(state.queue).toEqual(queued);
    expect(state.items).toEqual([]);
    state = reduce(state, { type: 'queue_update', steering: [], followUp: queued.followUp });
    state = reduce(state, userMessage('use tabs'));
    expect(state.queue).toEqual({ steering: [], followUp: queued.followUp });
    expect(state.items).toEqual([expect.objectContaining({ kind: 'user', text: 'use tabs' })]);
    expect(reduce(state, { type: 'local_queue', queue: { steering: [], followUp: [] } }).queue.followUp).toEqual([]);
  });

  it('ignores the events of other sessions and tells gaps in seq', () => {
    let state = applyNotification(emptyChat('s1'), { sessionId: 's1', seq: 1, event: { type: 'agent_start' } });
    expect(state.lastSeq).toBe(1);
    const other = applyNotification(state, { sessionId: 's2', seq: 7, event: { type: 'error', message: 'x' } });
    expect(other).toBe(state);
    expect(isSeqGap(state, { sessionId: 's1', seq: 2, event: { type: 'agent_start' } })).toBe(false);
    expect(isSeqGap(state, { sessionId: 's1', seq: 4, event: { type: 'agent_start' } })).toBe(true);
    state = reduce(state, { type: 'local_reset', sessionId: 's2', items: [] });
    expect(state).toMatchObject({ sessionId: 's2', items: [], running: false, lastSeq: null });
  });

  it('starts an answer for deltas that arrive without their message_start', () => {
    const state = run([{ type: 'text_delta', delta: 'mid-answer' }]);
    expect(state.items).toEqual([expect.objectContaining({ kind: 'assistant', text: 'mid-answer', streaming: true })]);
  });
});
