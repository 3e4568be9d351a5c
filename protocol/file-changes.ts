/**
 * The change a file tool makes, or would make: shown before approval on
 * tool_pending, recomputed on tool_executing when the arguments were edited,
 * and added up per generation (generation_diff_updated, conversation.diff).
 */
import * as z from "zod";
import { MAX_FILE_CHANGES } from "./limits/file-changes.js";
export * from "./limits/file-changes.js";

export const FileChangeKind = z
  .enum(["add", "modify", "delete"])
  .describe("add: the file does not exist yet (or did not before the generation); modify: it exists and its content changes; delete: it goes away.");

export const FileChange = z
  .object({
    path: z.string().describe("The file, relative to the conversation's workspace (as the tool names it in the diff's a/ and b/ headers)."),
    kind: FileChangeKind,
    diff: z
      .string()
      .describe(
        "The unified diff of the change (workspace-relative a/ and b/ paths, 3 lines of context, capped at 64 KiB with a note at the cut), the same text the tool call record's `diff` carries once the tool ran. A note in brackets instead when no diff could be computed (the old content is binary or too large, or diffing took too long). Empty when `problem` is set.",
      ),
    problem: z
      .string()
      .optional()
      .describe(
        "Present when the call, as proposed, would fail instead of changing the file — edit_file's old_string is not in the file or occurs more than once, the file is missing, the path is outside the workspace — in the words the tool would fail with. Approving it then runs the tool, which fails with that error.",
      ),
  })
  .describe("One file's change: its path, whether it is added, modified or deleted, and the unified diff.");

export const FileChanges = z
  .array(FileChange)
  .max(MAX_FILE_CHANGES)
  .describe("Changes, one entry per file.");

export const NetFileChange = z
  .object({
    path: FileChange.shape.path,
    change: FileChange.nullable().describe(
      "The net change of this file from its content before the generation to its content after this call; null when it is back to what it was (a file created then removed, an edit undone).",
    ),
  })
  .describe("The file one call changed, and where the generation as a whole now stands with it.");

export type FileChangeKind = z.infer<typeof FileChangeKind>;
export type FileChange = z.infer<typeof FileChange>;
export type NetFileChange = z.infer<typeof NetFileChange>;
