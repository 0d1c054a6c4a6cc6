// Settings parsing: initializationOptions, their validation, and finding the server.
import { describe, expect, it } from 'vitest';
import { configuredServerPath, findOnPath, initializationOptions, SettingsError } from '../../src/settings';

const settings = (values: Record<string, unknown>) => (key: string) => values[key];

describe('initializationOptions', () => {
  it('sends only what is set, nested as the server expects', () => {
    const options = initializationOptions(
      settings({
        model: 'openai/gpt-4o',
        apiBase: '',
        contextWindow: null,
        thinkingLevel: 'high',
        cacheRetention: 'long',
        'compaction.keepRecentTokens': 40,
        'compaction.model': '',
        'retry.enabled': false,
      }),
      true,
    );
    expect(options).toEqual({
      trusted: true,
      model: 'openai/gpt-4o',
      thinkingLevel: 'high',
      cacheRetention: 'long',
      compaction: { keepRecentTokens: 40 },
      retry: { enabled: false },
    });
  });

  it('sends allowedSessionDirs as a list of paths', () => {
    expect(initializationOptions(settings({ allowedSessionDirs: [' ~/.pi/agent/sessions '] }), true).allowedSessionDirs).toEqual(['~/.pi/agent/sessions']);
    expect(initializationOptions(settings({ allowedSessionDirs: [] }), true)).toEqual({ trusted: true });
    expect(() => initializationOptions(settings({ allowedSessionDirs: '/x' }), true)).toThrow(/pi.allowedSessionDirs must be a list of directory paths/);
  });

  it('sends compaction.threshold as a share of the window or a token count', () => {
    const compaction = (value: unknown) => initializationOptions(settings({ 'compaction.threshold': value }), true).compaction;
    expect(compaction('80%')).toEqual({ threshold: '80%' });
    expect(compaction('150000')).toEqual({ threshold: 150000 });
    expect(compaction(150000)).toEqual({ threshold: 150000 });
    expect(compaction('')).toBeUndefined();
    expect(() => compaction('120%')).toThrow(/pi.compaction.threshold must be a share of the window/);
    expect(() => compaction('soon')).toThrow(SettingsError);
  });

  it('sends sessionIndex, sessionSearchTools and autoName', () => {
    const options = initializationOptions(settings({ sessionIndex: false, sessionSearchTools: false, autoName: true }), true);
    expect(options.sessionIndex).toBe(false);
    expect(options.sessionSearchTools).toBe(false);
    expect(options.autoName).toBe(true);
  });

  it('sends steeringMode and followUpMode, leaving them to pi when empty', () => {
    const options = initializationOptions(settings({ steeringMode: 'all', followUpMode: '' }), true);
    expect(options.steeringMode).toBe('all');
    expect(options).not.toHaveProperty('followUpMode');
    expect(() => initializationOptions(settings({ followUpMode: 'some' }), true)).toThrow(SettingsError);
  });

  it('sends nestedContextFiles and compaction.fileListLimit', () => {
    const options = initializationOptions(settings({ nestedContextFiles: false, 'compaction.fileListLimit': 20 }), true);
    expect(options.nestedContextFiles).toBe(false);
    expect(options.compaction).toEqual({ fileListLimit: 20 });
  });

  it('sends permissions as the object the server checks, an empty one as unset', () => {
    const permissions = { bash: { ask: true, allow: ['git status'] }, timeoutSeconds: 30 };
    expect(initializationOptions(settings({ permissions }), true).permissions).toEqual(permissions);
    expect(initializationOptions(settings({ permissions: {} }), true)).toEqual({ trusted: true });
    expect(() => initializationOptions(settings({ permissions: 'ask' }), true)).toThrow(/pi.permissions must be an object/);
  });

  it('passes workspace trust', () => {
    expect(initializationOptions(settings({}), false)).toEqual({ trusted: false });
  });

  it.each([
    ['thinkingLevel', 'extreme', /pi.thinkingLevel must be one of off, minimal/],
    ['contextWindow', 0, /pi.contextWindow must be a whole number of at least 1/],
    ['compaction.reserveTokens', 1.5, /pi.compaction.reserveTokens/],
    ['retry.enabled', 'yes', /pi.retry.enabled must be true or false/],
    ['model', 42, /pi.model must be a string/],
    ['tokenizer', 'bpe', /pi.tokenizer must be one of tiktoken, chars4/],
    ['cacheRetention', 'forever', /pi.cacheRetention must be one of none, short, long/],
  ])('names the invalid setting %s', (key, value, message) => {
    expect(() => initializationOptions(settings({ [key]: value }), true)).toThrow(SettingsError);
    expect(() => initializationOptions(settings({ [key]: value }), true)).toThrow(message);
  });
});

describe('configuredServerPath', () => {
  it('is undefined when pi.server.path is empty', () => {
    expect(configuredServerPath(settings({}), '/ws')).toBeUndefined();
    expect(configuredServerPath(settings({ 'server.path': '  ' }), '/ws')).toBeUndefined();
  });

  it('resolves a relative path against the workspace and leaves a bare name to PATH', () => {
    expect(configuredServerPath(settings({ 'server.path': '/opt/pi/bin/pi-lsp' }), '/ws')).toBe('/opt/pi/bin/pi-lsp');
    expect(configuredServerPath(settings({ 'server.path': '.venv/bin/pi-lsp' }), '/ws')).toBe('/ws/.venv/bin/pi-lsp');
    expect(configuredServerPath(settings({ 'server.path': 'pi-lsp' }), '/ws')).toBe('pi-lsp');
  });

  it('refuses a value that is not a string', () => {
    expect(() => configuredServerPath(settings({ 'server.path': 42 }))).toThrow(/pi.server.path must be a string/);
  });
});

describe('findOnPath', () => {
  it('finds the first executable on a PATH', () => {
    const executables = new Set(['/b/pi-lsp', '/c/pi-lsp']);
    expect(findOnPath('pi-lsp', '/a::/b:/c', (file) => executables.has(file))).toBe('/b/pi-lsp');
    expect(findOnPath('pi-lsp', undefined, () => true)).toBeUndefined();
  });
});
