/**
 * The net change of a generation's files: after each call that changed a
 * file, that file's diff from its content before the generation (the first
 * content seen, remembered per path) to its content now. The loop stores
 * each call's net change on its tool call record (`netChange`) and
 * announces the whole list (generation_diff_updated); conversation.diff
 * reads the records back (readGenerationDiff), so the answer survives a
 * restart without keeping file contents on disk. A generation never spans a
 * restart (a resumed call runs in a new generation), so the in-memory
 * "before" texts are never needed after one.
 */
import { MAX_FILE_CHANGES, MAX_GENERATION_DIFF_BYTES, type ConversationRecord, type FileChange, type NetFileChange } from "../../protocol/index.js";
import { changeDiff } from "../tools/files/file-change-result.js";
import type { ToolResult } from "../tools/tool.js";

/** Most characters of "before" texts one generation keeps; past it, later files get a note instead of a net diff. */
export const MAX_KEPT_BEFORE_CHARS = 32 * 1024 * 1024;

/** A file's content before the generation: text, null (it did not exist), or unknown and why. */
type Before = { text: string | null } | { unknown: string };

export class GenerationDiff {
  private readonly befores = new Map<string, Before>();
  /** Per path, in the order first changed: its net change, or null when it is back to where it was. */
  private readonly net = new Map<string, FileChange | null>();
  private keptChars = 0;
  /** How many changes were added: a preview taken at another count may be out of date. */
  count = 0;

  /**
   * Add one call's change. The diff is computed off the main thread with a
   * deadline; `signal` (the generation's) stops it at once on interrupt, and
   * the entry then says it was left out. `callDiff`: the diff the tool
   * reported, reused when the file had not changed before in the generation.
   */
  async add(change: NonNullable<ToolResult["change"]>, signal: AbortSignal, callDiff?: string): Promise<NetFileChange> {
    this.count++;
    const { path, after } = change;
    let before = this.befores.get(path);
    if (!before) {
      before = this.remember(path, change.before);
      this.befores.set(path, before);
    }
    // The file's first change of the generation: its net diff is the one the tool computed.
    const net =
      "text" in before && before.text === change.before && after !== null && before.text !== after && callDiff !== undefined
        ? { path, kind: before.text === null ? ("add" as const) : ("modify" as const), diff: callDiff }
        : await netChange(path, before, after, signal);
    this.net.set(path, net);
    return { path, change: net };
  }

  /** The files changed so far, one entry each, in the order first changed. */
  changes(): FileChange[] {
    return netList(this.net);
  }

  private remember(path: string, text: string | null | undefined): Before {
    if (text === undefined) return { unknown: `the old content of ${path} was not text or too large to compare` };
    if (this.befores.size >= MAX_FILE_CHANGES) return { unknown: `the generation changed over ${MAX_FILE_CHANGES} files` };
    const size = text?.length ?? 0;
    if (this.keptChars + size > MAX_KEPT_BEFORE_CHARS) {
      return { unknown: `the generation's changed files hold over ${MAX_KEPT_BEFORE_CHARS} characters, more than are kept to compare` };
    }
    this.keptChars += size;
    return { text };
  }
}

async function netChange(path: string, before: Before, after: string | null, signal: AbortSignal): Promise<FileChange | null> {
  if (!("text" in before)) return { path, kind: after === null ? "delete" : "modify", diff: `[no net diff: ${before.unknown}]\n` };
  if (before.text === after) return null;
  if (after === null) {
    if (before.text === null) return null;
    return { path, kind: "delete", diff: (await changeDiff(path, before.text, "", signal)).diff };
  }
  return { path, kind: before.text === null ? "add" : "modify", diff: (await changeDiff(path, before.text, after, signal)).diff };
}

/**
 * The entries that are not null, in order; once their diffs pass
 * MAX_GENERATION_DIFF_BYTES, later diffs are replaced by a note, so one
 * notification or reply stays bounded however many files changed.
 */
function netList(net: ReadonlyMap<string, FileChange | null>): FileChange[] {
  let bytes = 0;
  const out: FileChange[] = [];
  for (const change of net.values()) {
    if (change === null) continue;
    bytes += Buffer.byteLength(change.diff, "utf8");
    out.push(
      bytes > MAX_GENERATION_DIFF_BYTES
        ? { ...change, diff: `[diff left out: the generation's diffs pass ${MAX_GENERATION_DIFF_BYTES} bytes; conversation.get's records have each call's diff]\n` }
        : change,
    );
  }
  return out;
}

/** Where conversation.diff reads records from: a conversation's stored records. */
export interface RecordSource {
  readonly recordCount: number;
  readRecords(from: number, to: number): Promise<ConversationRecord[]>;
}

const READ_CHUNK = 500;

/**
 * A generation's net change as its stored records hold it: the last
 * `netChange` per file. `generationId` undefined: the most recent generation
 * that stored a record (`running` first, when given). Reads backwards from
 * the end and stops once past the generation (generations do not interleave).
 */
export async function readGenerationDiff(
  source: RecordSource,
  generationId: string | undefined,
  running?: string,
): Promise<{ generationId: string | null; changes: FileChange[] }> {
  let wanted = generationId ?? running;
  const found: NetFileChange[] = [];
  let seen = false;
  scan: for (let end = source.recordCount; end > 0; end -= READ_CHUNK) {
    const records = await source.readRecords(Math.max(0, end - READ_CHUNK), end);
    for (let i = records.length - 1; i >= 0; i--) {
      const record = records[i]!;
      if (record.generationId === undefined) continue;
      wanted ??= record.generationId;
      if (record.generationId !== wanted) {
        if (seen) break scan;
        continue;
      }
      seen = true;
      if (record.type === "tool_call" && record.netChange) found.push(record.netChange);
    }
  }
  const net = new Map<string, FileChange | null>();
  for (const entry of found.reverse()) net.set(entry.path, entry.change);
  return { generationId: wanted ?? null, changes: netList(net) };
}
