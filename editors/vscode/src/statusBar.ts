// The status-bar item (a click opens the Context view): the shown session's context usage, coloured at 90 % and 95 %, and what the
// session cost so far with the share of it read from the provider's prompt cache.
import * as vscode from 'vscode';
import { contextLevel, describeCompactionMark, describeUsage, levelWarning } from './contextLevel';
import { costDetails, describeCost } from './cost';
import type { StateResult } from './protocol';

export class ContextStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('pi.context', vscode.StatusBarAlignment.Right, 100);

  constructor() {
    this.item.name = 'Pi context usage';
    this.item.command = 'pi.context.show';
    this.item.text = '$(comment-discussion) pi';
    this.item.tooltip = 'pi-lsp is starting';
    this.item.show();
  }

  update(state: StateResult | undefined): void {
    const usage = state?.contextUsage;
    const level = contextLevel(usage?.percent);
    const cost = describeCost(state?.cost, state?.model?.provider);
    this.item.text = `$(comment-discussion) ${describeUsage(usage)}${cost ? ` · ${cost}` : ''}`;
    const warning = levelWarning(level);
    const details = costDetails(state?.cost, state?.model?.provider);
    const mark = describeCompactionMark(usage);
    this.item.tooltip = state
      ? `pi: ${state.model?.model ?? 'no model'} · ${state.messageCount} messages${state.isStreaming ? ' · working' : ''}\n${warning ? `${warning}\n` : ''}${mark ? `${mark}\n` : ''}${details ? `${details}\n` : ''}Click to see what the context holds`
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
