// The key store's format, the chat's setup condition and the model and provider pickers.
import { describe, expect, it, vi } from 'vitest';
import { createdQuickPicks, type FakeQuickPick } from './vscode-stub';
import { describeProviderKey, normalizeProvider, parseApiKeys } from '../../src/apiKeys';
import { setupReason } from '../../src/chat/setup';
import { growItems } from '../../src/growingItems';
import { checkServerUrl, modelPickItems, providerPickItems, serverModelIds } from '../../src/modelPicks';
import { type ModelSetupContext, selectModel } from '../../src/modelSetup';
import type { ModelInfo, ModelsResult, ProviderInfo } from '../../src/protocol';

// The pickers use the server only through the context the tests give them.
vi.mock('../../src/server', () => ({ describeError: (error: unknown) => String(error) }));

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

describe('a list fetched again as the user types', () => {
  const key = (item: { id: string }) => item.id;
  it('only grows: an item keeps its place, is updated there, and new ones come last', () => {
    const shown = [{ id: 'a', v: 1 }, { id: 'b', v: 1 }];
    expect(growItems(shown, [{ id: 'c', v: 2 }, { id: 'b', v: 2 }, { id: 'c', v: 3 }], key)).toEqual([
      { id: 'a', v: 1 },
      { id: 'b', v: 2 },
      { id: 'c', v: 2 },
    ]);
    expect(growItems(shown, [], key, (item) => ({ ...item, v: 0 }))).toEqual([{ id: 'a', v: 0 }, { id: 'b', v: 0 }]);
  });
});

describe('the model picker while the server answers what was typed', () => {
  const model = (name: string, available = false): ModelInfo => ({
    model: name,
    provider: name.split('/')[0],
    modelId: name.split('/')[1],
    name: null,
    contextWindow: null,
    available,
    keySource: available ? 'editor' : null,
    source: 'litellm',
  });
  const answers: Record<string, ModelsResult> = {
    '': { models: ['openai/a', 'openai/b', 'openai/c'].map((name) => model(name, true)), providers: [] },
    claude: { models: [model('anthropic/claude-x'), model('anthropic/claude-y')], providers: [] },
    'claude-y': { models: [model('anthropic/claude-y')], providers: [] },
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const until = async (check: () => boolean) => {
    for (let waited = 0; !check(); waited += 10) {
      if (waited > 3000) throw new Error('timed out');
      await sleep(10);
    }
  };
  type Pick = FakeQuickPick<{ label: string }>;
  const labels = (pick: Pick) => pick.items.map((item) => item.label);

  /** Opens the picker on a server that answers `pi/models` after `delays[filter]` ms. */
  function open(delays: Record<string, number> = {}) {
    const requests: [string, Record<string, unknown>][] = [];
    const server = {
      output: { appendLine: () => undefined },
      request: async (method: string, params: Record<string, unknown>) => {
        requests.push([method, params]);
        if (method !== 'pi/models') return {};
        const filter = String(params.filter ?? '');
        await sleep(delays[filter] ?? 0);
        return answers[filter];
      },
    };
    const session = { sessionId: 's1', state: undefined, refreshState: async () => undefined };
    const done = selectModel({ server, session } as unknown as ModelSetupContext);
    return { done, requests, pick: createdQuickPicks.at(-1) as Pick };
  }

  it('sets the model clicked while the answer to a longer text replaced the list', async () => {
    const { done, requests, pick } = open();
    await until(() => labels(pick).includes('openai/a'));
    pick.type('claude');
    await until(() => labels(pick).includes('anthropic/claude-y'));
    const clicked = labels(pick).indexOf('anthropic/claude-y');
    pick.type('claude-y');
    await until(() => requests.some(([, params]) => params.filter === 'claude-y'));
    await sleep(20);
    pick.choose(clicked);
    await done;
    expect(requests.at(-1)).toEqual(['pi/setModel', { sessionId: 's1', model: 'anthropic/claude-y' }]);
  });

  it('keeps the answer to the latest text when the one to an earlier text comes after it', async () => {
    const { done, pick } = open({ '': 300 });
    pick.type('claude');
    await until(() => labels(pick).includes('anthropic/claude-x'));
    await sleep(400);
    expect(labels(pick)).toContain('anthropic/claude-x');
    expect(labels(pick)).not.toContain('openai/a');
    pick.hide();
    await done;
  });

  it('stays open when Enter lands on no model', async () => {
    const { done, requests, pick } = open();
    await until(() => labels(pick).includes('openai/a'));
    pick.choose(0); // the empty place of the item taking the typed text
    expect(pick.shown).toBe(true);
    pick.choose(labels(pick).indexOf('openai/b'));
    await done;
    expect(requests.at(-1)).toEqual(['pi/setModel', { sessionId: 's1', model: 'openai/b' }]);
  });
});
