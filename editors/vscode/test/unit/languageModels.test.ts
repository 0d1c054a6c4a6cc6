// The models VS Code provides: the conversion of pi-lsp's chat messages to VS Code's parts and
// back, the model list, the error codes, the picker's vendor groups and the cost line.
import { describe, expect, it } from 'vitest';
import { setupReason } from '../../src/chat/setup';
import { costDetails, describeCost } from '../../src/cost';
import { fromAnswerPart, IMAGE_PLACEHOLDER, type PartFactory, toChatMessages } from '../../src/languageModels/conversion';
import { describeModels, errorCodeFor } from '../../src/languageModels/models';
import { modelPickItems } from '../../src/modelPicks';
import type { LanguageModelMessage, ModelInfo, SessionCost } from '../../src/protocol';

type Recorded = Record<string, unknown>;

/** Records what the mapping builds, as VS Code's classes would hold it. */
function recording(images: boolean): PartFactory<Recorded, Recorded> {
  return {
    user: (parts) => ({ role: 'User', parts }),
    assistant: (parts) => ({ role: 'Assistant', parts }),
    text: (value) => ({ text: value }),
    toolCall: (callId, name, input) => ({ callId, name, input }),
    toolResult: (callId, content) => ({ resultOf: callId, content }),
    image: (data, mimeType) => (images ? { mimeType, bytes: Array.from(data) } : undefined),
  };
}

const CONVERSATION: LanguageModelMessage[] = [
  { role: 'user', content: [{ type: 'text', text: 'You are pi.' }] },
  { role: 'user', content: [{ type: 'text', text: 'read it' }, { type: 'image', mimeType: 'image/png', data: 'aGk=' }] },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Reading.' },
      { type: 'toolCall', callId: 'call-1', name: 'read', input: { path: 'app.py' } },
    ],
  },
  { role: 'user', content: [{ type: 'toolResult', callId: 'call-1', content: [{ type: 'text', text: 'def add' }] }] },
];

describe("pi-lsp's messages as VS Code's", () => {
  it('keeps the roles, the text, the tool calls and their results, and images where VS Code takes them', () => {
    expect(toChatMessages(CONVERSATION, recording(true))).toEqual([
      { role: 'User', parts: [{ text: 'You are pi.' }] },
      { role: 'User', parts: [{ text: 'read it' }, { mimeType: 'image/png', bytes: [104, 105] }] },
      { role: 'Assistant', parts: [{ text: 'Reading.' }, { callId: 'call-1', name: 'read', input: { path: 'app.py' } }] },
      { role: 'User', parts: [{ resultOf: 'call-1', content: [{ text: 'def add' }] }] },
    ]);
  });

  it('says an image was left out where VS Code takes none', () => {
    expect(toChatMessages(CONVERSATION, recording(false))[1]).toEqual({ role: 'User', parts: [{ text: 'read it' }, { text: IMAGE_PLACEHOLDER }] });
  });

  it('streams text, thinking and tool calls back, and nothing for an empty part', () => {
    expect(fromAnswerPart({ kind: 'text', value: 'Hi' })).toEqual({ type: 'text', text: 'Hi' });
    expect(fromAnswerPart({ kind: 'thinking', value: 'Hmm' })).toEqual({ type: 'thinking', text: 'Hmm' });
    expect(fromAnswerPart({ kind: 'toolCall', callId: 'c', name: 'ls', input: {} })).toEqual({ type: 'toolCall', callId: 'c', name: 'ls', input: {} });
    expect(fromAnswerPart({ kind: 'text', value: '' })).toBeUndefined();
  });
});

describe("VS Code's models and errors", () => {
  it('lists each model once, with its window', () => {
    const model = { id: 'gpt-5-mini', vendor: 'copilot', family: 'gpt-5-mini', name: 'GPT-5 mini', maxInputTokens: 128000 };
    expect(describeModels([model, { ...model }, { ...model, vendor: 'other' }])).toEqual([model, { ...model, vendor: 'other' }]);
  });

  it("maps VS Code's error codes, and a prompt too long", () => {
    expect(errorCodeFor('no consent', 'NoPermissions')).toBe(-32050);
    expect(errorCodeFor('quota', 'Blocked')).toBe(-32051);
    expect(errorCodeFor('gone', 'NotFound')).toBe(-32052);
    expect(errorCodeFor('Message exceeds token limit.', undefined)).toBe(-32053);
    expect(errorCodeFor('Server error: 503', 'Unknown')).toBe(-32603);
  });
});

const editorModel = (id: string, vendor: string): ModelInfo => ({
  model: `vscode-lm/${vendor}/${id}`,
  provider: 'vscode-lm',
  modelId: `${vendor}/${id}`,
  name: id.toUpperCase(),
  contextWindow: 64000,
  available: true,
  keySource: null,
  source: 'editor',
});

describe('the model picker', () => {
  it("lists VS Code's models under their vendor, as included in the plan", () => {
    const models = [editorModel('a', 'copilot'), editorModel('b', 'test'), editorModel('c', 'copilot')];
    const items = modelPickItems({ models, providers: [] }, undefined, '');
    const shown = items.filter((item) => item.separator || item.model).map((item) => item.label);
    expect(shown).toEqual([
      'Provided by VS Code: copilot',
      'vscode-lm/copilot/a',
      'vscode-lm/copilot/c',
      'Provided by VS Code: test',
      'vscode-lm/test/b',
    ]);
    expect(items.find((item) => item.model === 'vscode-lm/test/b')?.description).toBe('B · included in your plan · 64,000 tokens');
  });
});

describe("the cost of VS Code's models", () => {
  const cost: SessionCost = { total: 0, input: 1200, output: 30, cacheRead: 0, cacheWrite: 0, cachedPercent: null };
  it('says they are included in the plan rather than $0', () => {
    expect(describeCost(cost, 'vscode-lm')).toBe('included in your plan');
    expect(describeCost(cost, 'openai')).toBe('');
    expect(costDetails(cost, 'vscode-lm')).toMatch(/^Cost included in your plan \(not billed per token by pi-lsp\): 1\.2k tokens in/);
  });
});

describe("the chat's setup for a model VS Code no longer offers", () => {
  it('says VS Code does not offer it, not that it needs a key', () => {
    const model = { model: 'vscode-lm/copilot/gpt-5-mini', thinkingLevel: null, provider: 'vscode-lm', keyStatus: 'missing' as const, known: true };
    expect(setupReason(model)).toBe(
      'VS Code does not offer vscode-lm/copilot/gpt-5-mini now: its extension may still be starting, or be disabled or signed out.',
    );
  });
});
