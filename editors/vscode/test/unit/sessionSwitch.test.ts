// A prompt sent while the chat moves to another session (New, a resume, a fork, a navigation)
// goes to the session the user is moving to: it waits for the move, instead of going to the
// session being left with its answer then wiped by the move's reset of the chat.
import { describe, expect, it, vi } from 'vitest';
import type { PiServer } from '../../src/server';

vi.mock('vscode-languageclient/node', () => ({ ResponseError: class {}, State: { Stopped: 1, Starting: 3, Running: 2 } }));

const { ChatController } = await import('../../src/chat/chatController');
const { SessionController } = await import('../../src/session');

const noEvent = () => ({ dispose: () => undefined });

/** A server whose pi/newSession answers when the test says so; it records the prompts it gets. */
function fakeServer() {
  const prompts: { sessionId?: string; text: string }[] = [];
  let current = 'old-session';
  let answerNewSession = () => {};
  const server = {
    output: { appendLine: () => undefined },
    onEvent: noEvent,
    onDidStart: noEvent,
    onDidStop: noEvent,
    onResourcesChanged: noEvent,
    lastProblem: undefined,
    async request(method: string, params: { sessionId?: string; text: string }) {
      switch (method) {
        case 'pi/newSession':
          await new Promise<void>((resolve) => (answerNewSession = resolve));
          current = 'new-session';
          return { sessionId: current };
        case 'pi/state':
          return { sessionId: params.sessionId ?? current, model: null };
        case 'pi/messages':
          return { entries: [], total: 0 };
        case 'pi/prompt':
          prompts.push(params);
          return { stopReason: 'stop' };
        default:
          throw new Error(`unexpected ${method}`);
      }
    },
  };
  return { server: server as unknown as PiServer, prompts, answerNewSession: () => answerNewSession() };
}

describe('a prompt sent while the chat switches sessions', () => {
  it('goes to the session switched to, once the switch is shown', async () => {
    const { server, prompts, answerNewSession } = fakeServer();
    const session = new SessionController(server);
    const chat = new ChatController(server, session);
    await session.switchTo(undefined);
    expect(session.sessionId).toBe('old-session');

    const switching = session.whileSwitching(async () => {
      const result = (await server.request('pi/newSession', {} as never)) as { sessionId: string };
      await session.switchTo(result.sessionId);
    });
    const prompting = chat.handle({ type: 'prompt', text: 'Start the new task', behavior: undefined });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(prompts).toEqual([]);

    answerNewSession();
    await Promise.all([switching, prompting]);
    expect(prompts).toEqual([{ sessionId: 'new-session', text: 'Start the new task' }]);
  });

  it('lets prompts go on when the switch failed', async () => {
    const { server, prompts } = fakeServer();
    const session = new SessionController(server);
    const chat = new ChatController(server, session);
    await session.switchTo(undefined);
    await expect(session.whileSwitching(async () => Promise.reject(new Error('no such session')))).rejects.toThrow('no such session');
    await chat.handle({ type: 'prompt', text: 'Still here?', behavior: undefined });
    expect(prompts).toEqual([{ sessionId: 'old-session', text: 'Still here?' }]);
  });
});
