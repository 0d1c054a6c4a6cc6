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

export class EventEmitter<T> {
  private listeners: ((value: T) => void)[] = [];
  event = (listener: (value: T) => void) => {
    this.listeners.push(listener);
    return { dispose: () => undefined };
  };
  fire(value: T): void {
    for (const listener of this.listeners) listener(value);
  }
  dispose(): void {
    this.listeners = [];
  }
}
