// The key store's format, the chat's setup condition and the model and provider pickers.
import { describe, expect, it } from 'vitest';
import { describeProviderKey, normalizeProvider, parseApiKeys } from '../../src/apiKeys';
import { setupReason } from '../../src/chat/setup';
import { checkServerUrl, modelPickItems, providerPickItems, serverModelIds } from '../../src/modelPicks';
import type { ModelsResult, ProviderInfo } from '../../src/protocol';

const provider = (name: string, fields: Partial<ProviderInfo> = {}): ProviderInfo => ({
  provider: name,
  keySource: null,
  keyVariable: null,
  subscription: false,
  local: false,
  ...fields,
});

const result: ModelsResult = {
  models: [
    { model: 'local/llama', provider: 'local', modelId: 'llama', name: 'Llama', contextWindow: 128000, available: true, keySource: null, source: 'models.json' },
    { model: 'openai/gpt-4o', provider: 'openai', modelId: 'gpt-4o', name: null, contextWindow: 128000, available: true, keySource: 'editor', source: 'litellm' },
    { model: 'anthropic/claude-x', provider: 'anthropic', modelId: 'claude-x', name: null, contextWindow: null, available: false, keySource: null, source: 'litellm' },
  ],
  providers: [provider('openai', { keySource: 'editor', keyVariable: 'OPENAI_API_KEY' }), provider('anthropic', { subscription: true })],
};

describe('the stored keys', () => {
  it('read only well-formed entries', () => {
    expect(parseApiKeys(JSON.stringify({ openai: 'k', bad: 3, empty: '' }))).toEqual({ openai: 'k' });
    expect(parseApiKeys('not json')).toEqual({});
    expect(parseApiKeys('[1]')).toEqual({});
    expect(parseApiKeys(undefined)).toEqual({});
  });

  it('name providers as pi does', () => {
    expect(normalizeProvider('  openai ')).toBe('openai');
    expect(normalizeProvider('two words')).toBeUndefined();
    expect(normalizeProvider('')).toBeUndefined();
  });

  it('are described by where they come from, never by value', () => {
    expect(describeProviderKey(provider('openai', { keySource: 'environment', keyVariable: 'OPENAI_API_KEY' }))).toBe('$(key) key from the environment (OPENAI_API_KEY)');
    expect(describeProviderKey(provider('anthropic', { subscription: true }))).toContain('subscription login');
    expect(describeProviderKey(provider('ollama', { local: true }))).toBe('local, needs no key');
  });
});

describe('the chat setup', () => {
  const info = { thinkingLevel: null, known: true };
  it('shows without a model or without the key it needs', () => {
    expect(setupReason({ ...info, model: null, provider: null, keyStatus: null })).toBe('No model is configured yet.');
    expect(setupReason({ ...info, model: 'anthropic/claude-x', provider: 'anthropic', keyStatus: 'missing' })).toBe(
      'anthropic/claude-x needs an API key for anthropic.',
    );
    expect(setupReason({ ...info, model: 'openai/gpt-4o', provider: 'openai', keyStatus: 'key' })).toBeUndefined();
    expect(setupReason({ ...info, model: 'local/llama', provider: 'local', keyStatus: 'local' })).toBeUndefined();
  });
});

describe('the model picker', () => {
  it('offers the setup first, then the models ready to use, then those needing a key', () => {
    const items = modelPickItems(result, 'openai/gpt-4o', '');
    expect(items.map((item) => (item.separator ? `-- ${item.label}` : item.label))).toEqual([
      '$(key) Set API Key…',
      '$(server) Use a Local Model Server…',
      '-- Ready to use',
      'local/llama',
      '$(check) openai/gpt-4o',
      '-- Need an API key',
      'anthropic/claude-x',
    ]);
    expect(items[0].description).toBe('keys for openai');
    expect(items[3]).toMatchObject({ description: 'Llama · local · 128,000 tokens', detail: "pi's models.json", model: 'local/llama' });
    expect(items[4].description).toBe('$(key) key in VS Code · 128,000 tokens');
    expect(items[6].description).toBe('no key');
  });

  it('takes a model as typed', () => {
    expect(modelPickItems(result, undefined, 'ollama/qwen')[0]).toMatchObject({ label: 'ollama/qwen', model: 'ollama/qwen' });
    expect(modelPickItems(result, undefined, 'local/llama')[0].command).toBeDefined();
  });
});

describe('the provider picker', () => {
  it('lists the providers and takes another name as typed', () => {
    expect(providerPickItems(result.providers, '').map((item) => item.label)).toEqual(['openai', 'anthropic']);
    expect(providerPickItems(result.providers, 'my-gateway')[0]).toMatchObject({ label: 'my-gateway', provider: 'my-gateway' });
    expect(providerPickItems(result.providers, 'two words')).toHaveLength(2);
  });
});

describe('a local server', () => {
  it('lists its models as OpenAI does', () => {
    expect(serverModelIds({ data: [{ id: 'llama3' }, { id: '' }, {}, { id: 'qwen' }] })).toEqual(['llama3', 'qwen']);
    expect(serverModelIds({ models: [] })).toEqual([]);
    expect(serverModelIds(null)).toEqual([]);
  });

  it('needs an http URL', () => {
    expect(checkServerUrl('http://localhost:11434/v1')).toBeUndefined();
    expect(checkServerUrl('ftp://x')).toBe('Use an http:// or https:// URL');
    expect(checkServerUrl('localhost')).toContain('Enter a URL');
  });
});
