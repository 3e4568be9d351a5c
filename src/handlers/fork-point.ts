/**
 * Where conversation.fork cuts. A fork must never hold an unsettled tool
 * call: one left pending or executing would be offered or failed in the copy
 * as if the copy had run it, and one announced without a record yet belongs
 * to a generation that is still writing it in the original.
 *
 * Only the last tool round can be unsettled (the loop settles a round before
 * the next model call; interrupt and recovery settle the rest), and it is the
 * records after the last assistant message — the store's open round. So the
 * cut is checked by reading backwards from it, a page at a time, until that
 * message: the cost follows the open round, not the conversation.
 */
import type { ConversationRecord } from "../../protocol/index.js";
import { RpcError } from "../rpc/rpc-error.js";

const PAGE = 500;

type Read = (from: number, to: number) => Promise<ConversationRecord[]>;

/** Why the records before `end` end inside an unsettled round, with that round's assistant message; undefined when they do not. */
export async function unsettledRound(read: Read, end: number): Promise<{ at: number; why: string } | undefined> {
  const recorded = new Map<string, string>(); // toolCallId → status of its record in the round
  const live: string[] = [];
  for (let to = end; to > 0; to -= PAGE) {
    const from = Math.max(0, to - PAGE);
    const page = await read(from, to);
    for (let i = page.length - 1; i >= 0; i--) {
      const record = page[i];
      if (record.type === "tool_call") {
        // Read backwards: the first record seen for an id is its latest.
        if (!recorded.has(record.toolCallId)) recorded.set(record.toolCallId, record.status);
        if (record.status === "pending" || record.status === "executing") live.push(`"${record.toolCallId}" is ${record.status}`);
        continue;
      }
      if (record.type !== "message" || record.role !== "assistant") continue;
      const at = from + i;
      if (live.length > 0) return { at, why: live.join(", ") };
      if (record.notice !== undefined) return undefined;
      const missing = (record.toolCalls ?? []).filter((call) => !recorded.has(call.toolCallId)).map((call) => `"${call.toolCallId}" has no record before position ${end}`);
      return missing.length > 0 ? { at, why: missing.join(", ") } : undefined;
    }
  }
  // No assistant message: nothing can be pending (a call record follows the message announcing it).
  return live.length > 0 ? { at: 0, why: live.join(", ") } : undefined;
}

/**
 * How many records the fork copies. With `atRecord`, exactly that many, or a
 * -32602 naming atRecord when it is past the end or cuts an unsettled round.
 * Without it, all of them but an unsettled last round (and what follows it).
 */
export async function forkPoint(read: Read, recordCount: number, atRecord?: number): Promise<number> {
  if (atRecord !== undefined && atRecord > recordCount) {
    throw RpcError.invalidParam("atRecord", `${atRecord} is past the end: the conversation has ${recordCount} records`);
  }
  const end = atRecord ?? recordCount;
  const unsettled = await unsettledRound(read, end);
  if (!unsettled) return end;
  if (atRecord === undefined) return unsettled.at;
  throw RpcError.invalidParam(
    "atRecord",
    `the first ${atRecord} records end inside the tool round of the assistant message at position ${unsettled.at}, which is not settled there (${unsettled.why}); fork at ${unsettled.at} (before that message) or after its calls' records`,
  );
}
