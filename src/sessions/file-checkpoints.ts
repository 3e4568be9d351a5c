/**
 * File checkpoints: for every write_file / edit_file call, the content of the
 * file before the call (or that it did not exist), so conversation.rewind can
 * put it back. Kept in the store as the conversation's "checkpoints"
 * document (ConversationHandle.readDocument), oldest first, bounded by bytes
 * (limits.maxCheckpointBytes): the oldest go first, and the caller tells the
 * user (a checkpoint_dropped notice).
 *
 * What the tool wrote is kept as a hash only: rewind needs it to see whether
 * the file changed on disk since, never to write it back (unrewind writes
 * back what the rewind found on disk, which it keeps itself).
 */
import { createHash } from "node:crypto";
import type { ConversationHandle } from "../store/conversation-store.js";

export interface FileCheckpoint {
  /** The tool call record the change belongs to. */
  recordId: string;
  toolCallId: string;
  toolName: string;
  /** Workspace-relative, as the tool named it. */
  path: string;
  /** The content before the call; null: the file did not exist. */
  before: string | null;
  /** False when the old content was not known (binary or too large): the file cannot be put back. */
  beforeKnown: boolean;
  /** Hash of what the call left (contentHash); null: the call deleted the file. */
  afterHash: string | null;
  /** What it costs against the bound. */
  bytes: number;
}

interface CheckpointsDocument {
  version: 1;
  entries: FileCheckpoint[];
}

/** The bound's share of an entry beyond its content: its names and hash. */
const ENTRY_OVERHEAD = 256;

/** The hash a checkpoint keeps of a file's content (null: no file). */
export function contentHash(content: string | null): string | null {
  return content === null ? null : createHash("sha256").update(content, "utf8").digest("hex");
}

/** One writer at a time per conversation: a read-change-write of the document must not interleave with another. */
const chains = new WeakMap<ConversationHandle, Promise<unknown>>();

/** Runs `work` after every earlier checkpoint change of this conversation has settled. */
export function serialized<T>(handle: ConversationHandle, work: () => Promise<T>): Promise<T> {
  const previous = chains.get(handle) ?? Promise.resolve();
  const run = previous.then(work, work);
  chains.set(
    handle,
    run.catch(() => undefined),
  );
  return run;
}

export async function readCheckpoints(handle: ConversationHandle): Promise<FileCheckpoint[]> {
  const doc = (await handle.readDocument("checkpoints")) as CheckpointsDocument | undefined;
  return doc?.entries ?? [];
}

export async function writeCheckpoints(handle: ConversationHandle, entries: FileCheckpoint[]): Promise<void> {
  await handle.writeDocument("checkpoints", entries.length === 0 ? undefined : ({ version: 1, entries } satisfies CheckpointsDocument));
}

/**
 * Keep the checkpoint of one file change; returns the checkpoints dropped to
 * stay within `maxBytes` (oldest first; the new one itself when it alone is
 * over the bound).
 */
export function keepCheckpoint(
  handle: ConversationHandle,
  change: Omit<FileCheckpoint, "bytes" | "afterHash" | "beforeKnown" | "before"> & { before: string | null | undefined; after: string | null },
  maxBytes: number,
): Promise<FileCheckpoint[]> {
  const entry: FileCheckpoint = {
    recordId: change.recordId,
    toolCallId: change.toolCallId,
    toolName: change.toolName,
    path: change.path,
    before: change.before ?? null,
    beforeKnown: change.before !== undefined,
    afterHash: contentHash(change.after),
    bytes: ENTRY_OVERHEAD + Buffer.byteLength(change.path) + (change.before ? Buffer.byteLength(change.before) : 0),
  };
  return serialized(handle, async () => {
    const entries = [...(await readCheckpoints(handle)), entry];
    let total = entries.reduce((sum, e) => sum + e.bytes, 0);
    const dropped: FileCheckpoint[] = [];
    while (total > maxBytes && entries.length > 0) {
      const oldest = entries.shift()!;
      total -= oldest.bytes;
      dropped.push(oldest);
    }
    await writeCheckpoints(handle, entries);
    return dropped;
  });
}
