// Forget, replace and restore a message in the model's context (pi/contextEdit, pi/contextRestore)
// from the chat's and the tree's context menus and the Context view. The message itself stays in
// the session file; the chat reloads, so it shows the note under the message and the meter its
// new size, and the tree patches the mark from the `tree_changed` event.
import * as vscode from 'vscode';
import type { ContextEditEffect } from '../protocol';
import type { PiServer } from '../server';
import type { SessionController } from '../session';

/** What a context menu or the Context view hands a command: an entry of the shown session. */
export interface ContextTarget {
  entryId: string;
  /** The text shown for it (the replacement box starts with it). */
  text?: string;
  contextEdit?: ContextEditEffect | null;
}

/** The entry a command was invoked on: a tree node, the chat's webview context, or a target. */
export function contextTarget(arg: unknown): ContextTarget | undefined {
  if (!arg || typeof arg !== 'object') return undefined;
  const value = arg as Record<string, unknown>;
  const entry = value.entry as Record<string, unknown> | undefined;
  if (entry && typeof entry.id === 'string') {
    return { entryId: entry.id, text: typeof entry.preview === 'string' ? entry.preview : undefined, contextEdit: entry.contextEdit as ContextEditEffect | undefined };
  }
  const entryId = value.entryId ?? value.piEntryId;
  if (typeof entryId !== 'string' || !entryId) return undefined;
  const text = value.text ?? value.piText;
  const edited = value.contextEdit ?? value.piEdited;
  return {
    entryId,
    text: typeof text === 'string' ? text : undefined,
    contextEdit: edited === 'removed' || edited === 'replaced' ? edited : undefined,
  };
}

/** Says, once per forget, that removing from the context is not removing from the file. */
export const FORGET_NOTE =
  'Removed from the context: the model no longer sees it from the next request on. The message stays in the session file (a pasted secret is still on disk); Restore brings it back.';

export async function forget(server: PiServer, session: SessionController, target: ContextTarget): Promise<void> {
  await server.request('pi/contextEdit', { ...sessionOf(session), targetId: target.entryId, replacement: null });
  await session.reloadHistory();
  void vscode.window.showInformationMessage(FORGET_NOTE);
}

export async function replace(server: PiServer, session: SessionController, target: ContextTarget): Promise<void> {
  const replacement = await vscode.window.showInputBox({
    title: `Replace ${target.entryId} in the context`,
    prompt: 'What the model sees instead from the next request on (the message stays in the session file)',
    value: target.text ?? '',
    validateInput: (value) => (value.trim() ? undefined : 'Empty: use "Remove from Context" to leave the message out'),
  });
  if (replacement === undefined) return;
  await server.request('pi/contextEdit', { ...sessionOf(session), targetId: target.entryId, replacement });
  await session.reloadHistory();
}

export async function restore(server: PiServer, session: SessionController, target: ContextTarget): Promise<void> {
  await server.request('pi/contextRestore', { ...sessionOf(session), targetId: target.entryId });
  await session.reloadHistory();
}

function sessionOf(session: SessionController): { sessionId?: string } {
  return session.sessionId ? { sessionId: session.sessionId } : {};
}
