/**
 * Presence: who is watching a conversation (gptme's `connection_status`).
 * Ephemeral by nature, so it is a live-only notification: no seq, never
 * stored in the replay log nor on disk, never replayed — a client that was
 * away learns the current subscribers from the next change. Opt-in
 * (initialize `capabilities.subscriberPresence`), because it is the one
 * conversation notification without a seq.
 */
import * as z from "zod";
import { ConversationId, Timestamp } from "./records.js";
import { PRESENCE_CLIENTS_MAX } from "./limits/presence.js";
export * from "./limits/presence.js";

export const PresenceClient = z
  .object({
    connectionId: z.string().describe("The subscriber's connection id (what its `connected` notification said)."),
    clientInfo: z
      .object({
        name: z.string().describe("Client name from its initialize."),
        version: z.string().optional().describe("Client version from its initialize."),
      })
      .nullable()
      .describe("What the subscriber sent as clientInfo in initialize; null when it sent none."),
  })
  .describe("One connection subscribed to the conversation.");

export const SubscribersChangedNotification = z
  .object({
    conversationId: ConversationId,
    timestamp: Timestamp.describe("When the server emitted the event."),
    count: z.number().int().min(0).describe("How many connections are subscribed to the conversation now (on this instance in cluster mode)."),
    clients: z
      .array(PresenceClient)
      .max(PRESENCE_CLIENTS_MAX)
      .describe(`The subscribed connections, oldest subscription first; at most ${PRESENCE_CLIENTS_MAX} (count says how many there are).`),
  })
  .describe(
    "Subscribers of the conversation came or went (conversation.subscribe, conversation.unsubscribe, a connection closed). Sent only to subscribers that asked for it with initialize capabilities.subscriberPresence. Live only: it carries no seq, is not stored and is not replayed. In cluster mode it counts the subscribers connected to the instance that sends it.",
  );
