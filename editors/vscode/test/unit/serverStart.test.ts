// Starting the server when no candidate can run it: one notification that says what was tried
// and what to do, whose button opens the setting, and requests that repeat the reason.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';

const locateServer = vi.fn();
vi.mock('../../src/locateServer', () => ({ locateServer: (...args: unknown[]) => locateServer(...args) }));
const LanguageClient = vi.fn();
vi.mock('vscode-languageclient/node', () => ({
  LanguageClient: function (...args: unknown[]) {
    return LanguageClient(...args);
  },
  ResponseError: class {},
  State: { Stopped: 1, Starting: 3, Running: 2 },
}));

const { PiServer } = await import('../../src/server');

const nothingFits = {
  report: ['pi.server.path: not set', 'pi-lsp on PATH: not found', 'python3 on PATH (/usr/bin/python3): Python 3.9.2 is older than 3.11'],
  refused: [
    { label: 'pi.server.path', reason: 'not set' },
    { label: 'pi-lsp on PATH', reason: 'not found' },
    { label: 'python3 on PATH', reason: 'Python 3.9.2 is older than 3.11' },
  ],
};

describe('PiServer.start without a usable server', () => {
  beforeEach(() => {
    vi.clearAllMocks();
    locateServer.mockResolvedValue(nothingFits);
  });

  it('shows one notification with what was tried, what to do, and a button to the setting', async () => {
    vi.mocked(vscode.window.showErrorMessage).mockResolvedValueOnce('Open Setting' as never);
    const server = new PiServer('/extension');
    let stopped = 0;
    server.onDidStop(() => stopped++);
    await server.start();
    expect(vscode.window.showErrorMessage).toHaveBeenCalledTimes(1);
    const [message, button] = vi.mocked(vscode.window.showErrorMessage).mock.calls[0] as [string, string];
    expect(message).toContain('Tried: pi.server.path (not set); pi-lsp on PATH (not found); python3 on PATH (Python 3.9.2 is older than 3.11)');
    expect(message).toContain('Install Python 3.11 or newer');
    expect(button).toBe('Open Setting');
    await vi.waitFor(() => expect(vscode.commands.executeCommand).toHaveBeenCalledWith('workbench.action.openSettings', 'pi.server.path'));
    expect(LanguageClient).not.toHaveBeenCalled();
    expect(stopped).toBe(1);
    expect(server.lastProblem).toBe(message);
    const output = (server.output as unknown as { lines: string[] }).lines.join('\n');
    expect(output).toContain('Choosing the pi-lsp server:\n  pi.server.path: not set\n  pi-lsp on PATH: not found');
  });

  it('answers requests with the reason instead of a bare "not running"', async () => {
    const server = new PiServer('/extension');
    await server.start();
    await expect(server.request('pi/state', {})).rejects.toThrow(/^pi-lsp is not running: pi-lsp cannot start: no candidate can run it\. Tried:/);
  });
});
