// The models VS Code provides (GitHub Copilot, and every model an extension contributes through
// the Language Model API) lent to pi-lsp: the client advertises `piLanguageModels` in
// `initialize`, lists the models with `pi/languageModels` (again whenever VS Code's list
// changes), and runs each `pi/languageModel/chat` the server sends with `sendRequest`, streaming
// the answer's parts back before it answers with `countTokens`' figures. VS Code asks the user's
// consent the first time; a refusal, a quota, a missing model or a prompt too long become the
// error codes of docs/protocol.md, and the server tells the chat what to do.
import * as vscode from 'vscode';
import { type LanguageClient, ResponseError, type StaticFeature } from 'vscode-languageclient/node';
import {
  LANGUAGE_MODEL_CHAT_REQUEST,
  LANGUAGE_MODEL_NOT_FOUND,
  LANGUAGE_MODEL_PART_NOTIFICATION,
  LANGUAGE_MODELS_CAPABILITY,
  LANGUAGE_MODELS_NOTIFICATION,
  type LanguageModelChatParams,
  type LanguageModelChatResult,
  type LanguageModelPart,
  type LanguageModelPartParams,
  type LanguageModelsParams,
} from '../protocol';
import type { ClientParticipant } from '../server';
import { type AnswerPart, fromAnswerPart, type PartFactory, toChatMessages } from './conversion';
import { describeModels, errorCodeFor } from './models';

const REQUEST_CANCELLED = -32800;

type Part = vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart | vscode.LanguageModelToolResultPart;

// Images and thinking parts are newer than the VS Code this extension requires: used where present.
const newer = vscode as unknown as {
  LanguageModelDataPart?: { image(data: Uint8Array, mimeType: string): Part };
  LanguageModelThinkingPart?: new (...args: never[]) => { value: string | string[] };
};

const VSCODE_PARTS: PartFactory<vscode.LanguageModelChatMessage, Part> = {
  user: (parts) => vscode.LanguageModelChatMessage.User(parts as (vscode.LanguageModelTextPart | vscode.LanguageModelToolResultPart)[]),
  assistant: (parts) => vscode.LanguageModelChatMessage.Assistant(parts as (vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart)[]),
  text: (value) => new vscode.LanguageModelTextPart(value),
  toolCall: (callId, name, input) => new vscode.LanguageModelToolCallPart(callId, name, input),
  toolResult: (callId, content) => new vscode.LanguageModelToolResultPart(callId, content),
  image: (data, mimeType) => newer.LanguageModelDataPart?.image(data, mimeType),
};

/** `capabilities.experimental.piLanguageModels: true` in `initialize`. */
const CAPABILITY: StaticFeature = {
  fillClientCapabilities(capabilities) {
    capabilities.experimental = { ...(capabilities.experimental as object | undefined), [LANGUAGE_MODELS_CAPABILITY]: true };
  },
  initialize() {},
  getState: () => ({ kind: 'static' }),
  clear() {},
};

export class EditorLanguageModels implements ClientParticipant, vscode.Disposable {
  private models: vscode.LanguageModelChat[] = [];
  private client: LanguageClient | undefined;
  private readonly watch: vscode.Disposable;

  constructor(private readonly output: vscode.OutputChannel) {
    this.watch = vscode.lm.onDidChangeChatModels(() => void this.sendModels());
  }

  /** The models VS Code provides now. */
  async available(): Promise<readonly vscode.LanguageModelChat[]> {
    this.models = await vscode.lm.selectChatModels();
    return this.models;
  }

  attach(client: LanguageClient): void {
    client.registerFeature(CAPABILITY);
    client.onRequest(LANGUAGE_MODEL_CHAT_REQUEST, (params: LanguageModelChatParams, token: vscode.CancellationToken) =>
      this.chat(client, params, token),
    );
  }

  async running(client: LanguageClient): Promise<void> {
    this.client = client;
    await this.sendModels();
  }

  dispose(): void {
    this.watch.dispose();
  }

  private async sendModels(): Promise<void> {
    const client = this.client;
    if (!client?.isRunning()) return;
    const params: LanguageModelsParams = { models: describeModels(await this.available()) };
    await client.sendNotification(LANGUAGE_MODELS_NOTIFICATION, params);
    this.output.appendLine(`Models VS Code provides: ${params.models.map((model) => `${model.vendor}/${model.id}`).join(', ') || 'none'}`);
  }

  private async chat(client: LanguageClient, params: LanguageModelChatParams, token: vscode.CancellationToken): Promise<LanguageModelChatResult> {
    const model = this.models.find((known) => known.id === params.model) ?? (await vscode.lm.selectChatModels({ id: params.model }))[0];
    if (!model) throw new ResponseError(LANGUAGE_MODEL_NOT_FOUND, `VS Code has no model ${params.model} now`);
    const messages = toChatMessages(params.messages, VSCODE_PARTS);
    const options: vscode.LanguageModelChatRequestOptions = {
      justification: params.justification,
      tools: params.tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })),
    };
    // Each part is on the wire before the next, and all of them before the response.
    const send = (part: LanguageModelPart) => {
      const notification: LanguageModelPartParams = { requestId: params.requestId, part };
      return client.sendNotification(LANGUAGE_MODEL_PART_NOTIFICATION, notification);
    };
    let answer = '';
    try {
      const response = await model.sendRequest(messages, options, token);
      for await (const streamed of response.stream) {
        const part = answerPart(streamed);
        if (part?.kind === 'text') answer += part.value;
        const wire = part && fromAnswerPart(part);
        if (wire) await send(wire);
      }
    } catch (error) {
      if (token.isCancellationRequested) throw new ResponseError(REQUEST_CANCELLED, 'The request was cancelled');
      throw asResponseError(error);
    }
    return tokenCounts(model, messages, answer, token);
  }
}

function answerPart(part: unknown): AnswerPart | undefined {
  if (part instanceof vscode.LanguageModelTextPart) return { kind: 'text', value: part.value };
  if (part instanceof vscode.LanguageModelToolCallPart) return { kind: 'toolCall', callId: part.callId, name: part.name, input: part.input };
  if (newer.LanguageModelThinkingPart && part instanceof newer.LanguageModelThinkingPart) {
    const value = part.value;
    return { kind: 'thinking', value: Array.isArray(value) ? value.join('') : value };
  }
  return undefined;
}

function asResponseError(error: unknown): ResponseError<void> {
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof vscode.LanguageModelError ? error.code : undefined;
  return new ResponseError(errorCodeFor(message, code), message || code || 'The model failed');
}

/** The model's own counts of the prompt and the answer; none when it cannot count them. */
async function tokenCounts(
  model: vscode.LanguageModelChat,
  messages: vscode.LanguageModelChatMessage[],
  answer: string,
  token: vscode.CancellationToken,
): Promise<LanguageModelChatResult> {
  try {
    const prompt = await Promise.all(messages.map((message) => model.countTokens(message, token)));
    const output = answer ? await model.countTokens(answer, token) : 0;
    return { inputTokens: prompt.reduce((sum, count) => sum + count, 0), outputTokens: output };
  } catch {
    return {};
  }
}
