// A quick pick that asks the server as the user types (the session search, the tree search, the
// model pickers): a request once typing pauses, only the answer to the latest text shown (an
// earlier request answering late is dropped), busy while the latest one runs.
import * as vscode from 'vscode';

export interface TypedSearch<Item extends vscode.QuickPickItem, Answer> {
  /** How long typing must pause before the server is asked. */
  delayMs: number;
  /** Asks the server about `typed`. */
  ask(typed: string): Promise<Answer>;
  /** Shows the answer to the latest text. */
  show(answer: Answer): void;
  /** The request for the latest text failed (left out: the error propagates to no one). */
  failed?(error: unknown): void;
  /** Blank text is not asked about: this shows what the pick holds then. Left out: it is asked. */
  blank?(): void;
  /** Asks about the text the pick opens with, before anything is typed. */
  askAtOnce?: boolean;
  /** Whether Enter on `item` chooses it; otherwise (and on no item) the pick stays open. Left out: Enter always closes it. */
  accepts?(item: Item): boolean;
}

/** Shows `pick` and runs `search` as the user types; resolves with the chosen item, or undefined when dismissed. */
export function searchAsTyped<Item extends vscode.QuickPickItem, Answer>(
  pick: vscode.QuickPick<Item>,
  search: TypedSearch<Item, Answer>,
): Promise<Item | undefined> {
  let timer: NodeJS.Timeout | undefined;
  let asked = 0;

  const run = async (typed: string) => {
    const ticket = ++asked;
    if (search.blank && !typed.trim()) {
      pick.busy = false;
      search.blank();
      return;
    }
    pick.busy = true;
    try {
      const answer = await search.ask(typed);
      if (ticket === asked) search.show(answer);
    } catch (error) {
      if (ticket === asked) search.failed?.(error);
    } finally {
      if (ticket === asked) pick.busy = false;
    }
  };

  return new Promise((resolve) => {
    pick.onDidChangeValue((value) => {
      clearTimeout(timer);
      timer = setTimeout(() => void run(value), search.delayMs);
    });
    pick.onDidAccept(() => {
      const accepted = pick.selectedItems[0] ?? pick.activeItems[0];
      if (search.accepts && !(accepted && search.accepts(accepted))) return;
      resolve(accepted);
      pick.hide();
    });
    pick.onDidHide(() => {
      clearTimeout(timer);
      resolve(undefined);
      pick.dispose();
    });
    pick.show();
    if (search.askAtOnce) void run(pick.value);
  });
}
