/**
 * Rewind, unrewind and compact as the chat REPL (/rewind, /unrewind,
 * /compact) and `agentwire conversations rewind|unrewind|compact` both run
 * them: the requests, and the lines that tell the user what happened.
 */
import type {
  AgentwireClient,
  CompactionRecord,
  ConversationRewindResult,
  ConversationUnrewindResult,
} from "../../clients/typescript/index.js";

/** generation.wait's longest single wait is bounded by the server: wait again until the compaction ends. */
const WAIT_SLICE_MS = 30_000;

/** What rewind (or unrewind) did, one line each: records, files restored, files left, calls that cannot be undone. */
export function rewindLines(result: ConversationRewindResult | ConversationUnrewindResult): string[] {
  const lines: string[] = [];
  if ("recordsRemoved" in result) lines.push(`rewound: ${result.recordsRemoved} record${result.recordsRemoved === 1 ? "" : "s"} taken back`);
  else lines.push(`unrewound: ${result.recordsRestored} record${result.recordsRestored === 1 ? "" : "s"} put back`);
  for (const file of result.filesRestored) lines.push(`  ${file.action} ${file.path}`);
  for (const file of result.filesNotRestored) lines.push(`  left ${file.path} (${file.reason.replace(/_/g, " ")}): ${file.message}`);
  if ("unrestorableCalls" in result && result.unrestorableCalls.length > 0) {
    lines.push(`  cannot be undone: ${result.unrestorableCalls.map((c) => c.toolName).join(", ")} (their effects outside the file tools stay)`);
  }
  return lines;
}

export type CompactOutcome = { ok: true; record: CompactionRecord } | { ok: false; message: string };

/** Start a compaction, wait for its generation to end, and answer the stored record (or why there is none). */
export async function compactAndWait(client: AgentwireClient, conversationId: string, instructions?: string): Promise<CompactOutcome> {
  const { generationId } = await client.conversation.compact({ conversationId, ...(instructions ? { instructions } : {}) });
  for (;;) {
    const waited = await client.generation.wait({ conversationId, generationId, timeoutMs: WAIT_SLICE_MS });
    if (!waited.done) continue;
    if (waited.outcome !== "completed") return { ok: false, message: waited.error?.message ?? `compaction ${waited.outcome}` };
    break;
  }
  const { conversation } = await client.conversation.get({ conversationId });
  const from = Math.max(0, conversation.recordCount - 5);
  const { records } = await client.conversation.get({ conversationId, includeRecords: true, recordsFrom: from });
  const record = (records ?? []).filter((r): r is CompactionRecord => r.type === "compaction" && r.generationId === generationId).at(-1);
  return record ? { ok: true, record } : { ok: false, message: "the compaction ended without storing a summary" };
}

export function compactLine(record: CompactionRecord): string {
  return `compacted: ${record.tokensBefore} → ${record.tokensAfter} tokens`;
}

/** Records are fetched a page at a time, from the end: a long conversation in one reply could exceed the server's reply limit. */
const RECORDS_PAGE = 200;

/** The Nth-last user message of the conversation (1: the last), or undefined when it has fewer. */
export async function nthLastUserMessage(client: AgentwireClient, conversationId: string, n: number): Promise<{ id: string; content: string } | undefined> {
  const { conversation } = await client.conversation.get({ conversationId });
  let end = conversation.recordCount;
  let seen = 0;
  while (end > 0) {
    const from = Math.max(0, end - RECORDS_PAGE);
    const { records } = await client.conversation.get({ conversationId, includeRecords: true, recordsFrom: from, recordsLimit: end - from });
    for (const record of [...(records ?? [])].reverse()) {
      if (record.type === "message" && record.role === "user" && ++seen === n) return { id: record.id, content: record.content };
    }
    end = from;
  }
  return undefined;
}
