// The editor's chat models as pi-lsp lists them (`pi/languageModels`), and VS Code's errors as
// the codes of `pi/languageModel/chat` (pure, unit-tested).
import {
  LANGUAGE_MODEL_BLOCKED,
  LANGUAGE_MODEL_CONTEXT_TOO_LONG,
  LANGUAGE_MODEL_NO_PERMISSIONS,
  LANGUAGE_MODEL_NOT_FOUND,
  type LanguageModelInfo,
} from '../protocol';

/** The provider pi-lsp lists these models under (`vscode-lm/<vendor>/<id>`). */
export const EDITOR_PROVIDER = 'vscode-lm';

/** What pi-lsp needs of a `vscode.LanguageModelChat`. */
export interface ChatModelLike {
  readonly id: string;
  readonly vendor: string;
  readonly family: string;
  readonly name: string;
  readonly maxInputTokens: number;
}

/** The models to list: one per vendor and id (VS Code may report one twice), in its order. */
export function describeModels(models: readonly ChatModelLike[]): LanguageModelInfo[] {
  const seen = new Set<string>();
  const listed: LanguageModelInfo[] = [];
  for (const model of models) {
    const key = `${model.vendor}/${model.id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    listed.push({ id: model.id, vendor: model.vendor, family: model.family, name: model.name, maxInputTokens: model.maxInputTokens });
  }
  return listed;
}

const LANGUAGE_MODEL_ERRORS: Record<string, number> = {
  NoPermissions: LANGUAGE_MODEL_NO_PERMISSIONS,
  Blocked: LANGUAGE_MODEL_BLOCKED,
  NotFound: LANGUAGE_MODEL_NOT_FOUND,
};
// How the models' providers say a prompt is too long (Copilot: "Message exceeds token limit").
const CONTEXT_TOO_LONG = /token limit|context (?:length|window)|too long|too many tokens|exceeds the limit/i;
const INTERNAL_ERROR = -32603;

/** The JSON-RPC error code of a failed request: `languageModelCode` is a
 *  `vscode.LanguageModelError`'s `code`, when the error is one. */
export function errorCodeFor(message: string, languageModelCode: string | undefined): number {
  const known = languageModelCode === undefined ? undefined : LANGUAGE_MODEL_ERRORS[languageModelCode];
  if (known !== undefined) return known;
  return CONTEXT_TOO_LONG.test(message) ? LANGUAGE_MODEL_CONTEXT_TOO_LONG : INTERNAL_ERROR;
}
