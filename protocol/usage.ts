/**
 * What model calls cost: tokens as the endpoint reports them, the context
 * window they fill, and money when the configuration gives a price. Plain
 * shapes only (no events), so records.ts (a conversation's stored totals),
 * events.ts and the configuration can all use them.
 *
 * A cost is never guessed: it is computed only from a `pricing` the
 * configuration declares for the model, and is null otherwise.
 */
import * as z from "zod";
export * from "./model-pricing.js";

const Tokens = (what: string) => z.number().int().min(0).describe(what);

/** What one model call cost, in tokens, as the endpoint reports it. */
export const TokenUsage = z
  .object({
    promptTokens: Tokens("Prompt (input) tokens: everything the request carried, cached ones included (on the anthropic wire: input_tokens + cache_read_input_tokens + cache_creation_input_tokens)."),
    cachedPromptTokens: Tokens(
      "Prompt tokens the endpoint served from its prompt cache (Chat Completions `prompt_tokens_details.cached_tokens`, Responses `input_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`); part of promptTokens. Null when the endpoint does not say.",
    ).nullable(),
    cacheWritePromptTokens: Tokens(
      "Prompt tokens the endpoint wrote to its prompt cache on this call (Anthropic `cache_creation_input_tokens`); part of promptTokens, not of cachedPromptTokens. Absent or null when the endpoint does not say (the OpenAI wires never do).",
    )
      .nullable()
      .optional(),
    completionTokens: Tokens("Completion (output) tokens, reasoning ones included."),
    reasoningTokens: Tokens(
      "Completion tokens the model spent reasoning (Chat Completions `completion_tokens_details.reasoning_tokens`, Responses `output_tokens_details.reasoning_tokens`, Anthropic `output_tokens_details.thinking_tokens`); part of completionTokens. Null when the endpoint does not say.",
    ).nullable(),
    totalTokens: Tokens("Total tokens, as the endpoint reports them (else prompt + completion)."),
  })
  .describe(
    "Tokens a model call used, as the endpoint reports them. The endpoint reports usage whole or not at all (then the usage is null), so promptTokens, completionTokens and totalTokens are always numbers; the two details are null when the endpoint leaves them out.",
  );

/** An amount of money. */
export const Cost = z
  .object({
    amount: z.number().min(0).describe("The amount, in units of `currency` (not cents): 0.0123 is 1.23 cents of USD."),
    currency: z.string().describe("The currency the model's pricing is written in (as configured, e.g. \"USD\")."),
  })
  .describe("A cost in money, computed from the model's configured pricing; never estimated.");

/** Sums over several model calls (a generation's, a conversation's, the server's). */
export const UsageTotals = z
  .object({
    modelCalls: Tokens("Model calls counted (those whose answer finished)."),
    promptTokens: Tokens("Prompt tokens, summed."),
    cachedPromptTokens: Tokens("Cached prompt tokens, summed (calls whose endpoint did not say count 0)."),
    completionTokens: Tokens("Completion tokens, summed."),
    reasoningTokens: Tokens("Reasoning tokens, summed (calls whose endpoint did not say count 0)."),
    totalTokens: Tokens("Total tokens, summed."),
    cost: Cost.nullable().describe(
      "What the priced calls cost, summed; null when no call counted here had a price. Calls without a price (no `pricing` for their model, no usage reported, or a price in another currency than the first priced call's) are not in it: unpricedModelCalls counts them.",
    ),
    unpricedModelCalls: Tokens("Model calls whose cost is unknown, so not in `cost` (0: the cost is complete)."),
  })
  .describe("Tokens and cost of several model calls, added up.");

/** How full the model's context window is. */
export const ContextUsage = z
  .object({
    usedTokens: Tokens(
      "The last request's prompt tokens plus its output: what the next request will carry at least. When the endpoint reported no usage for the call, the last value known (0 before any).",
    ),
    windowTokens: z
      .number()
      .int()
      .min(1)
      .nullable()
      .describe("The model's context window: its declared `contextWindow` in the provider configuration; null when not declared."),
  })
  .describe("How much of the model's context window the conversation fills.");

/** A conversation's totals, stored with its metadata (they survive a restart). */
export const ConversationUsage = UsageTotals.extend({
  contextTokens: Tokens("usedTokens of the conversation's last model call (see ContextUsage): how full its context was then."),
}).describe(
  "Tokens and cost of every model call of the conversation, added up, and how full its context was after the last one. Stored with the conversation: it survives a restart.",
);

export type TokenUsage = z.infer<typeof TokenUsage>;
export type Cost = z.infer<typeof Cost>;
export type UsageTotals = z.infer<typeof UsageTotals>;
export type ContextUsage = z.infer<typeof ContextUsage>;
export type ConversationUsage = z.infer<typeof ConversationUsage>;
