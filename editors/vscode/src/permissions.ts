// Permission questions (docs/protocol.md, "Tool permissions"): the server asks with the standard
// window/showMessageRequest offering Allow, Allow for this session and Deny. While the chat shows
// the card of the call asked about, the card asks, with the whole command or change and the three
// buttons; otherwise (the chat hidden, or showing another session) a modal does, so a question
// never waits unseen. A card left unanswered when the chat is hidden hands the question to the
// modal; one place answers. Every other showMessageRequest is shown as the language client would.
import * as vscode from 'vscode';
import type { MessageActionItem, ShowMessageRequestParams } from 'vscode-languageclient/node';

export const PERMISSION_ANSWERS = ['Allow', 'Allow for this session', 'Deny'];

/** A question waiting for the user, as the chat shows it in the card of the running call. */
export interface QuestionView {
  id: number;
  /** What pi wants to do (the first line). */
  title: string;
  /** The command or change, and why it asks (the rest). */
  detail: string;
  /** The answers offered in the card; none when the modal asks (the card only says so). */
  answers: string[];
}

/** Where a question can be answered besides the modal: the chat, while it shows the running call. */
export interface QuestionPlace {
  /** Whether the card of the call asked about is on screen now. */
  canAsk(): boolean;
  /** Fired when the card can no longer be answered (the chat hidden, or showing another session). */
  readonly onDidHide: vscode.Event<void>;
}

/** A cancellation the language client hands a request handler (the server withdrew the question). */
interface Cancellation {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): vscode.Disposable;
}

/** Whether a showMessageRequest is one of pi's permission questions (by its three actions). */
export function isPermissionQuestion(params: ShowMessageRequestParams): boolean {
  const titles = (params.actions ?? []).map((action) => action.title);
  return titles.length === PERMISSION_ANSWERS.length && titles.every((title, index) => title === PERMISSION_ANSWERS[index]);
}

/** The question's title (the first line: what pi wants to do) and detail (the rest). */
export function permissionPrompt(message: string): { title: string; detail: string } {
  const [title, ...rest] = message.split('\n');
  return { title, detail: rest.join('\n') };
}

/** The card was hidden before it was answered: the modal asks instead. */
const HIDDEN = Symbol('hidden');

export class PermissionQuestions implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<QuestionView | undefined>();
  /** The question the chat shows (the latest one waiting), or undefined when none waits. */
  readonly onDidChange = this.changed.event;
  private readonly waiting = new Map<number, QuestionView>();
  private readonly cardAnswers = new Map<number, (answer: string) => void>();
  private asked = 0;
  private place: QuestionPlace | undefined;

  /** The chat offers its cards for the questions (until the returned disposable is disposed). */
  setPlace(place: QuestionPlace): vscode.Disposable {
    this.place = place;
    return new vscode.Disposable(() => {
      if (this.place === place) this.place = undefined;
    });
  }

  /** The question the chat is to show now (sent again to a chat view created meanwhile). */
  get current(): QuestionView | undefined {
    return [...this.waiting.values()].at(-1);
  }

  /** Answers a showMessageRequest: pi's questions in the card or a modal, others as a notification. */
  async answer(params: ShowMessageRequestParams, token?: Cancellation): Promise<MessageActionItem | null> {
    const actions = params.actions ?? [];
    if (!isPermissionQuestion(params)) {
      const show = params.type === 1 ? vscode.window.showErrorMessage : params.type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
      return (await show(params.message, ...actions)) ?? null;
    }
    if (token?.isCancellationRequested) return null;
    const { title, detail } = permissionPrompt(params.message);
    const id = ++this.asked;
    try {
      if (this.place?.canAsk() && this.cardAnswers.size === 0) {
        const answered = await this.askInCard({ id, title, detail, answers: PERMISSION_ANSWERS }, this.place, token);
        if (answered !== HIDDEN) return answered;
      }
      if (token?.isCancellationRequested) return null;
      this.show({ id, title, detail, answers: [] });
      // Closing the modal (Escape) answers nothing: the server refuses the call.
      return (await vscode.window.showWarningMessage(title, { modal: true, detail }, ...actions)) ?? null;
    } finally {
      this.waiting.delete(id);
      this.changed.fire(this.current);
    }
  }

  /** The card's button `answer` was clicked for question `id` (ignored once answered elsewhere). */
  answerInCard(id: number, answer: string): void {
    if (PERMISSION_ANSWERS.includes(answer)) this.cardAnswers.get(id)?.(answer);
  }

  dispose(): void {
    this.changed.dispose();
  }

  private show(view: QuestionView): void {
    this.waiting.set(view.id, view);
    this.changed.fire(view);
  }

  /** The card's answer; null when the server withdrew the question; HIDDEN when the chat was hidden first. */
  private askInCard(view: QuestionView, place: QuestionPlace, token?: Cancellation): Promise<MessageActionItem | null | typeof HIDDEN> {
    return new Promise((resolve) => {
      const subscriptions: vscode.Disposable[] = [];
      const settle = (outcome: MessageActionItem | null | typeof HIDDEN) => {
        this.cardAnswers.delete(view.id);
        for (const subscription of subscriptions) subscription.dispose();
        resolve(outcome);
      };
      this.cardAnswers.set(view.id, (answer) => settle({ title: answer }));
      subscriptions.push(place.onDidHide(() => settle(HIDDEN)));
      if (token) subscriptions.push(token.onCancellationRequested(() => settle(null)));
      this.show(view);
    });
  }
}

/** The extension's one set of questions: the language client asks, the chat shows and answers. */
export const permissionQuestions = new PermissionQuestions();
