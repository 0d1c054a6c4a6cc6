// Permission questions: recognised by their three actions, asked in the running call's card while
// the chat shows it, else (or once the chat is hidden) in a modal; one place answers.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import type { ShowMessageRequestParams } from 'vscode-languageclient/node';
import { isPermissionQuestion, PERMISSION_ANSWERS, PermissionQuestions, permissionPrompt, type QuestionView } from '../../src/permissions';

const actions = PERMISSION_ANSWERS.map((title) => ({ title }));
const question: ShowMessageRequestParams = { type: 2 as ShowMessageRequestParams['type'], message: 'pi wants to run:\nnpm install\n(the workspace is not trusted)', actions };
const warning = vscode.window.showWarningMessage as unknown as ReturnType<typeof vi.fn>;

/** The chat as a place to ask: shown or not, and hidden on demand. */
function chat(shown: boolean) {
  const hidden = new vscode.EventEmitter<void>();
  return { shown, canAsk() { return this.shown; }, onDidHide: hidden.event, hide() { this.shown = false; hidden.fire(); } };
}

/** A cancellation the test triggers, as the language client's token for a withdrawn request. */
function cancellation() {
  const cancelled = new vscode.EventEmitter<void>();
  return {
    isCancellationRequested: false,
    onCancellationRequested: (listener: () => void) => cancelled.event(listener) as vscode.Disposable,
    cancel() { this.isCancellationRequested = true; cancelled.fire(); },
  };
}

function watch(questions: PermissionQuestions): (QuestionView | undefined)[] {
  const shown: (QuestionView | undefined)[] = [];
  questions.onDidChange((view) => shown.push(view));
  return shown;
}

describe('permission questions', () => {
  let questions: PermissionQuestions;
  beforeEach(() => {
    warning.mockReset();
    questions = new PermissionQuestions();
  });

  it('are told apart from other message requests by their actions', () => {
    expect(isPermissionQuestion(question)).toBe(true);
    expect(isPermissionQuestion({ ...question, actions: [{ title: 'Allow' }, { title: 'Deny' }] })).toBe(false);
    expect(isPermissionQuestion({ type: 2 as ShowMessageRequestParams['type'], message: 'x' })).toBe(false);
  });

  it('split into what pi wants to do and the details', () => {
    expect(permissionPrompt(question.message)).toEqual({ title: 'pi wants to run:', detail: 'npm install\n(the workspace is not trusted)' });
  });

  it('open as a modal when no chat shows the call, the card saying so', async () => {
    const shown = watch(questions);
    questions.setPlace(chat(false));
    warning.mockResolvedValueOnce(actions[1]);
    await expect(questions.answer(question)).resolves.toEqual({ title: 'Allow for this session' });
    expect(warning).toHaveBeenCalledWith('pi wants to run:', { modal: true, detail: 'npm install\n(the workspace is not trusted)' }, ...actions);
    expect(shown).toEqual([{ id: 1, title: 'pi wants to run:', detail: 'npm install\n(the workspace is not trusted)', answers: [] }, undefined]);
  });

  it('are asked in the card while the chat shows it, and answered from its button', async () => {
    const shown = watch(questions);
    questions.setPlace(chat(true));
    const answer = questions.answer(question);
    expect(shown).toEqual([{ id: 1, title: 'pi wants to run:', detail: 'npm install\n(the workspace is not trusted)', answers: PERMISSION_ANSWERS }]);
    expect(questions.current?.id).toBe(1);
    questions.answerInCard(1, 'Not an answer');
    questions.answerInCard(1, 'Deny');
    await expect(answer).resolves.toEqual({ title: 'Deny' });
    expect(warning).not.toHaveBeenCalled();
    expect(shown.at(-1)).toBeUndefined();
    expect(questions.current).toBeUndefined();
  });

  it('go to the modal when the chat is hidden before an answer; the card no longer answers', async () => {
    const place = chat(true);
    questions.setPlace(place);
    const shown = watch(questions);
    warning.mockResolvedValueOnce(actions[0]);
    const answer = questions.answer(question);
    place.hide();
    questions.answerInCard(1, 'Deny');
    await expect(answer).resolves.toEqual({ title: 'Allow' });
    expect(warning).toHaveBeenCalledOnce();
    expect(shown.map((view) => view?.answers.length)).toEqual([3, 0, undefined]);
  });

  it('leave the card when the server withdraws the question', async () => {
    questions.setPlace(chat(true));
    const token = cancellation();
    const answer = questions.answer(question, token);
    token.cancel();
    await expect(answer).resolves.toBeNull();
    expect(warning).not.toHaveBeenCalled();
    expect(questions.current).toBeUndefined();
  });

  it('answer null when the modal is closed, and leave other requests as notifications', async () => {
    warning.mockResolvedValueOnce(undefined);
    await expect(questions.answer(question)).resolves.toBeNull();
    warning.mockResolvedValueOnce({ title: 'OK' });
    await expect(questions.answer({ type: 2 as ShowMessageRequestParams['type'], message: 'Something', actions: [{ title: 'OK' }] })).resolves.toEqual({ title: 'OK' });
    expect(warning).toHaveBeenLastCalledWith('Something', { title: 'OK' });
  });
});
