// The status-bar item: the shown session's context usage, coloured at 90 % and 95 %.
import * as vscode from 'vscode';
import { contextLevel, describeCompactionMark, describeUsage, levelWarning } from './contextLevel';
import type { StateResult } from './protocol';

export class ContextStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('pi.context', vscode.StatusBarAlignment.Right, 100);

  constructor() {
    this.item.name = 'Pi context usage';
    this.item.command = 'pi.chat.open';
    this.item.text = '$(comment-discussion) pi';
    this.item.tooltip = 'pi-lsp is starting';
    this.item.show();
  }

  update(state: StateResult | undefined): void {
    const usage = state?.contextUsage;
    const level = contextLevel(usage?.percent);
    this.item.text = `$(comment-discussion) ${describeUsage(usage)}`;
    const warning = levelWarning(level);
    const mark = describeCompactionMark(usage);
    this.item.tooltip = state
      ? `pi: ${state.model?.model ?? 'no model'} · ${state.messageCount} messages${state.isStreaming ? ' · working' : ''}\n${warning ? `${warning}\n` : ''}${mark ? `${mark}\n` : ''}Click to open the chat`
      : 'pi-lsp is not running';
    this.item.backgroundColor =
      level === 'critical'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : level === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
