// The items of the model and provider pickers, as pure functions of `pi/models` (unit tested):
// models that can be called first, each saying where its key and its configuration come from.
import { describeKeySource, describeProviderKey } from './apiKeys';
import type { ModelInfo, ModelsResult, ProviderInfo } from './protocol';

export interface PickItem {
  label: string;
  description?: string;
  detail?: string;
  /** A separator between groups. */
  separator?: boolean;
  /** The model to set, or the command to run. */
  model?: string;
  command?: string;
  provider?: string;
  /** The item that takes what is typed ("use as typed"). */
  typed?: boolean;
}

export const SET_API_KEY_COMMAND = 'pi.apiKey.set';
export const LOCAL_SERVER_COMMAND = 'pi.localServer.use';

function tokens(count: number | null): string | undefined {
  return count ? `${count.toLocaleString('en-US')} tokens` : undefined;
}

function modelItem(model: ModelInfo, current: string | undefined): PickItem {
  const key =
    model.source === 'editor' ? 'included in your plan' : model.available ? (model.keySource ? `$(key) ${describeKeySource(model.keySource)}` : 'local') : 'no key';
  const origin = model.source === 'models.json' ? "pi's models.json" : undefined;
  return {
    label: `${model.model === current ? '$(check) ' : ''}${model.model}`,
    description: [model.name, key, tokens(model.contextWindow)].filter(Boolean).join(' · '),
    detail: origin,
    model: model.model,
  };
}

/** The model picker: the setup actions, the models ready to use, then those needing a key. */
export function modelPickItems(result: ModelsResult, current: string | undefined, typed: string): PickItem[] {
  const editor = result.models.filter((model) => model.source === 'editor');
  const ready = result.models.filter((model) => model.available && model.source !== 'editor');
  const others = result.models.filter((model) => !model.available);
  const items: PickItem[] = [];
  if (typed && !result.models.some((model) => model.model === typed)) {
    items.push({ label: typed, description: 'use as typed', model: typed, typed: true });
  }
  items.push(
    { label: '$(key) Set API Key…', description: keyedProviders(result.providers), command: SET_API_KEY_COMMAND },
    { label: '$(server) Use a Local Model Server…', description: 'Ollama, llama.cpp, LM Studio, vLLM', command: LOCAL_SERVER_COMMAND },
  );
  if (ready.length) items.push({ label: 'Ready to use', separator: true }, ...ready.map((model) => modelItem(model, current)));
  for (const [vendor, models] of byVendor(editor)) {
    items.push({ label: `Provided by VS Code: ${vendor}`, separator: true }, ...models.map((model) => modelItem(model, current)));
  }
  if (others.length) items.push({ label: 'Need an API key', separator: true }, ...others.map((model) => modelItem(model, current)));
  return items;
}

/** The editor's models (`vscode-lm/<vendor>/<id>`) by vendor, in their order. */
function byVendor(models: ModelInfo[]): Map<string, ModelInfo[]> {
  const groups = new Map<string, ModelInfo[]>();
  for (const model of models) {
    const vendor = model.modelId.split('/')[0] ?? model.modelId;
    groups.set(vendor, [...(groups.get(vendor) ?? []), model]);
  }
  return groups;
}

function keyedProviders(providers: ProviderInfo[]): string {
  const keyed = providers.filter((provider) => provider.keySource).map((provider) => provider.provider);
  return keyed.length ? `keys for ${keyed.join(', ')}` : 'no provider has a key yet';
}

/** The provider picker of "Set API Key…": every provider pi knows, those with keys first. */
export function providerPickItems(providers: ProviderInfo[], typed: string): PickItem[] {
  const items: PickItem[] = providers.map((provider) => ({
    label: provider.provider,
    description: describeProviderKey(provider),
    detail: provider.keyVariable ? `pi reads ${provider.keyVariable}` : undefined,
    provider: provider.provider,
  }));
  const name = typed.trim();
  if (name && !/\s/.test(name) && !providers.some((provider) => provider.provider === name)) {
    items.unshift({ label: name, description: 'another provider', provider: name, typed: true });
  }
  return items;
}

/** The model ids an OpenAI-compatible server lists at `GET <url>/models`. */
export function serverModelIds(body: unknown): string[] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return [];
  return data.map((entry) => (entry as { id?: unknown })?.id).filter((id): id is string => typeof id === 'string' && id.length > 0);
}

/** `url` as an OpenAI-compatible base URL, or why it is not one. */
export function checkServerUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url.trim());
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? undefined : 'Use an http:// or https:// URL';
  } catch {
    return 'Enter a URL such as http://localhost:11434/v1';
  }
}
