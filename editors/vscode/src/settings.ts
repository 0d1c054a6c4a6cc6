// The `pi.*` settings: how to start the server, and the initializationOptions it is sent (the
// same keys as the server's options, docs/protocol.md "Configuration"). Pure functions over a
// settings getter, so they are unit tested without VS Code.
import * as path from 'node:path';
import { THINKING_LEVELS } from './protocol';

/** Reads one setting under `pi.` (VS Code's `WorkspaceConfiguration.get`). */
export type SettingsGetter = (key: string) => unknown;

export interface InitializationOptions {
  trusted: boolean;
  model?: string;
  apiBase?: string;
  contextWindow?: number;
  thinkingLevel?: string;
  sessionDir?: string;
  allowedSessionDirs?: string[];
  tokenizer?: string;
  cacheRetention?: string;
  nestedContextFiles?: boolean;
  sessionIndex?: boolean;
  sessionSearchTools?: boolean;
  autoName?: boolean;
  steeringMode?: string;
  followUpMode?: string;
  compaction?: {
    enabled?: boolean;
    reserveTokens?: number;
    keepRecentTokens?: number;
    threshold?: string | number;
    fileListLimit?: number;
    model?: string;
  };
  retry?: { enabled?: boolean; maxRetries?: number; baseDelayMs?: number };
  /** Checked by the server (docs/protocol.md, "Tool permissions"); an empty object is unset. */
  permissions?: Record<string, unknown>;
}

export class SettingsError extends Error {}

const TOKENIZERS = ['tiktoken', 'chars4'];
const CACHE_RETENTIONS = ['none', 'short', 'long'];
const QUEUE_MODES = ['all', 'one-at-a-time'];

function text(get: SettingsGetter, key: string): string | undefined {
  const value = get(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new SettingsError(`pi.${key} must be a string, got ${JSON.stringify(value)}`);
  return value.trim() || undefined;
}

function choice(get: SettingsGetter, key: string, choices: string[]): string | undefined {
  const value = text(get, key);
  if (value !== undefined && !choices.includes(value)) {
    throw new SettingsError(`pi.${key} must be one of ${choices.join(', ')}, got "${value}"`);
  }
  return value;
}

function count(get: SettingsGetter, key: string, minimum: number): number | undefined {
  const value = get(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
    throw new SettingsError(`pi.${key} must be a whole number of at least ${minimum}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function flag(get: SettingsGetter, key: string): boolean | undefined {
  const value = get(key);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new SettingsError(`pi.${key} must be true or false, got ${JSON.stringify(value)}`);
  return value;
}

function paths(get: SettingsGetter, key: string): string[] | undefined {
  const value = get(key);
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && item.trim())) {
    throw new SettingsError(`pi.${key} must be a list of directory paths, got ${JSON.stringify(value)}`);
  }
  return value.length ? value.map((item: string) => item.trim()) : undefined;
}

function object(get: SettingsGetter, key: string): Record<string, unknown> | undefined {
  const value = get(key);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new SettingsError(`pi.${key} must be an object, got ${JSON.stringify(value)}`);
  }
  return Object.keys(value).length ? (value as Record<string, unknown>) : undefined;
}

/** `"80%"` stays a share of the window; `"150000"` becomes a token count. */
function threshold(get: SettingsGetter, key: string): string | number | undefined {
  const value = get(key);
  if (typeof value === 'number') return count(get, key, 1);
  const written = text(get, key);
  if (written === undefined) return undefined;
  if (/^\d+$/.test(written) && Number(written) > 0) return Number(written);
  const percent = /^(\d+(?:\.\d+)?)\s*%$/.exec(written);
  if (percent && Number(percent[1]) > 0 && Number(percent[1]) <= 100) return written;
  throw new SettingsError(`pi.${key} must be a share of the window such as "80%" or a token count such as "150000", got "${written}"`);
}

function withoutUndefined<T extends object>(value: T): T | undefined {
  const entries = Object.entries(value).filter(([, item]) => item !== undefined);
  return entries.length ? (Object.fromEntries(entries) as T) : undefined;
}

/** The options sent to the server; throws `SettingsError` naming the first invalid setting. */
export function initializationOptions(get: SettingsGetter, trusted: boolean): InitializationOptions {
  const options: InitializationOptions = {
    trusted,
    model: text(get, 'model'),
    apiBase: text(get, 'apiBase'),
    contextWindow: count(get, 'contextWindow', 1),
    thinkingLevel: choice(get, 'thinkingLevel', [...THINKING_LEVELS]),
    sessionDir: text(get, 'sessionDir'),
    allowedSessionDirs: paths(get, 'allowedSessionDirs'),
    tokenizer: choice(get, 'tokenizer', TOKENIZERS),
    cacheRetention: choice(get, 'cacheRetention', CACHE_RETENTIONS),
    nestedContextFiles: flag(get, 'nestedContextFiles'),
    sessionIndex: flag(get, 'sessionIndex'),
    sessionSearchTools: flag(get, 'sessionSearchTools'),
    autoName: flag(get, 'autoName'),
    steeringMode: choice(get, 'steeringMode', QUEUE_MODES),
    followUpMode: choice(get, 'followUpMode', QUEUE_MODES),
    compaction: withoutUndefined({
      enabled: flag(get, 'compaction.enabled'),
      reserveTokens: count(get, 'compaction.reserveTokens', 0),
      keepRecentTokens: count(get, 'compaction.keepRecentTokens', 0),
      threshold: threshold(get, 'compaction.threshold'),
      fileListLimit: count(get, 'compaction.fileListLimit', 0),
      model: text(get, 'compaction.model'),
    }),
    retry: withoutUndefined({
      enabled: flag(get, 'retry.enabled'),
      maxRetries: count(get, 'retry.maxRetries', 0),
      baseDelayMs: count(get, 'retry.baseDelayMs', 0),
    }),
    permissions: object(get, 'permissions'),
  };
  return withoutUndefined(options) as InitializationOptions;
}

/**
 * `pi.server.path`, resolved: a relative path against the workspace folder, a bare name ("pi-lsp")
 * left for the system to find on PATH. Undefined when the setting is empty.
 */
export function configuredServerPath(get: SettingsGetter, workspaceFolder?: string): string | undefined {
  const configured = text(get, 'server.path');
  if (!configured) return undefined;
  const relative = !path.isAbsolute(configured) && /[\\/]/.test(configured);
  return relative && workspaceFolder ? path.resolve(workspaceFolder, configured) : configured;
}

/** The first executable `name` in a PATH-like list of directories. */
export function findOnPath(name: string, pathVariable: string | undefined, isExecutable: (file: string) => boolean): string | undefined {
  for (const directory of (pathVariable ?? '').split(path.delimiter)) {
    if (!directory) continue;
    const candidate = path.join(directory, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}
