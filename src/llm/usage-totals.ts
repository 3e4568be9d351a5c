/**
 * Usage arithmetic: a model call's cost from its model's declared pricing
 * (never guessed: no pricing or no usage gives null), and the running totals
 * of a generation, a conversation and the server.
 */
import type { ConversationUsage, Cost, ModelPricing, TokenUsage, UsageTotals } from "../../protocol/usage.js";

/** What one call cost; null when the model has no pricing or the endpoint reported no usage. */
export function costOf(usage: TokenUsage | null, pricing: ModelPricing | undefined): Cost | null {
  if (!usage || !pricing) return null;
  const cached = Math.min(usage.cachedPromptTokens ?? 0, usage.promptTokens);
  const written = Math.min(usage.cacheWritePromptTokens ?? 0, usage.promptTokens - cached);
  const uncached = usage.promptTokens - cached - written;
  const amount =
    (uncached * pricing.inputPerMillion +
      cached * (pricing.cachedInputPerMillion ?? pricing.inputPerMillion) +
      written * (pricing.cacheWriteInputPerMillion ?? pricing.inputPerMillion) +
      usage.completionTokens * pricing.outputPerMillion) /
    1_000_000;
  return { amount: roundMoney(amount), currency: pricing.currency };
}

/** Sums of money kept to 10 decimal places: enough for a token's price, without float dust piling up. */
function roundMoney(amount: number): number {
  return Math.round(amount * 1e10) / 1e10;
}

export function emptyTotals(): UsageTotals {
  return {
    modelCalls: 0,
    promptTokens: 0,
    cachedPromptTokens: 0,
    completionTokens: 0,
    reasoningTokens: 0,
    totalTokens: 0,
    cost: null,
    unpricedModelCalls: 0,
  };
}

/** `totals` with one more model call. A cost in another currency than the totals' counts as unpriced. */
export function addCall<T extends UsageTotals>(totals: T, usage: TokenUsage | null, cost: Cost | null): T {
  const priced = cost !== null && (totals.cost === null || totals.cost.currency === cost.currency);
  return {
    ...totals,
    modelCalls: totals.modelCalls + 1,
    promptTokens: totals.promptTokens + (usage?.promptTokens ?? 0),
    cachedPromptTokens: totals.cachedPromptTokens + (usage?.cachedPromptTokens ?? 0),
    completionTokens: totals.completionTokens + (usage?.completionTokens ?? 0),
    reasoningTokens: totals.reasoningTokens + (usage?.reasoningTokens ?? 0),
    totalTokens: totals.totalTokens + (usage?.totalTokens ?? 0),
    cost: priced ? { amount: roundMoney((totals.cost?.amount ?? 0) + cost.amount), currency: cost.currency } : totals.cost,
    unpricedModelCalls: totals.unpricedModelCalls + (priced ? 0 : 1),
  };
}

/** A conversation's stored totals, or zero ones for a conversation without (new, or stored before usage was kept). */
export function conversationTotals(stored: ConversationUsage | undefined): ConversationUsage {
  return stored ?? { ...emptyTotals(), contextTokens: 0 };
}

/**
 * Two usages added (a generation's sum for generation.wait): a detail
 * (cached, reasoning) is null only when neither side reported it.
 */
export function sumUsage(a: TokenUsage | null, b: TokenUsage): TokenUsage {
  if (!a) return { ...b };
  const detail = (x: number | null | undefined, y: number | null) => (x == null && y === null ? null : (x ?? 0) + (y ?? 0));
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    cachedPromptTokens: detail(a.cachedPromptTokens, b.cachedPromptTokens),
    ...(a.cacheWritePromptTokens != null || b.cacheWritePromptTokens != null
      ? { cacheWritePromptTokens: (a.cacheWritePromptTokens ?? 0) + (b.cacheWritePromptTokens ?? 0) }
      : {}),
    completionTokens: a.completionTokens + b.completionTokens,
    reasoningTokens: detail(a.reasoningTokens, b.reasoningTokens),
    totalTokens: a.totalTokens + b.totalTokens,
  };
}
