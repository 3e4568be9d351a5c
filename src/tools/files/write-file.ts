/**
 * write_file: create a file or replace its whole content, atomically, keeping
 * an existing file's permissions; missing parent directories are created.
 */
import type { Tool } from "../tool.js";
import { builtinParameters } from "../tool-parameters.js";
import type { WriteFileArguments } from "./file-tool-arguments.js";
import { fileChangeResult, filePreview, problemPreview } from "./file-change-result.js";
import { FileToolError } from "./file-tool-error.js";
import { runFileTool, throwIfStopped } from "./file-tool-run.js";
import { readOpenText, writeAtomically } from "./text-file.js";
import { openWorkspaceFile, type OpenFileOptions } from "./workspace-open.js";
import { resolveInWorkspace } from "./workspace-path.js";
import { pathCall } from "../tool-display.js";

/** Largest old content read back to show the diff of an overwrite. */
const DIFF_MAX_OLD_BYTES = 8 * 1024 * 1024;

export function createWriteFileTool(options: OpenFileOptions): Tool<WriteFileArguments> {
  return {
    name: "write_file",
    description:
      "Create a text file in the workspace, or replace an existing file's whole content. The write is atomic " +
      "and keeps the file's permissions. Returns a unified diff of the change. To change part of a file, prefer edit_file.",
    parameters: builtinParameters("write_file", async () => (await import("./file-tool-arguments.js")).WriteFileArguments),
    annotations: { readOnlyHint: false, destructiveHint: true },
    source: "builtin",
    kind: "edit",
    title: "Write file",
    describeCall: (args, cwd) => pathCall("Write", args, cwd),
    run: (args, context) =>
      runFileTool(context, { readOnly: false }, async (signal) => {
        const write = await planWrite(args, context.cwd, options, signal);
        const { target } = write;
        if (write.before === args.content) return { success: true, output: `${target.display} already has this content; nothing was written.` };
        throwIfStopped(signal);
        // Missing parent directories are created there, each inside the verified one above it.
        await writeAtomically(target.root, target.real, target.display, args.content, write.mode, signal);
        const summary = target.exists ? `Wrote ${target.display}` : `Created ${target.display}`;
        return fileChangeResult(target.display, summary, write.before, args.content, signal);
      }),
    // The same reading as run, without the write; a write that changes nothing previews as no change.
    preview: async (args, context) => {
      try {
        const write = await planWrite(args, context.cwd, options, context.signal);
        if (write.before === args.content) return [];
        return [await filePreview(write.target.display, write.before, args.content, context.signal)];
      } catch (error) {
        if (error instanceof FileToolError) return [problemPreview(args.path, "modify", error.message)];
        throw error;
      }
    },
  };
}

/**
 * The file a write replaces: where it is, its content now (null: it does not
 * exist; undefined: binary or too large to compare) and its mode.
 */
async function planWrite(args: WriteFileArguments, cwd: string, options: OpenFileOptions, signal: AbortSignal) {
  const target = await resolveInWorkspace(cwd, args.path);
  let before: string | null | undefined = null;
  let mode: number | undefined;
  if (target.exists) {
    // Only a regular file (not hard-linked unless allowed) is replaced; its mode is kept.
    const file = await openWorkspaceFile(target.real, target.display, options);
    try {
      mode = file.mode;
      before = await readOpenText(file, target.display, DIFF_MAX_OLD_BYTES, signal);
    } catch (error) {
      if (!(error instanceof FileToolError)) throw error;
      before = undefined; // Binary or huge: it is replaced all the same, without a diff.
    } finally {
      await file.close();
    }
  }
  return { target, before, mode };
}
