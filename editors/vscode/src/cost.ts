// What the session's model calls cost, as the status bar shows it: dollars and the cached share.
import type { SessionCost } from './protocol';

/** "$0.42", "$0.004", "<$0.001"; more digits where the amount is small. */
export function formatDollars(total: number): string {
  if (total <= 0) return '$0';
  if (total < 0.001) return '<$0.001';
  return `$${total.toFixed(total < 0.1 ? 3 : 2)}`;
}

function tokens(count: number): string {
  if (count >= 1_000_000) return `${(count / 1_000_000).toFixed(1)}M`;
  if (count >= 1000) return `${(count / 1000).toFixed(count >= 10_000 ? 0 : 1)}k`;
  return String(count);
}

/** A model VS Code provides: its requests are paid by the user's plan, not per token by pi-lsp. */
const PLAN_PROVIDER = 'vscode-lm';
const IN_PLAN = 'included in your plan';

/** "$0.42 (71 % cached)"; only the parts there is something to say about (nothing for a free,
 *  uncached model). `provider` is the session's model's: VS Code's own models cost nothing
 *  measured, so the line says they are included in the plan instead of "$0". */
export function describeCost(cost: SessionCost | undefined, provider?: string | null): string {
  if (!cost) return '';
  const parts: string[] = [];
  if (cost.total > 0) parts.push(formatDollars(cost.total));
  else if (provider === PLAN_PROVIDER) parts.push(IN_PLAN);
  if (cost.cacheRead > 0 && cost.cachedPercent !== null) parts.push(`(${Math.round(cost.cachedPercent)} % cached)`);
  return parts.join(' ');
}

/** The tooltip line: the cost and where the tokens went. */
export function costDetails(cost: SessionCost | undefined, provider?: string | null): string | undefined {
  if (!cost || cost.input + cost.cacheRead + cost.cacheWrite + cost.output === 0) return undefined;
  const price = cost.total === 0 && provider === PLAN_PROVIDER ? `${IN_PLAN} (not billed per token by pi-lsp)` : formatDollars(cost.total);
  const prompt = cost.input + cost.cacheRead + cost.cacheWrite;
  const cached =
    cost.cachedPercent === null ? '' : `, ${Math.round(cost.cachedPercent)} % read from the prompt cache`;
  return (
    `Cost ${price}: ${tokens(prompt)} tokens in${cached}` +
    ` (${tokens(cost.cacheRead)} read, ${tokens(cost.cacheWrite)} written), ${tokens(cost.output)} out`
  );
}
