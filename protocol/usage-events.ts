/**
 * The usage notification: after every model call, what it used, what its
 * generation and its conversation have used so far, how full the context
 * window is, and what it cost (when the model's pricing is configured).
 */
import * as z from "zod";
import { GenerationEventBase } from "./events.js";
import { ContextUsage, ConversationUsage, Cost, TokenUsage, UsageTotals } from "./usage.js";

export const UsageUpdatedNotification = GenerationEventBase.extend({
  model: z.string().describe("The model of this call, as the step named it."),
  last: TokenUsage.nullable().describe("This model call's tokens; null when the endpoint reported no usage."),
  generation: UsageTotals.describe("This generation's model calls so far, added up."),
  conversation: ConversationUsage.describe("The conversation's model calls so far, added up (the same as conversation.get's conversation.usage)."),
  context: ContextUsage,
  cost: Cost.nullable().describe("What this model call cost; null when its model has no configured pricing or the endpoint reported no usage — never estimated."),
}).describe(
  "A model call finished: its usage, the running totals of its generation and conversation, the context occupancy and the call's cost. Sent after the call's assistant message is stored and before its generation_complete; the conversation's totals are stored before it leaves.",
);

export type UsageUpdatedNotification = z.infer<typeof UsageUpdatedNotification>;
