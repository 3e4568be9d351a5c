/**
 * The lowdb store's check of a conversation's stored run state. Apart from
 * lowdb-file-checks.ts, and loaded when the first conversation is read
 * (lowdb-conversation-load.ts): its schemas (a queued message holds a whole
 * message record) bring records.ts and what it imports, which the server's
 * start, with no conversation read yet, does not need.
 */
import * as z from "zod";
import { InputRequest } from "../../protocol/input-request.js";
import { Plan, QueuedMessage } from "../../protocol/index.js";
import { ConversationMcpServers } from "../../protocol/config-mcp.js";
import type { RunState } from "./conversation-store.js";

/**
 * The stored run state when it has the expected shape, else null: it is a
 * convenience (what state.lastError shows), so a bad one is dropped rather
 * than making the whole conversation damaged.
 */
const ClientMessageIds = z.array(z.object({ clientMessageId: z.string(), recordId: z.string(), digest: z.string() }));

export function readRunState(value: unknown): RunState | null {
  if (!isObject(value)) return null;
  const { lastError, lastGeneration, autoConfirmRemaining } = value;
  if (lastError !== null && !(isObject(lastError) && typeof lastError.code === "number" && typeof lastError.message === "string")) return null;
  if (lastGeneration !== null && !(isObject(lastGeneration) && typeof lastGeneration.generationId === "string")) return null;
  if (typeof autoConfirmRemaining !== "number" || !Number.isInteger(autoConfirmRemaining) || autoConfirmRemaining < 0) return null;
  // A plan, queue or id window that does not parse is dropped on its own: the rest of the state still holds.
  const state: Record<string, unknown> = { ...value };
  if (state.plan !== undefined && !Plan.safeParse(state.plan).success) delete state.plan;
  if (state.queue !== undefined && !z.array(QueuedMessage).safeParse(state.queue).success) delete state.queue;
  if (state.clientMessageIds !== undefined && !ClientMessageIds.safeParse(state.clientMessageIds).success) delete state.clientMessageIds;
  if (state.pendingInputs !== undefined && !z.array(InputRequest).safeParse(state.pendingInputs).success) delete state.pendingInputs;
  if (state.mcpServers !== undefined && !ConversationMcpServers.safeParse(state.mcpServers).success) delete state.mcpServers;
  return state as unknown as RunState;
}

// Its own copy of lowdb-file-checks.ts's: importing that module from here would make the bundler give it (and what it
// imports) a chunk of its own, shared by the start path and this lazily loaded one, one more file to load at every start.
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
