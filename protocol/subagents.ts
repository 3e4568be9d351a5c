/**
 * Sub-agents: the built-in `spawn_agent` tool runs a child conversation to
 * completion and hands its final answer back as the tool's result. The child
 * is an ordinary conversation (its metadata says whose child it is:
 * Conversation.parentConversationId / parentToolCallId / agentDepth), so a
 * client watches it, confirms its tool calls and interrupts it like any other;
 * `subagent_started` on the parent tells clients which conversation to follow.
 */
import * as z from "zod";
import { ConversationId } from "./records.js";
import { GenerationEventBase } from "./events.js";
export * from "./limits/subagents.js";

export const SubagentStartedNotification = GenerationEventBase.extend({
  toolCallId: z.string().describe("The spawn_agent call (of this conversation) that started the sub-agent."),
  childConversationId: ConversationId.describe(
    "The sub-agent's conversation: subscribe to it to watch it and to confirm its tool calls (its tool_pending events appear there, not here).",
  ),
  childGenerationId: z.string().describe("The child's generation, running now; the spawn_agent call completes when it ends."),
  agentDepth: z.number().int().min(1).describe("The child's depth (its Conversation.agentDepth)."),
}).describe(
  "A spawn_agent call of this conversation created a sub-agent's conversation, stored its prompt as the first user message and started its generation. It follows the call's tool_executing; the call's tool_completed (or tool_failed) carries the child's final answer as its result and childConversationId on its record.",
);

export type SubagentStartedNotification = z.infer<typeof SubagentStartedNotification>;
