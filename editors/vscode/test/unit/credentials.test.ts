// A key set in VS Code reaches the server before any request sent while it was being stored: the
// secret store takes a round trip to the window, and a prompt typed meanwhile must not go first.
import { beforeEach, describe, expect, it, vi } from 'vitest';

const locateServer = vi.fn();
vi.mock('../../src/locateServer', () => ({ locateServer: (...args: unknown[]) => locateServer(...args) }));

/** What the fake language client put on the wire, in order. */
const wire: string[] = [];

vi.mock('vscode-languageclient/node', () => ({
  LanguageClient: class {
    state = 2;
    initializeResult = { serverInfo: { name: 'pi-lsp', version: 'test' } };
    onNotification() {}
    onRequest() {}
    onDidChangeState() {}
    isRunning() {
      return true;
    }
    async start() {}
    async stop() {}
    async sendNotification(method: string, params: { credentials: Record<string, string> }) {
      wire.push(`${method} ${Object.keys(params.credentials).join(',')}`);
    }
    async sendRequest(method: string) {
      wire.push(method);
      return {};
    }
  },
  ResponseError: class {},
  ShowMessageRequest: { type: 'window/showMessageRequest' },
  State: { Stopped: 1, Starting: 3, Running: 2 },
}));

const { PiServer } = await import('../../src/server');

describe('PiServer.updateCredentials', () => {
  beforeEach(() => {
    wire.length = 0;
    locateServer.mockResolvedValue({ report: [], refused: [], choice: { command: 'pi-lsp', args: [], label: 'test', detail: 'test' } });
  });

  it('holds requests sent while a key is stored until the server has it', async () => {
    const stored: Record<string, string> = {};
    const server = new PiServer('/extension', async () => ({ ...stored }));
    await server.start();
    expect(wire).toEqual(['pi/setCredentials ']);
    let finishStoring = () => {};
    const storing = new Promise<void>((resolve) => (finishStoring = resolve));
    const update = server.updateCredentials(async () => {
      await storing;
      stored.openai = 'sk-test';
    });
    const prompt = server.request('pi/prompt', { text: 'Which key do you see?' } as never);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(wire).toEqual(['pi/setCredentials ']);
    finishStoring();
    await Promise.all([update, prompt]);
    expect(wire).toEqual(['pi/setCredentials ', 'pi/setCredentials openai', 'pi/prompt']);
  });

  it('lets requests go on when storing the key failed', async () => {
    const server = new PiServer('/extension', async () => ({}));
    await server.start();
    await expect(server.updateCredentials(async () => Promise.reject(new Error('keychain locked')))).rejects.toThrow('keychain locked');
    await server.request('pi/state', {} as never);
    expect(wire.at(-1)).toBe('pi/state');
  });
});
