/**
 * A model's price, apart from usage.ts (which re-exports it): the
 * configuration's providers declare prices, and the configuration is parsed
 * at every start, whereas usage.ts's other shapes (a call's tokens, totals,
 * costs) are built when a request or a stored conversation first needs them.
 */
import * as z from "zod";

/** A model's price, as a provider configuration declares it. */
export const ModelPricing = z
  .strictObject({
    inputPerMillion: z.number().min(0).describe("Price of one million prompt (input) tokens that were not served from the cache."),
    cachedInputPerMillion: z
      .number()
      .min(0)
      .optional()
      .describe("Price of one million cached prompt tokens; when absent they cost inputPerMillion."),
    cacheWriteInputPerMillion: z
      .number()
      .min(0)
      .optional()
      .describe("Price of one million prompt tokens written to the cache (cacheWritePromptTokens: the anthropic wire reports them); when absent they cost inputPerMillion."),
    outputPerMillion: z.number().min(0).describe("Price of one million completion (output) tokens, reasoning tokens included."),
    currency: z.string().min(1).max(16).default("USD").describe("The currency the prices are in; costs are reported in it."),
  })
  .describe(
    "What the model costs, per million tokens. With it, usage_updated and the conversation's totals carry a cost; without it the cost is null (agentwire never guesses a price).",
  );

export type ModelPricing = z.output<typeof ModelPricing>;
