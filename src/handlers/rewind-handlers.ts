/**
 * conversation.rewind and conversation.unrewind: take back the end of a
 * conversation, records and (on request) the files the file tools changed,
 * and put the last rewind back.
 *
 * The records taken back, their file checkpoints and what the rewind found
 * on disk for each file it restored are kept as the conversation's "rewind"
 * document until the next rewind; unrewind puts them back while the
 * conversation still ends where the rewind left it (nothing appended since).
 *
 * Order of the writes, so a crash between two of them leaves something
 * coherent: the rewind document first (while the records are still there it
 * is not valid: its fromPosition is not the record count), then the
 * truncation (durable: announced from here), then the checkpoints without
 * the taken-back ones, then the files. Unrewind: files, records, checkpoints,
 * then the document goes.
 */
import type {
  ConversationRecord,
  ConversationRewindParams,
  ConversationRewindResult,
  ConversationUnrewindResult,
  RestoredFile,
  ToolCallRecord,
  UnrestorableCall,
  UnrestoredFile,
} from "../../protocol/index.js";
import type { App } from "../app.js";
import { RpcError } from "../rpc/rpc-error.js";
import { TruncateConflictError } from "../store/conversation-store.js";
import type { ConversationRuntime } from "../sessions/conversation-runtime.js";
import { contentHash, readCheckpoints, serialized, writeCheckpoints, type FileCheckpoint } from "../sessions/file-checkpoints.js";
import { FileToolError } from "../tools/files/file-tool-error.js";
import { putWorkspaceText, readWorkspaceText } from "../tools/files/restore-file.js";
import { unsettledRound } from "./fork-point.js";
import type { MethodHandlers } from "./scope-binding.js";

/** The tools whose changes the checkpoints cover. */
const CHECKPOINTED_TOOLS = new Set(["write_file", "edit_file"]);
const PAGE = 500;

interface RewoundFile {
  path: string;
  /** What the rewind found on disk (unrewind writes it back); null: no file; absent when it was not readable text. */
  found?: string | null;
  /** What the rewind wrote: unrewind leaves the file alone when it no longer holds this. */
  wroteHash: string | null;
}

interface RewindDocument {
  version: 1;
  fromPosition: number;
  records: ConversationRecord[];
  checkpoints: FileCheckpoint[];
  files: RewoundFile[];
}

/** Where the record is and the records from there to the end; undefined when it is not in the conversation. */
async function recordsFrom(runtime: ConversationRuntime, recordId: string): Promise<{ at: number; records: ConversationRecord[] } | undefined> {
  const { handle } = runtime;
  const tail: ConversationRecord[][] = [];
  for (let to = handle.recordCount; to > 0; to -= PAGE) {
    const from = Math.max(0, to - PAGE);
    const page = await handle.readRecords(from, to);
    runtime.lastUsed = Date.now();
    tail.unshift(page);
    const i = page.findIndex((record) => record.id === recordId);
    if (i >= 0) return { at: from + i, records: tail.flat().slice(i) };
  }
  return undefined;
}

/** Shell, custom and MCP calls among the records (a call that never ran changed nothing). */
function unrestorableCalls(app: App, records: readonly ConversationRecord[]): UnrestorableCall[] {
  return records
    .filter((r): r is ToolCallRecord => r.type === "tool_call" && r.status !== "pending" && r.status !== "skipped")
    .filter((r) => !CHECKPOINTED_TOOLS.has(r.toolName) && app.agent.tool(r.toolName)?.annotations?.readOnlyHint !== true)
    .map((r) => ({ toolCallId: r.toolCallId, toolName: r.toolName }));
}

function fileOptions(app: App) {
  return { allowHardLinks: app.config.tools.files.allowHardLinks };
}

function failure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Tries of a rewind whose truncation found records appended since it read them (a message.append that got in). */
const REWIND_TRIES = 3;

export const conversationRewind: MethodHandlers["conversation.rewind"] = async (params, context, runtime) => {
  runtime.assertCanBegin();
  // Marked at once (not after the queue below): a step sent right behind it must find it.
  return runtime.whileRewinding(() =>
    serialized(runtime.handle, async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await rewindOnce(params, context.app, runtime);
        } catch (error) {
          if (!(error instanceof TruncateConflictError) || attempt === REWIND_TRIES) throw error;
        }
      }
    }),
  );
};

async function rewindOnce(params: ConversationRewindParams, app: App, runtime: ConversationRuntime): Promise<ConversationRewindResult> {
  const { handle } = runtime;
  runtime.assertCanBegin();
  const found = await recordsFrom(runtime, params.beforeRecordId);
  if (!found) throw RpcError.invalidParam("beforeRecordId", `no record ${params.beforeRecordId} in conversation ${runtime.id}`);
  const { at, records } = found;
  const unsettled = await unsettledRound((from, to) => handle.readRecords(from, to), at);
  if (unsettled) {
    throw RpcError.invalidParam(
      "beforeRecordId",
      `rewinding to it would leave the tool round of the assistant message at position ${unsettled.at} unanswered (${unsettled.why}); rewind to that message, or to after its calls' records`,
    );
  }
  const taken = new Set(records.map((r) => r.id));
  const all = await readCheckpoints(handle);
  const theirs = all.filter((c) => taken.has(c.recordId));
  const kept = all.filter((c) => !taken.has(c.recordId));

  const restored: RestoredFile[] = [];
  const notRestored: UnrestoredFile[] = [];
  const plan: { path: string; before: string | null; found: string | null | undefined; action: RestoredFile["action"] }[] = [];
  const cwd = handle.conversation.workspace ?? process.cwd();
  const signal = new AbortController().signal;
  if (params.restoreFiles) {
    // A file tool call that changed a file (its record has a diff) but whose checkpoint was dropped.
    const covered = new Set(theirs.map((c) => c.recordId));
    const uncovered = new Set<string>();
    for (const r of records) {
      if (r.type === "tool_call" && CHECKPOINTED_TOOLS.has(r.toolName) && r.diff !== undefined && !covered.has(r.id)) {
        uncovered.add(typeof r.arguments.path === "string" ? r.arguments.path : r.toolCallId);
      }
    }
    const byPath = new Map<string, FileCheckpoint[]>();
    for (const c of theirs) byPath.set(c.path, [...(byPath.get(c.path) ?? []), c]);
    for (const path of uncovered) {
      if (!byPath.has(path)) {
        notRestored.push({ path, reason: "no_checkpoint", message: `${path}: its checkpoint was dropped (limits.maxCheckpointBytes), so it was left as it is.` });
      }
    }
    for (const [path, changes] of byPath) {
      const first = changes[0];
      const last = changes.at(-1)!;
      if (!first.beforeKnown) {
        notRestored.push({ path, reason: "unknown_content", message: `${path}: its content before ${first.toolName} was not text or too large to keep, so it was left as it is.` });
        continue;
      }
      if (uncovered.has(path)) {
        notRestored.push({ path, reason: "no_checkpoint", message: `${path}: an older checkpoint of it was dropped (limits.maxCheckpointBytes), so it was left as it is.` });
        continue;
      }
      let now: string | null | undefined;
      try {
        now = await readWorkspaceText(cwd, path, fileOptions(app), signal);
      } catch (error) {
        notRestored.push({ path, reason: "failed", message: `${path}: ${failure(error)}` });
        continue;
      }
      if ((now === undefined || contentHash(now) !== last.afterHash) && params.force !== true) {
        notRestored.push({
          path,
          reason: "changed_on_disk",
          message: `${path} changed on disk since ${last.toolName} wrote it; left as it is (force restores it).`,
        });
        continue;
      }
      const action = first.before === null ? "removed" : now === null ? "created" : "restored";
      plan.push({ path, before: first.before, found: now, action });
    }
  }

  const document: RewindDocument = {
    version: 1,
    fromPosition: at,
    records,
    checkpoints: theirs,
    files: plan.map((p) => ({ path: p.path, ...(p.found !== undefined ? { found: p.found } : {}), wroteHash: contentHash(p.before) })),
  };
  runtime.assertCanBegin();
  await handle.writeDocument("rewind", document);
  // Only if nothing was appended since the records were read: else this try starts over.
  await runtime.commit(handle.truncateRecords(at, at + records.length), () => {});
  await writeCheckpoints(handle, kept);
  for (const p of plan) {
    try {
      await putWorkspaceText(cwd, p.path, p.before, fileOptions(app), signal);
      restored.push({ path: p.path, action: p.action });
    } catch (error) {
      if (!(error instanceof FileToolError)) app.log.error(`rewind of ${runtime.id}: could not restore ${p.path}`, error);
      notRestored.push({ path: p.path, reason: "failed", message: `${p.path}: ${failure(error)}` });
    }
  }
  if (restored.length < plan.length) {
    // Unrewind must not "put back" a file this rewind never wrote.
    const written = new Set(restored.map((f) => f.path));
    await handle.writeDocument("rewind", { ...document, files: document.files.filter((f) => written.has(f.path)) });
  }
  runtime.publish("conversation_rewound", { action: "rewind", fromPosition: at, recordCount: handle.recordCount, filesRestored: restored });
  await runtime.delivered();
  return {
    fromPosition: at,
    recordsRemoved: records.length,
    filesRestored: restored,
    filesNotRestored: notRestored,
    unrestorableCalls: unrestorableCalls(app, records),
  };
}

export const conversationUnrewind: MethodHandlers["conversation.unrewind"] = async (params, { app }, runtime) => {
  runtime.assertCanBegin();
  const { handle } = runtime;
  return runtime.whileRewinding(() => serialized(handle, async (): Promise<ConversationUnrewindResult> => {
    runtime.assertCanBegin();
    const document = (await handle.readDocument("rewind")) as RewindDocument | undefined;
    if (!document) throw RpcError.of("NOTHING_TO_UNREWIND", `conversation ${runtime.id} has no rewind to put back`);
    if (handle.recordCount !== document.fromPosition) {
      throw RpcError.of(
        "NOTHING_TO_UNREWIND",
        `records were appended to conversation ${runtime.id} since its last rewind (it had ${document.fromPosition} records then, ${handle.recordCount} now), so that rewind is final`,
      );
    }
    const cwd = handle.conversation.workspace ?? process.cwd();
    const signal = new AbortController().signal;
    const restored: RestoredFile[] = [];
    const notRestored: UnrestoredFile[] = [];
    for (const file of document.files) {
      const { path } = file;
      if (file.found === undefined) {
        notRestored.push({ path, reason: "unknown_content", message: `${path} was not readable text when it was rewound, so it cannot be put back.` });
        continue;
      }
      try {
        const now = await readWorkspaceText(cwd, path, fileOptions(app), signal);
        if ((now === undefined || contentHash(now) !== file.wroteHash) && params.force !== true) {
          notRestored.push({ path, reason: "changed_on_disk", message: `${path} changed on disk since the rewind; left as it is (force puts it back).` });
          continue;
        }
        await putWorkspaceText(cwd, path, file.found, fileOptions(app), signal);
        restored.push({ path, action: file.found === null ? "removed" : now === null ? "created" : "restored" });
      } catch (error) {
        notRestored.push({ path, reason: "failed", message: `${path}: ${failure(error)}` });
      }
    }
    runtime.assertCanBegin();
    await runtime.commit(Promise.all(document.records.map((record) => handle.append(record))).then(() => {}), () => {});
    await writeCheckpoints(handle, [...(await readCheckpoints(handle)), ...document.checkpoints]);
    await handle.writeDocument("rewind", undefined);
    runtime.publish("conversation_rewound", {
      action: "unrewind",
      fromPosition: document.fromPosition,
      recordCount: handle.recordCount,
      filesRestored: restored,
    });
    await runtime.delivered();
    return { fromPosition: document.fromPosition, recordsRestored: document.records.length, filesRestored: restored, filesNotRestored: notRestored };
  }));
};
