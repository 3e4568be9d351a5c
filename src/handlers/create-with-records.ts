import type { Conversation, ConversationRecord } from "../../protocol/index.js";
import type { App } from "../app.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";

/**
 * Creates a conversation and stores `pages` of records in it, in order: the
 * import of conversation.create and the copy of conversation.fork.
 *
 * A page's appends are queued together so the store can write them in few
 * writes (the lowdb store groups queued appends per segment). Each page goes
 * through `commit`, which keeps the new runtime busy so it is not unloaded
 * mid-fill. If any write fails, the half-filled conversation is deleted and
 * the error goes on: the client gets STORAGE_ERROR and no trace is left.
 * The id is only returned once every record is durable; until then the
 * conversation shows in listings with the records stored so far.
 */
export async function createWithRecords(
  app: App,
  conversation: Conversation,
  pages: AsyncIterable<readonly ConversationRecord[]> | Iterable<readonly ConversationRecord[]>,
  /** What else the new conversation gets once its records are stored, before it is handed out (a fork: its plan). */
  complete: (runtime: ConversationRuntime) => Promise<void> = async () => {},
): Promise<ConversationRuntime> {
  const runtime = await app.hub.create(conversation);
  const { handle } = runtime;
  try {
    let stored = 0;
    for await (const page of pages) {
      if (page.length === 0) continue;
      runtime.lastUsed = Date.now();
      runtime.assertLive();
      await runtime.commit(appendAll(page.map((record) => handle.append(record))), () => {});
      stored += page.length;
    }
    await complete(runtime);
    // Appends move updatedAt to each record's own (possibly old) timestamp; the conversation changed now.
    if (stored > 0) await runtime.commit(handle.update({ ...handle.conversation, updatedAt: new Date().toISOString() }), () => {});
    return runtime;
  } catch (error) {
    await app.hub.delete(runtime).catch((cleanup: unknown) => {
      app.log.error(`could not remove the half-filled conversation ${conversation.id}`, cleanup);
    });
    throw error;
  }
}

/** Waits for every append (none is left running when the caller cleans up), then fails with the first failure. */
async function appendAll(writes: Promise<void>[]): Promise<void> {
  const outcomes = await Promise.allSettled(writes);
  const failed = outcomes.find((outcome) => outcome.status === "rejected");
  if (failed) throw failed.reason;
}

/** `records` in pages of `size`: lets one code path store an import and a paged copy. */
export function* pagesOf<T>(records: readonly T[], size: number): Iterable<readonly T[]> {
  for (let from = 0; from < records.length; from += size) yield records.slice(from, from + size);
}
