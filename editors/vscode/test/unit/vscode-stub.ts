// A stand-in for the `vscode` module in unit tests: only what the tested modules touch.
import { vi } from 'vitest';

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class ThemeIcon {
  constructor(readonly id: string, readonly color?: ThemeColor) {}
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export const createdStatusBarItems: Record<string, unknown>[] = [];

export const window = {
  createQuickPick: vi.fn(() => createQuickPick()),
  createStatusBarItem: vi.fn((id: string) => {
    const item = { id, text: '', tooltip: '', show: vi.fn(), dispose: vi.fn() } as Record<string, unknown>;
    createdStatusBarItems.push(item);
    return item;
  }),
  showErrorMessage: vi.fn(async (..._args: unknown[]): Promise<string | undefined> => undefined),
  showInformationMessage: vi.fn(async () => undefined),
  showWarningMessage: vi.fn(async (..._args: unknown[]): Promise<unknown> => undefined),
  createOutputChannel: vi.fn(() => ({ lines: [] as string[], appendLine(line: string) { this.lines.push(line); }, show: vi.fn(), dispose: vi.fn() })),
};

export const commands = { registerCommand: vi.fn(), executeCommand: vi.fn() };

export const workspace = {
  isTrusted: true,
  workspaceFolders: undefined,
  getConfiguration: vi.fn(() => ({ get: () => undefined })),
};

export class Disposable {
  constructor(private readonly onDispose: () => void) {}
  dispose(): void {
    this.onDispose();
  }
}

export class EventEmitter<T> {
  private listeners: ((value: T) => void)[] = [];
  event = (listener: (value: T) => void) => {
    this.listeners.push(listener);
    return { dispose: () => void (this.listeners = this.listeners.filter((other) => other !== listener)) };
  };
  fire(value: T): void {
    for (const listener of this.listeners) listener(value);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export enum QuickPickItemKind {
  Separator = -1,
  Default = 0,
}

/**
 * A quick pick as the extension host keeps one: VS Code reports the user's choice as indexes into
 * the list it shows, and the extension host reads them against its items of the moment.
 */
export class FakeQuickPick<T> {
  items: readonly T[] = [];
  selectedItems: readonly T[] = [];
  activeItems: readonly T[] = [];
  value = '';
  title = '';
  placeholder = '';
  busy = false;
  matchOnDescription = false;
  shown = false;
  private readonly valueListeners: ((value: string) => void)[] = [];
  private readonly acceptListeners: (() => void)[] = [];
  private readonly hideListeners: (() => void)[] = [];
  onDidChangeValue = (listener: (value: string) => void) => this.listen(this.valueListeners, listener);
  onDidAccept = (listener: () => void) => this.listen(this.acceptListeners, listener);
  onDidHide = (listener: () => void) => this.listen(this.hideListeners, listener);
  show(): void {
    this.shown = true;
  }
  hide(): void {
    this.shown = false;
    for (const listener of this.hideListeners) listener();
  }
  dispose(): void {
    this.shown = false;
  }
  /** The user types `value`. */
  type(value: string): void {
    this.value = value;
    for (const listener of this.valueListeners) listener(value);
  }
  /** The user clicks the row at `index` of the list VS Code showed; the items may have changed since. */
  choose(index: number): void {
    this.selectedItems = this.items[index] === undefined ? [] : [this.items[index]];
    for (const listener of this.acceptListeners) listener();
  }
  private listen<L>(listeners: L[], listener: L) {
    listeners.push(listener);
    return { dispose: () => listeners.splice(listeners.indexOf(listener), 1) };
  }
}

export const createdQuickPicks: FakeQuickPick<unknown>[] = [];

function createQuickPick(): FakeQuickPick<unknown> {
  const pick = new FakeQuickPick<unknown>();
  createdQuickPicks.push(pick);
  return pick;
}
