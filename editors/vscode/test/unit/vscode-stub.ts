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
  showErrorMessage: vi.fn(async () => undefined),
  showInformationMessage: vi.fn(async () => undefined),
};

export const commands = { registerCommand: vi.fn(), executeCommand: vi.fn() };
