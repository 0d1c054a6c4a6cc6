// When the chat shows its short setup instead of waiting for a prompt that cannot work: no model
// is configured, or the model's provider needs an API key it does not have.
import { EDITOR_PROVIDER } from '../languageModels/models';
import type { ModelInfo } from './messages';

/** Why the setup is shown (one sentence), or undefined when a prompt can run. */
export function setupReason(model: ModelInfo): string | undefined {
  if (!model.model) return 'No model is configured yet.';
  if (model.keyStatus === 'missing' && model.provider === EDITOR_PROVIDER) {
    return `VS Code does not offer ${model.model} now: its extension may still be starting, or be disabled or signed out.`;
  }
  if (model.keyStatus === 'missing') return `${model.model} needs an API key for ${model.provider ?? 'its provider'}.`;
  return undefined;
}
