// Permission questions: recognised by their three actions, shown as a modal with the details.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import type { ShowMessageRequestParams } from 'vscode-languageclient/node';
import { answerMessageRequest, isPermissionQuestion, PERMISSION_ANSWERS, permissionPrompt } from '../../src/permissions';

const actions = PERMISSION_ANSWERS.map((title) => ({ title }));
const question: ShowMessageRequestParams = { type: 2 as ShowMessageRequestParams['type'], message: 'pi wants to run:\nnpm install\n(the workspace is not trusted)', actions };
const warning = vscode.window.showWarningMessage as unknown as ReturnType<typeof vi.fn>;

describe('permission questions', () => {
  beforeEach(() => warning.mockReset());

  it('are told apart from other message requests by their actions', () => {
    expect(isPermissionQuestion(question)).toBe(true);
    expect(isPermissionQuestion({ ...question, actions: [{ title: 'Allow' }, { title: 'Deny' }] })).toBe(false);
    expect(isPermissionQuestion({ type: 2 as ShowMessageRequestParams['type'], message: 'x' })).toBe(false);
  });

  it('split into what pi wants to do and the details', () => {
    expect(permissionPrompt(question.message)).toEqual({ title: 'pi wants to run:', detail: 'npm install\n(the workspace is not trusted)' });
  });

  it('open as a modal and answer with the chosen action', async () => {
    warning.mockResolvedValueOnce(actions[1]);
    await expect(answerMessageRequest(question)).resolves.toEqual({ title: 'Allow for this session' });
    expect(warning).toHaveBeenCalledWith('pi wants to run:', { modal: true, detail: 'npm install\n(the workspace is not trusted)' }, ...actions);
  });

  it('answer null when the modal is closed, and leave other requests as notifications', async () => {
    warning.mockResolvedValueOnce(undefined);
    await expect(answerMessageRequest(question)).resolves.toBeNull();
    warning.mockResolvedValueOnce({ title: 'OK' });
    await expect(answerMessageRequest({ type: 2 as ShowMessageRequestParams['type'], message: 'Something', actions: [{ title: 'OK' }] })).resolves.toEqual({ title: 'OK' });
    expect(warning).toHaveBeenLastCalledWith('Something', { title: 'OK' });
  });
});
