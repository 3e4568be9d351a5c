/**
 * edit_file: replace an exact string in a file — the old_string/new_string
 * edit that coding agents use. The string must occur exactly once (or every
 * occurrence is replaced with replace_all), so an edit never lands somewhere
 * the model did not mean.
 */
import { setImmediate } from "node:timers/promises";
import type { Tool } from "../tool.js";
import { builtinParameters } from "../tool-parameters.js";
import type { EditFileArguments } from "./file-tool-arguments.js";
import { fileChangeResult, filePreview, problemPreview } from "./file-change-result.js";
import { FileToolError } from "./file-tool-error.js";
import { runFileTool, throwIfStopped } from "./file-tool-run.js";
import { readWholeText, writeAtomically } from "./text-file.js";
import type { OpenFileOptions } from "./workspace-open.js";
import { resolveInWorkspace } from "./workspace-path.js";
import { pathCall } from "../tool-display.js";

/** Largest file edit_file rewrites: the whole file is held in memory. */
export const EDIT_MAX_BYTES = 8 * 1024 * 1024;

export function createEditFileTool(options: OpenFileOptions): Tool<EditFileArguments> {
  return {
    name: "edit_file",
    description:
      "Edit a text file in the workspace by replacing an exact string: old_string must match the file's text exactly " +
      "(read the file first) and occur once, or set replace_all. The write is atomic; returns a unified diff of the change. " +
      "Use write_file to create a file.",
    parameters: builtinParameters("edit_file", async () => (await import("./file-tool-arguments.js")).EditFileArguments),
    // It changes files, but only the text it names.
    annotations: { readOnlyHint: false, destructiveHint: false },
    source: "builtin",
    kind: "edit",
    title: "Edit file",
    describeCall: (args, cwd) => pathCall("Edit", args, cwd),
    run: (args, context) =>
      runFileTool(context, { readOnly: false }, async (signal) => {
        const edit = await planEdit(args, context.cwd, options, signal);
        throwIfStopped(signal);
        await writeAtomically(edit.target.root, edit.target.real, edit.target.display, edit.after, edit.mode, signal);
        const summary = `Edited ${edit.target.display}: replaced ${edit.count} occurrence${edit.count === 1 ? "" : "s"}`;
        return fileChangeResult(edit.target.display, summary, edit.text, edit.after, signal);
      }),
    // The same plan as run, without the write: a call that would fail says why.
    preview: async (args, context) => {
      try {
        const edit = await planEdit(args, context.cwd, options, context.signal);
        return [await filePreview(edit.target.display, edit.text, edit.after, context.signal)];
      } catch (error) {
        if (error instanceof FileToolError) return [problemPreview(args.path, "modify", error.message)];
        throw error;
      }
    },
  };
}

/**
 * What an edit would do: the file's text now, its text after, how many
 * occurrences are replaced. Throws FileToolError when the edit cannot be
 * made (missing file, old_string missing or not unique), as run reports it.
 */
async function planEdit(args: EditFileArguments, cwd: string, options: OpenFileOptions, signal: AbortSignal) {
  const target = await resolveInWorkspace(cwd, args.path);
  if (!target.exists) throw new FileToolError(`"${target.display}" does not exist; use write_file to create it`);
  if (args.old_string === args.new_string) throw new FileToolError("old_string and new_string are the same; there is nothing to change");
  const { text, mode } = await readWholeText(target.real, target.display, EDIT_MAX_BYTES, signal, options);
  const { oldString, newString, count } = locate(text, args.old_string, args.new_string);
  if (count === 0) {
    throw new FileToolError(
      `old_string was not found in ${target.display}; it must match the file exactly, whitespace and indentation included (read the file to copy it)`,
    );
  }
  if (count > 1 && args.replace_all !== true) {
    throw new FileToolError(
      `old_string occurs ${count} times in ${target.display}; include more surrounding text to make it unique, or set replace_all to replace every occurrence`,
    );
  }
  // Reading, searching and replacing are each a pass over up to 8 MiB on the main thread: in turns
  // of their own, so that other clients are served between them.
  await setImmediate();
  // split/join, not String.replace: "$&" and friends in new_string stay literal.
  const after = text.split(oldString).join(newString);
  return { target, text, mode, after, count };
}

/**
 * Where old_string occurs. Models write "\n" line breaks; in a CRLF file the
 * strings are tried with "\r\n" as well, so the edit keeps the file's line ends.
 */
function locate(text: string, oldString: string, newString: string): { oldString: string; newString: string; count: number } {
  const count = occurrences(text, oldString);
  if (count > 0 || !text.includes("\r\n") || !oldString.includes("\n") || oldString.includes("\r")) {
    return { oldString, newString, count };
  }
  const crlf = (s: string) => s.replace(/\r?\n/g, "\r\n");
  return { oldString: crlf(oldString), newString: crlf(newString), count: occurrences(text, crlf(oldString)) };
}

function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}
