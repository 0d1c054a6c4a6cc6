// The API keys the user gives pi in VS Code: kept in VS Code's SecretStorage (the OS keychain on
// the desktop), never in settings.json or any file of ours, and handed to the server with the
// `pi/setCredentials` notification at every start and on every change.
import type * as vscode from 'vscode';
import type { KeySource, ProviderInfo } from './protocol';

/** The one secret holding every key, as JSON `{provider: key}`. */
export const SECRET_NAME = 'pi.apiKeys';

export type ApiKeys = Record<string, string>;

/** The stored keys; anything unreadable counts as none (a hand-edited or foreign secret). */
export function parseApiKeys(stored: string | undefined): ApiKeys {
  if (!stored) return {};
  try {
    const parsed: unknown = JSON.parse(stored);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed as Record<string, unknown>).filter(
        (entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1].length > 0,
      ),
    );
  } catch {
    return {};
  }
}

/** A provider name as pi spells them: trimmed, without spaces. */
export function normalizeProvider(provider: string): string | undefined {
  const trimmed = provider.trim();
  return trimmed && !/\s/.test(trimmed) ? trimmed : undefined;
}

const SOURCE_TEXT: Record<KeySource, string> = {
  editor: 'key in VS Code',
  'auth.json': "key in pi's auth.json",
  'models.json': "key in pi's models.json",
  environment: 'key from the environment',
};

/** How the provider pickers describe a provider's key. */
export function describeProviderKey(provider: ProviderInfo): string {
  if (provider.keySource) {
    const variable = provider.keySource === 'environment' && provider.keyVariable ? ` (${provider.keyVariable})` : '';
    return `$(key) ${SOURCE_TEXT[provider.keySource]}${variable}`;
  }
  if (provider.local) return 'local, needs no key';
  if (provider.subscription) return "no key (pi's subscription login cannot be used here)";
  return 'no key';
}

export function describeKeySource(source: KeySource | null): string {
  return source ? SOURCE_TEXT[source] : 'no key';
}

export class ApiKeyStore {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  async all(): Promise<ApiKeys> {
    return parseApiKeys(await this.secrets.get(SECRET_NAME));
  }

  async set(provider: string, key: string): Promise<void> {
    const keys = await this.all();
    keys[provider] = key;
    await this.secrets.store(SECRET_NAME, JSON.stringify(keys));
  }

  async remove(provider: string): Promise<boolean> {
    const keys = await this.all();
    if (!(provider in keys)) return false;
    delete keys[provider];
    await (Object.keys(keys).length ? this.secrets.store(SECRET_NAME, JSON.stringify(keys)) : this.secrets.delete(SECRET_NAME));
    return true;
  }

  /** Fires when the stored keys change (in this window or another one). */
  onDidChange(listener: () => void): vscode.Disposable {
    return this.secrets.onDidChange((event) => {
      if (event.key === SECRET_NAME) listener();
    });
  }
}
