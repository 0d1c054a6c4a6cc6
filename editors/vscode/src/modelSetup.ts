// The model and key commands: "Pi: Select Model…", "Pi: Set API Key…", "Pi: Remove API Key…" and
// "Pi: Use a Local Model Server…". Keys go to VS Code's SecretStorage and from there to the server
// (`pi/setCredentials`), never into settings.json; a local server's URL and model do go into the
// `pi.apiBase` and `pi.model` settings, which hold no secret.
import * as vscode from 'vscode';
import { type ApiKeyStore, normalizeProvider } from './apiKeys';
import { growItems } from './growingItems';
import { checkServerUrl, type PickItem, modelPickItems, providerPickItems, serverModelIds } from './modelPicks';
import type { ModelsResult, StateResult } from './protocol';
import { searchAsTyped } from './searchAsTyped';
import { describeError, type PiServer } from './server';
import type { SessionController } from './session';

export interface ModelSetupContext {
  server: PiServer;
  session: SessionController;
  keys: ApiKeyStore;
}

const DEFAULT_LOCAL_SERVER = 'http://localhost:11434/v1';
const SERVER_LIST_TIMEOUT_MS = 3000;
const SETTLE_TIMEOUT_MS = 5000;

type Item = vscode.QuickPickItem & PickItem;

function quickPickItems(items: PickItem[]): Item[] {
  return items.map((item) => (item.separator ? { ...item, kind: vscode.QuickPickItemKind.Separator } : item));
}

/** Where the item that takes what is typed goes: first, and an empty separator (nothing shown) while there is none. */
const NO_TYPED_ITEM: PickItem = { label: '', separator: true, typed: true };

function pickKey(item: PickItem): string {
  if (item.typed) return 'typed';
  if (item.separator) return `separator:${item.label}`;
  if (item.model) return `model:${item.model}`;
  if (item.command) return `command:${item.command}`;
  return item.provider ? `provider:${item.provider}` : `label:${item.label}`;
}

/**
 * A quick pick whose items follow what is typed; resolves with the accepted item, or undefined
 * when dismissed. The items only grow while it is open (growingItems.ts), and only the answer to
 * the latest text is put in.
 */
async function pick(title: string, placeholder: string, items: (typed: string) => Promise<PickItem[]>): Promise<Item | undefined> {
  const quickPick = vscode.window.createQuickPick<Item>();
  quickPick.title = title;
  quickPick.placeholder = placeholder;
  quickPick.matchOnDescription = true;
  let shown: PickItem[] = [NO_TYPED_ITEM];
  return searchAsTyped(quickPick, {
    delayMs: 150,
    askAtOnce: true,
    ask: (typed) => items(typed.trim()),
    show: (next) => {
      shown = growItems(shown, next, pickKey, (item) => (item.typed ? NO_TYPED_ITEM : item));
      quickPick.items = quickPickItems(shown);
    },
    // Enter on no item, or on the empty place of the typed one: the pick stays open.
    accepts: (item) => !item.separator,
  });
}

async function models(server: PiServer, params: { filter?: string; provider?: string }): Promise<ModelsResult> {
  try {
    return await server.request('pi/models', params);
  } catch (error) {
    server.output.appendLine(`pi/models failed: ${describeError(error)}`);
    return { models: [], providers: [] };
  }
}

/** "Pi: Select Model…": the session's model, from the models ready to use first. */
export async function selectModel(context: ModelSetupContext, provider?: string): Promise<void> {
  const { server, session } = context;
  const current = session.state?.model?.model;
  const chosen = await pick(
    provider ? `Select a ${provider} model` : 'Select the model',
    current ?? 'e.g. openai/gpt-4o, or a model of pi’s models.json',
    async (typed) => modelPickItems(await models(server, { ...(typed ? { filter: typed } : {}), ...(provider ? { provider } : {}) }), current, typed),
  );
  if (chosen?.command) return void vscode.commands.executeCommand(chosen.command);
  if (!chosen?.model) return;
  await server.request('pi/setModel', { ...(session.sessionId ? { sessionId: session.sessionId } : {}), model: chosen.model });
  await session.refreshState();
}

/** "Pi: Set API Key…": a provider and its key, kept in VS Code's secret storage. */
export async function setApiKey(context: ModelSetupContext, provider?: string): Promise<void> {
  const { server, session, keys } = context;
  const target = provider ?? (await pickProvider(server));
  if (!target) return;
  const key = await vscode.window.showInputBox({
    title: `API key for ${target}`,
    prompt: "Kept in VS Code's secret storage and given to pi-lsp; never written to a file.",
    password: true,
    ignoreFocusOut: true,
    validateInput: (value) => (!value.trim() ? 'Enter the key' : /\s/.test(value.trim()) ? 'An API key has no spaces' : undefined),
  });
  if (key === undefined) return;
  await server.updateCredentials(() => keys.set(target, key.trim()));
  const state = await session.refreshState();
  void vscode.window.showInformationMessage(`The ${target} API key is stored in VS Code's secret storage.`);
  if (!state?.model || state.model.keyStatus === 'missing') await selectModel(context, target);
}

async function pickProvider(server: PiServer): Promise<string | undefined> {
  const chosen = await pick('Set the API key of a provider', 'A provider of pi (anthropic, openai, google…) or of models.json', async (typed) =>
    providerPickItems((await models(server, {})).providers, typed),
  );
  return chosen?.provider ? normalizeProvider(chosen.provider) : undefined;
}

/** "Pi: Remove API Key…": forget a key stored in VS Code. */
export async function removeApiKey(context: ModelSetupContext): Promise<void> {
  const { server, session, keys } = context;
  const stored = Object.keys(await keys.all());
  if (!stored.length) {
    void vscode.window.showInformationMessage('No API key is stored in VS Code for pi.');
    return;
  }
  const provider = await vscode.window.showQuickPick(stored, { title: 'Remove the API key stored in VS Code for…' });
  if (!provider) return;
  await server.updateCredentials(() => keys.remove(provider));
  await session.refreshState();
}

/** "Pi: Use a Local Model Server…": an OpenAI-compatible server (Ollama, llama.cpp, LM Studio, vLLM). */
export async function useLocalServer(context: ModelSetupContext): Promise<void> {
  const { server, session } = context;
  const configuration = vscode.workspace.getConfiguration('pi');
  const url = await vscode.window.showInputBox({
    title: 'The local model server',
    prompt: 'Its OpenAI-compatible URL (Ollama: http://localhost:11434/v1, llama.cpp: http://localhost:8080/v1)',
    value: configuration.get<string>('apiBase') || DEFAULT_LOCAL_SERVER,
    ignoreFocusOut: true,
    validateInput: checkServerUrl,
  });
  if (!url) return;
  const base = url.trim().replace(/\/+$/, '');
  const listed = await listServerModels(base);
  const chosen = await pick(`A model of ${base}`, listed.length ? 'Choose one, or type its name' : 'Type the model name', async (typed) => [
    ...(typed && !listed.includes(typed) ? [{ label: typed, description: 'use as typed', model: typed, typed: true }] : []),
    ...listed.map((id) => ({ label: id, model: id })),
  ]);
  if (!chosen?.model) return;
  const model = `openai/${chosen.model}`;
  await configuration.update('apiBase', base, vscode.ConfigurationTarget.Global);
  await configuration.update('model', model, vscode.ConfigurationTarget.Global);
  if (session.sessionId) await server.request('pi/setModel', { sessionId: session.sessionId, model });
  // The server pulls the new settings by itself; the chat follows once they are in force.
  await settled(session, (state) => state.model?.model === model && state.model.keyStatus !== 'missing');
}

async function listServerModels(base: string): Promise<string[]> {
  try {
    const response = await fetch(`${base}/models`, { signal: AbortSignal.timeout(SERVER_LIST_TIMEOUT_MS) });
    return response.ok ? serverModelIds(await response.json()) : [];
  } catch {
    return [];
  }
}

async function settled(session: SessionController, done: (state: StateResult) => boolean): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const state = await session.refreshState();
    if (state && done(state)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
