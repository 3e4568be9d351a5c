/**
 * The line `agentwire chat` prints on stderr at the end of a turn: what the
 * turn's model calls used (tokens in, of them cached; out, of them
 * reasoning), how full the context window is when the model declares one,
 * and the cost when its pricing is configured — from the turn's last
 * usage_updated. Nothing is estimated: what the server does not know is left out.
 */
import type { UsageUpdatedNotification } from "../../clients/typescript/index.js";

const count = (n: number) => n.toLocaleString("en-US");

/** An amount with cents from 1 up (12.50), else its first three significant digits without trailing zeros (0.0049, 0.000042). */
export function formatAmount(amount: number): string {
  if (amount >= 1) return amount.toFixed(2);
  if (amount === 0) return "0";
  const decimals = Math.min(12, 2 - Math.floor(Math.log10(amount)));
  return amount.toFixed(decimals).replace(/\.?0+$/, "");
}

export function usageLine(usage: Pick<UsageUpdatedNotification, "generation" | "context">): string {
  const { generation: g, context } = usage;
  const parts = [
    `usage: ${count(g.promptTokens)} tokens in${g.cachedPromptTokens > 0 ? ` (${count(g.cachedPromptTokens)} cached)` : ""}, ` +
      `${count(g.completionTokens)} out${g.reasoningTokens > 0 ? ` (${count(g.reasoningTokens)} reasoning)` : ""}`,
  ];
  if (context.windowTokens !== null) {
    const percent = (100 * context.usedTokens) / context.windowTokens;
    parts.push(`context ${percent > 0 && percent < 1 ? "<1" : Math.round(percent)}% of ${count(context.windowTokens)}`);
  }
  if (g.cost !== null) {
    const unpriced = g.unpricedModelCalls > 0 ? ` (+ ${g.unpricedModelCalls} unpriced ${g.unpricedModelCalls === 1 ? "call" : "calls"})` : "";
    parts.push(`cost ${formatAmount(g.cost.amount)} ${g.cost.currency}${unpriced}`);
  }
  return parts.join(" · ");
}
