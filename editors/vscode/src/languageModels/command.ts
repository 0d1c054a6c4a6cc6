// "Pi: Use a Model VS Code Provides (Copilot…)" and the wiring of the editor's models into the
// server (editorModels.ts): the command offers the models VS Code has under their vendor in the
// model picker, or says how to get some.
import * as vscode from 'vscode';
import type { PiServer } from '../server';
import { EditorLanguageModels } from './editorModels';
import { EDITOR_PROVIDER } from './models';

export const USE_EDITOR_MODEL_COMMAND = 'pi.languageModels.select';

export function registerEditorModels(server: PiServer): vscode.Disposable[] {
  const models = new EditorLanguageModels(server.output);
  server.addParticipant(models);
  return [
    models,
    vscode.commands.registerCommand(USE_EDITOR_MODEL_COMMAND, async () => {
      if ((await models.available()).length === 0) {
        void vscode.window.showInformationMessage(
          'VS Code provides no chat model yet: install and sign in to GitHub Copilot Chat, or another extension that contributes language models.',
        );
        return;
      }
      await vscode.commands.executeCommand('pi.model.select', EDITOR_PROVIDER);
    }),
  ];
}
