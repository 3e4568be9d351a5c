/**
 * write_file: create a file or replace its whole content, atomically, keeping
 * an existing file's permissions; missing parent directories are created.
 */
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import * as z from "zod";
import type { Tool } from "../tool.js";
import { fileChangeResult } from "./file-change-result.js";
import { FileToolError, rethrowFsError } from "./file-tool-error.js";
import { runFileTool, throwIfStopped } from "./file-tool-run.js";
import { readWholeText, regularFile, writeAtomically } from "./text-file.js";
import { resolveInWorkspace } from "./workspace-path.js";

/** Largest old content read back to show the diff of an overwrite. */
const DIFF_MAX_OLD_BYTES = 8 * 1024 * 1024;

export const WriteFileArguments = z.strictObject({
  path: z.string().min(1).describe("The file to write, relative to the workspace (or absolute, inside it). Missing parent directories are created."),
  content: z.string().describe("The file's complete new content (UTF-8 text). It replaces everything the file held."),
});
export type WriteFileArguments = z.infer<typeof WriteFileArguments>;

export function createWriteFileTool(): Tool<WriteFileArguments> {
  return {
    name: "write_file",
    description:
      "Create a text file in the workspace, or replace an existing file's whole content. The write is atomic " +
      "and keeps the file's permissions. Returns a unified diff of the change. To change part of a file, prefer edit_file.",
    parameters: WriteFileArguments,
    annotations: { readOnlyHint: false, destructiveHint: true },
    source: "builtin",
    run: (args, context) =>
      runFileTool(context, { readOnly: false }, async (signal) => {
        const target = await resolveInWorkspace(context.cwd, args.path);
        let before: string | null | undefined = null;
        let mode: number | undefined;
        if (target.exists) {
          mode = (await regularFile(target.real, target.display)).mode;
          try {
            before = (await readWholeText(target.real, target.display, DIFF_MAX_OLD_BYTES, signal)).text;
          } catch (error) {
            if (!(error instanceof FileToolError)) throw error;
            before = undefined; // Binary or huge: it is replaced all the same, without a diff.
          }
          if (before === args.content) return { success: true, output: `${target.display} already has this content; nothing was written.` };
        } else {
          try {
            await mkdir(dirname(target.real), { recursive: true });
          } catch (error) {
            rethrowFsError(error, target.display);
          }
        }
        throwIfStopped(signal);
        await writeAtomically(target.real, target.display, args.content, mode, signal);
        const summary = target.exists ? `Wrote ${target.display}` : `Created ${target.display}`;
        return fileChangeResult(target.display, summary, before, args.content, signal);
      }),
  };
}
