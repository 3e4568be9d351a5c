/**
 * search_files: a regular expression over the workspace's text files, as
 * `path:line:text` lines. Files are read one at a time with the signal
 * checked between them, so a search of a huge tree stops when interrupted or
 * out of time. The matching runs off the main thread (regex-lines.ts, an
 * offload job, on batches of files) under one time budget for the whole
 * call: a pattern that backtracks without end holds a worker thread, never
 * the server, and the search stops in the file where the budget ran out and
 * says so. Ignored, binary and very large files are skipped.
 */
import { stat } from "node:fs/promises";
import type Picomatch from "picomatch";
import { importCommonJs } from "../../lazy-commonjs.js";
import type { Tool } from "../tool.js";
import { builtinParameters } from "../tool-parameters.js";
import type { SearchFilesArguments } from "./file-tool-arguments.js";
import { FileToolError, rethrowFsError } from "./file-tool-error.js";
import { runFileTool, throwIfStopped } from "./file-tool-run.js";
import { OffThreadError, runOffThread } from "../offload/deadline-workers.js";
import { BINARY_SNIFF_BYTES, looksBinary } from "./text-file.js";
import { HardLinkRefusal, openWorkspaceFile, readUpTo, type OpenFileOptions } from "./workspace-open.js";
import { walkWorkspace, type WalkEntry } from "./workspace-walk.js";
import { resolveInWorkspace, workspaceRoot } from "./workspace-path.js";
import { searchCall } from "../tool-display.js";

/** Most matching lines one call returns. */
export const SEARCH_MAX_MATCHES = 200;
/** Characters kept of a matching line. */
export const SEARCH_MAX_LINE_CHARS = 300;
/** Files larger than this are skipped (generated bundles, logs, data). */
export const SEARCH_MAX_FILE_BYTES = 4 * 1024 * 1024;
/**
 * Time the pattern may take over the whole call, all files together; the
 * call's time limit halves it when shorter, so a search cut short still has
 * time to report what it found.
 */
export const SEARCH_REGEX_BUDGET_MS = 5000;
/** How long past the budget a matching job may run before its thread is terminated (it stops itself at the budget). */
const REGEX_HARD_GRACE_MS = 1000;
/** Files matched per job, at most, and their text in characters: fewer round trips, little held at once. */
const BATCH_FILES = 64;
const BATCH_CHARS = 2 * 1024 * 1024;

export function createSearchFilesTool(options: OpenFileOptions): Tool<SearchFilesArguments> {
  return {
    name: "search_files",
    description:
      "Search the workspace's text files for lines matching a regular expression (JavaScript syntax). Returns " +
      "`path:line:text` lines (paths relative to the workspace). Files ignored by .gitignore, the .git directory, " +
      `binary files and files over ${SEARCH_MAX_FILE_BYTES / 1024 / 1024} MiB are skipped; symlinks are not followed. ` +
      `At most ${SEARCH_MAX_MATCHES} matches, lines cut at ${SEARCH_MAX_LINE_CHARS} characters; narrow a larger search with path or glob.`,
    parameters: builtinParameters("search_files", async () => (await import("./file-tool-arguments.js")).SearchFilesArguments),
    annotations: { readOnlyHint: true, destructiveHint: false },
    source: "builtin",
    kind: "search",
    title: "Search files",
    describeCall: (args, cwd) => searchCall(args, cwd),
    run: (args, context) =>
      runFileTool(context, { readOnly: true }, async (signal) => {
        let re: RegExp;
        try {
          re = new RegExp(args.pattern, args.case_insensitive ? "i" : "");
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new FileToolError(`the pattern ${JSON.stringify(args.pattern)} is not a valid regular expression: ${reason}`);
        }
        const root = await workspaceRoot(context.cwd);
        const start = await resolveInWorkspace(context.cwd, args.path ?? ".");
        if (!start.exists) throw new FileToolError(`"${start.display}" does not exist`);
        const info = await stat(start.real).catch((error: unknown) => rethrowFsError(error, start.display));
        // picomatch (~35 KB) is loaded by the first call with a glob, not with the server.
        const matchesGlob = args.glob === undefined ? () => true : ((await importCommonJs(import("picomatch"))) as unknown as typeof Picomatch)(args.glob, { dot: true });
        const files: AsyncIterable<WalkEntry> | WalkEntry[] = info.isDirectory()
          ? walkWorkspace(root, start.real, signal)
          : [{ kind: info.isFile() ? "file" : "other", display: start.display, fromStart: start.display.split("/").pop()!, real: start.real }];

        const budgetMs = regexBudget(context.timeoutMs);
        let spentMs = 0;
        let cutIn: string | undefined;
        const results: string[] = [];
        let full = false;
        let searched = 0;
        const skipped = { binary: 0, large: 0, hardLinked: 0 };
        // Files are read here and matched in batches: one round trip to the worker per batch, not per file.
        let batch: { display: string; text: string }[] = [];
        let batchChars = 0;
        const flush = async () => {
          if (batch.length === 0 || full || cutIn !== undefined) return;
          const files = batch;
          batch = [];
          batchChars = 0;
          const left = budgetMs - spentMs;
          let found;
          try {
            found = await runOffThread(
              "line-matches",
              {
                source: re.source,
                flags: re.flags,
                texts: files.map((f) => f.text),
                max: SEARCH_MAX_MATCHES + 1 - results.length,
                maxChars: SEARCH_MAX_LINE_CHARS,
                budgetMs: left,
              },
              // The job stops itself at the budget; this hard limit is for when it cannot.
              { timeoutMs: left + REGEX_HARD_GRACE_MS, signal },
            );
          } catch (error) {
            throwIfStopped(signal);
            if (!(error instanceof OffThreadError)) throw error;
            if (error.kind === "failed") throw new FileToolError(`matching the pattern failed: ${error.message}`);
            // Terminated at the hard limit: somewhere in this batch, the budget is spent.
            found = { matches: [], stoppedAt: 0, elapsedMs: left };
          }
          spentMs += found.elapsedMs;
          for (const [i, matches] of found.matches.entries()) {
            searched++;
            for (const match of matches) {
              if (results.length === SEARCH_MAX_MATCHES) {
                full = true;
                return;
              }
              const cut = match.length > SEARCH_MAX_LINE_CHARS ? `… [line cut: ${match.length} characters]` : "";
              results.push(`${files[i]!.display}:${match.line}:${match.text}${cut}`);
            }
          }
          if (found.stoppedAt !== null) cutIn = files[found.stoppedAt]!.display;
        };
        for await (const entry of files) {
          throwIfStopped(signal);
          if (entry.kind !== "file" || !matchesGlob(entry.fromStart)) continue;
          const text = await readText(entry, signal, skipped, options);
          if (text === null) continue;
          batch.push({ display: entry.display, text });
          batchChars += text.length;
          if (batch.length >= BATCH_FILES || batchChars >= BATCH_CHARS) await flush();
          if (full || cutIn !== undefined) break;
        }
        await flush();

        const notes: string[] = [];
        if (cutIn !== undefined) {
          notes.push(
            `[search cut short: the pattern used up the call's ${budgetMs} ms time budget while matching ${cutIn}; ` +
              `${searched} file${searched === 1 ? "" : "s"} searched before it, the files after it not searched. ` +
              "Nested repetition such as (a+)+ can backtrack without end: simplify the pattern, or narrow the search with path or glob]",
          );
        }
        if (full) notes.push(`[stopped at ${SEARCH_MAX_MATCHES} matches; narrow the search with path or glob]`);
        if (skipped.binary > 0) notes.push(`[${skipped.binary} binary file${skipped.binary === 1 ? "" : "s"} skipped]`);
        if (skipped.large > 0) notes.push(`[${skipped.large} file${skipped.large === 1 ? "" : "s"} over ${SEARCH_MAX_FILE_BYTES / 1024 / 1024} MiB skipped]`);
        if (skipped.hardLinked > 0) {
          notes.push(`[${skipped.hardLinked} hard-linked file${skipped.hardLinked === 1 ? "" : "s"} skipped (set tools.files.allowHardLinks to search them)]`);
        }
        // Cut short with nothing found: most likely the pattern itself, which the model should change.
        if (results.length === 0 && cutIn !== undefined) return { success: false, output: notes.join("\n") };
        if (results.length === 0) {
          return { success: true, output: [`[no matches in ${searched} file${searched === 1 ? "" : "s"} searched]`, ...notes].join("\n") };
        }
        return { success: true, output: [...results, ...notes].join("\n") };
      }),
  };
}

/** The regex budget of one call: SEARCH_REGEX_BUDGET_MS, or half the call's time limit when that is shorter. */
function regexBudget(timeoutMs: number): number {
  return Number.isFinite(timeoutMs) && timeoutMs > 0 ? Math.min(SEARCH_REGEX_BUDGET_MS, Math.floor(timeoutMs / 2)) : SEARCH_REGEX_BUDGET_MS;
}

/**
 * The file's text, or null (counted in `skipped`) for a binary or large file,
 * or one that went away, is not a regular file, is hard-linked (unless
 * allowed) or was swapped since the listing (workspace-open.ts refuses it).
 */
async function readText(
  entry: WalkEntry,
  signal: AbortSignal,
  skipped: { binary: number; large: number; hardLinked: number },
  options: OpenFileOptions,
): Promise<string | null> {
  let bytes: Buffer;
  try {
    const file = await openWorkspaceFile(entry.real, entry.display, options);
    try {
      if (file.size > SEARCH_MAX_FILE_BYTES) {
        skipped.large++;
        return null;
      }
      bytes = await readUpTo(file.handle, SEARCH_MAX_FILE_BYTES, signal);
    } finally {
      await file.close();
    }
  } catch (error) {
    throwIfStopped(signal);
    if (error instanceof HardLinkRefusal) skipped.hardLinked++;
    return null; // Gone, unreadable or refused since the listing: nothing to search in it.
  }
  if (looksBinary(bytes.subarray(0, BINARY_SNIFF_BYTES), bytes.length > BINARY_SNIFF_BYTES)) {
    skipped.binary++;
    return null;
  }
  return bytes.toString("utf8");
}
