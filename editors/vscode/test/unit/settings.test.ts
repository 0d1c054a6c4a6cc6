// Settings parsing: initializationOptions, their validation, and finding the server.
import { describe, expect, it } from 'vitest';
import { findOnPath, initializationOptions, serverCommand, SettingsError } from '../../src/settings';

const settings = (values: Record<string, unknown>) => (key: string) => values[key];

describe('initializationOptions', () => {
  it('sends only what is set, nested as the server expects', () => {
    const options = initializationOptions(
      settings({
        model: 'openai/gpt-4o',
        apiBase: '',
        contextWindow: null,
        thinkingLevel: 'high',
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

  it('sends nestedContextFiles and compaction.fileListLimit', () => {
    const options = initializationOptions(settings({ nestedContextFiles: false, 'compaction.fileListLimit': 20 }), true);
    expect(options.nestedContextFiles).toBe(false);
    expect(options.compaction).toEqual({ fileListLimit: 20 });
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
  ])('names the invalid setting %s', (key, value, message) => {
    expect(() => initializationOptions(settings({ [key]: value }), true)).toThrow(SettingsError);
    expect(() => initializationOptions(settings({ [key]: value }), true)).toThrow(message);
  });
});

describe('serverCommand', () => {
  const lookup = { onPath: () => undefined, python: () => undefined };

  it('prefers pi.server.path, resolving a relative path against the workspace', () => {
    expect(serverCommand(settings({ 'server.path': '/opt/pi/bin/pi-lsp' }), lookup)).toEqual({
      command: '/opt/pi/bin/pi-lsp',
      args: [],
      source: 'pi.server.path',
    });
    expect(serverCommand(settings({ 'server.path': '.venv/bin/pi-lsp' }), { ...lookup, workspaceFolder: '/ws' }).command).toBe('/ws/.venv/bin/pi-lsp');
    expect(serverCommand(settings({ 'server.path': 'pi-lsp' }), { ...lookup, workspaceFolder: '/ws' }).command).toBe('pi-lsp');
  });

  it('falls back to pi-lsp on PATH, then the selected Python', () => {
    expect(serverCommand(settings({}), { ...lookup, onPath: () => '/usr/bin/pi-lsp' })).toMatchObject({ command: '/usr/bin/pi-lsp', source: 'PATH' });
    expect(serverCommand(settings({}), { ...lookup, python: () => '/ws/.venv/bin/python' })).toEqual({
      command: '/ws/.venv/bin/python',
      args: ['-m', 'pi_lsp'],
      source: 'python',
    });
    expect(serverCommand(settings({}), lookup).command).toBe('python3');
  });

  it('finds the first executable on a PATH', () => {
    const executables = new Set(['/b/pi-lsp', '/c/pi-lsp']);
    expect(findOnPath('pi-lsp', '/a::/b:/c', (file) => executables.has(file))).toBe('/b/pi-lsp');
    expect(findOnPath('pi-lsp', undefined, () => true)).toBeUndefined();
  });
});
