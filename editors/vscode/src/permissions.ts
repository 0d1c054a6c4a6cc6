// Permission questions (docs/protocol.md, "Tool permissions"): the server asks with the standard
// window/showMessageRequest offering Allow, Allow for this session and Deny. The extension shows
// those as a modal with the whole command or change; every other showMessageRequest is shown as
// the language client would show it.
import * as vscode from 'vscode';
import type { MessageActionItem, ShowMessageRequestParams } from 'vscode-languageclient/node';

export const PERMISSION_ANSWERS = ['Allow', 'Allow for this session', 'Deny'];

const questions = new vscode.EventEmitter<string | undefined>();
/** A permission question's first line while it waits for the user, then undefined (the chat shows it in the card). */
export const onPermissionQuestion = questions.event;

/** Whether a showMessageRequest is one of pi's permission questions (by its three actions). */
export function isPermissionQuestion(params: ShowMessageRequestParams): boolean {
  const titles = (params.actions ?? []).map((action) => action.title);
  return titles.length === PERMISSION_ANSWERS.length && titles.every((title, index) => title === PERMISSION_ANSWERS[index]);
}

/** The modal's title (the first line: what pi wants to do) and detail (the rest). */
export function permissionPrompt(message: string): { title: string; detail: string } {
  const [title, ...rest] = message.split('\n');
  return { title, detail: rest.join('\n') };
}

/** Answers a showMessageRequest: a modal for permission questions, a notification otherwise. */
export async function answerMessageRequest(params: ShowMessageRequestParams): Promise<MessageActionItem | null> {
  const actions = params.actions ?? [];
  if (isPermissionQuestion(params)) {
    const { title, detail } = permissionPrompt(params.message);
    questions.fire(title);
    try {
      // Closing the modal (Escape) answers nothing: the server refuses the call.
      const chosen = await vscode.window.showWarningMessage(title, { modal: true, detail }, ...actions);
      return chosen ?? null;
    } finally {
      questions.fire(undefined);
    }
  }
  const show = params.type === 1 ? vscode.window.showErrorMessage : params.type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  return (await show(params.message, ...actions)) ?? null;
}
